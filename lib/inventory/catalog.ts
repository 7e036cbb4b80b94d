import type { Profile } from '../../schemas/profile.ts'
import { digestOf } from '../http/entity-tag.ts'
import type { Filter } from '../reference/filters.ts'
import { compareCodePoints } from '../reference/query.ts'
import { orderedObject, toJson } from '../reference/json.ts'
import { ItemsJson, type RenderedItem } from './items-json.ts'

/**
 * How many renderings of the items (one per url prefix and item tail: a base URL and a
 * `format`) a catalog keeps. A deployment is reached under few names; a client that invents
 * Host or `format` values (where ALLOWED_HOSTS lets it) costs a rendering of the list per
 * request, never memory.
 */
const ITEMS_JSON_KEPT = 8

/** The API's version, as the reference derives it from the service's: its major.minor (`4.3.7` -> `4.3`). */
export const apiVersionOf = (serviceVersion: string): string => serviceVersion.split('.').slice(0, 2).join('.')

/** The status's key names: the specification's (`service-version`…) or the reference's own (`netbox-version`…). */
export type StatusKeys = 'neutral' | 'reference'

/** One object type with its JSON pre-rendered around its request-dependent part, the url. */
export interface CatalogItem extends RenderedItem {
  readonly appLabel: string
  readonly model: string
  /** Upper-cased for `q`, which matches like SQL's UPPER(column) LIKE UPPER(value). */
  readonly searchText: readonly [string, string]
}

/**
 * Everything a profile determines, computed once: the status body, the list in
 * its served order, and lookups by id and app label.
 */
export class Catalog {
  /** Names this catalog's data: equal catalogs (on any replica) have equal digests, others not. */
  readonly digest: string
  /** The status, under each naming of its keys. */
  readonly statusBodies: Readonly<Record<StatusKeys, Buffer>>
  readonly items: readonly CatalogItem[]
  readonly #byId: ReadonlyMap<string, CatalogItem>
  readonly #byAppLabel: ReadonlyMap<string, readonly CatalogItem[]>
  /** The most recently made renderings of the items, by url prefix and item tail. */
  readonly #itemsJson = new Map<string, ItemsJson>()
  /** The rendering asked for last, and by what: a load's requests mostly ask for one. */
  #last: { urlPrefix: string, itemTail: string, json: ItemsJson } | undefined

  readonly profile: Profile

  constructor (profile: Profile) {
    this.profile = profile
    this.digest = digestOf(JSON.stringify(profile))
    this.statusBodies = { neutral: Buffer.from(renderStatus(profile.status)), reference: Buffer.from(renderReferenceStatus(profile.status)) }
    this.items = profile.objectTypes
      .map((type) => ({ type, sortKey: type.display.toLowerCase() }))
      .sort((a, b) =>
        compareCodePoints(a.type.app_label, b.type.app_label) ||
        compareCodePoints(a.sortKey, b.sortKey) ||
        compareCodePoints(a.type.model, b.type.model))
      .map(({ type }, index) => ({
        index,
        id: type.id,
        appLabel: type.app_label,
        model: type.model,
        searchText: [type.app_label.toUpperCase(), type.model.toUpperCase()],
        head: `{"id":${type.id},"url":"`,
        tail: `","display":${toJson(type.display)},"app_label":${toJson(type.app_label)},"model":${toJson(type.model)}}`,
      }))
    this.#byId = new Map(this.items.map((item) => [String(item.id), item]))
    const byAppLabel = new Map<string, CatalogItem[]>()
    for (const item of this.items) {
      const group = byAppLabel.get(item.appLabel)
      if (group === undefined) byAppLabel.set(item.appLabel, [item])
      else group.push(item)
    }
    this.#byAppLabel = byAppLabel
  }

  /** The same profile with another count of running RQ workers (read live from Redis). */
  withWorkerCount (count: number): Catalog {
    return new Catalog({ ...this.profile, status: { ...this.profile.status, 'rq-workers-running': count } })
  }

  /** The item with this id (in canonical decimal form), if any. */
  item (id: string): CatalogItem | undefined {
    return this.#byId.get(id)
  }

  /** Every item's JSON with its url made of this prefix, its id and this tail (made when first asked for). */
  itemsJson (urlPrefix: string, itemTail: string): ItemsJson {
    const last = this.#last
    if (last !== undefined && last.urlPrefix === urlPrefix && last.itemTail === itemTail) return last.json
    const key = urlPrefix + ' ' + itemTail
    let json = this.#itemsJson.get(key)
    if (json === undefined) {
      if (this.#itemsJson.size === ITEMS_JSON_KEPT) this.#itemsJson.delete(this.#itemsJson.keys().next().value!)
      json = new ItemsJson(this.items, urlPrefix, itemTail)
      this.#itemsJson.set(key, json)
    }
    this.#last = { urlPrefix, itemTail, json }
    return json
  }

  /** The items that pass every given filter, in list order. */
  select (filter: Filter): readonly CatalogItem[] {
    const candidates = filter.appLabel === undefined ? this.items : this.#byAppLabel.get(filter.appLabel) ?? []
    if (filter.id === undefined && filter.model === undefined && filter.q === undefined) return candidates
    return candidates.filter((item) => this.matches(item, filter))
  }

  /** Whether an item passes every given filter. */
  matches (item: CatalogItem, { id, appLabel, model, q }: Filter): boolean {
    return (id === undefined || String(item.id) === id) &&
      (appLabel === undefined || item.appLabel === appLabel) &&
      (model === undefined || item.model === model) &&
      (q === undefined || item.searchText[0].includes(q) || item.searchText[1].includes(q))
  }
}

const byName = (a: readonly [string, string], b: readonly [string, string]) => compareCodePoints(a[0], b[0])
const versions = (map: Record<string, string>) =>
  orderedObject(Object.entries(map).sort(byName).map(([name, version]) => [name, toJson(version)] as const))

/** Plugins are installed apps too; the profile validator has made sure no name has two versions. */
const installedApps = (status: Profile['status']) => ({ ...status['installed-apps'], ...status.plugins })

function renderStatus (status: Profile['status']): string {
  return orderedObject([
    ['framework-version', toJson(status['framework-version'])],
    ['installed-apps', versions(installedApps(status))],
    ['plugins', versions(status.plugins)],
    ['rq-workers-running', toJson(status['rq-workers-running'])],
    ['runtime-version', toJson(status['runtime-version'])],
    ['service-version', toJson(status['service-version'])],
  ])
}

/** The reference's own status, its keys in the order its status view (4.3.7) writes them. */
function renderReferenceStatus (status: Profile['status']): string {
  return orderedObject([
    ['django-version', toJson(status['framework-version'])],
    ['installed-apps', versions(installedApps(status))],
    ['netbox-version', toJson(status['service-version'])],
    ['netbox-full-version', toJson(status['service-full-version'] ?? status['service-version'])],
    ['plugins', versions(status.plugins)],
    ['python-version', toJson(status['runtime-version'])],
    ['rq-workers-running', toJson(status['rq-workers-running'])],
  ])
}
