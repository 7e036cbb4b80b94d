import * as Type from '@sinclair/typebox'
import type { FastifyPluginCallback } from 'fastify'
import { Detail, FieldErrors, ObjectType, ObjectTypePage } from '../../schemas/api.ts'
import { MESSAGES } from '../errors.ts'
import type { ItemsJson } from '../inventory/items-json.ts'
import { filterOf } from '../reference/filters.ts'
import { toJson } from '../reference/json.ts'
import { ordered, orderingOf } from '../reference/ordering.ts'
import { pageLinks, pageRange, pageWindow } from '../reference/pagination.ts'
import { encodeQuery, parseInteger } from '../reference/query.ts'
import { API_FORMATS, described, endpointRoutes, responses, SECURITY, type Endpoint, type EndpointOptions, type RenderContext } from './endpoint.ts'
import { API_PATHS } from '../paths.ts'

const DESCRIPTION = 'Read-only list of object types.'
const FILTER_REFUSED = Type.Union([FieldErrors, Detail], { description: 'A Host that ALLOWED_HOSTS refuses, or a filter value that is not valid (`{"id":["Enter a number."]}`).' })

// Item urls carry the request's `format`: what follows an item's id, by that value.
const ITEM_TAILS = new Map([['', '/?format='], ['api', '/?format=api'], ['json', '/?format=json']])

/**
 * What follows an item's id in its url (for a `format` its endpoint answers). A path's `.json`
 * suffix wins over the `format` parameter, which item urls keep all the same (as the
 * reference's reverse() keeps it).
 */
function itemTailOf (suffix: string | undefined, format: string | undefined): string {
  if (suffix === undefined) return format === undefined ? '/' : ITEM_TAILS.get(format)!
  return format === undefined ? '.json' : '.json?' + encodeQuery(new Map([['format', [format]]]))
}

/** The JSON of the catalog's items as this request's urls make them. */
function itemsJson ({ catalog, base, params, format }: RenderContext): ItemsJson {
  return catalog.itemsJson(urlPrefixOf(base), itemTailOf(params.format, format))
}

let lastBase: string | undefined
let lastPrefix = ''
/** Items' url prefix for a base URL: the same string while the base URL is, by which the catalog knows its last rendering at once. */
function urlPrefixOf (base: string): string {
  if (base !== lastBase) {
    lastBase = base
    lastPrefix = base + API_PATHS.objectTypes
  }
  return lastPrefix
}
const PAGE_END = ']}'

export const OBJECT_TYPE_LIST: Endpoint = {
  path: API_PATHS.objectTypes,
  formatSuffix: true,
  formats: API_FORMATS,
  name: 'Object Type List',
  description: DESCRIPTION,
  schema: () => ({
    operationId: 'extras_object_types_list',
    description: 'Read-only list of ObjectTypes.',
    tags: ['extras'],
    // Read the reference's way, not validated: an unusable limit or offset falls back (pagination.ts).
    querystring: Type.Object({
      app_label: Type.Optional(Type.String()),
      id: Type.Optional(Type.Integer()),
      limit: Type.Optional(Type.Integer({ description: 'Number of results to return per page.' })),
      model: Type.Optional(Type.String()),
      offset: Type.Optional(Type.Integer({ description: 'The initial index from which to return the results.' })),
      ordering: Type.Optional(Type.String({ description: 'Which field to use when ordering the results.' })),
      q: Type.Optional(Type.String({ description: 'Search' })),
    }),
    security: SECURITY,
    response: responses(Type.Ref(ObjectTypePage), { 400: FILTER_REFUSED }),
  }),
  render (context) {
    const { base, path, query, catalog, sizes, pageBuffer } = context
    const items = ordered(catalog.select(filterOf(query)), orderingOf(query))
    const window = pageWindow(query, sizes)
    const [start, end] = pageRange(window, items.length)
    const [next, previous] = pageLinks(base + path, query, window, items.length)
    const head = `{"count":${items.length},"next":${toJson(next)},"previous":${toJson(previous)},"results":[`
    return { body: itemsJson(context).page(head, items, start, end, PAGE_END, pageBuffer) }
  },
}

export const OBJECT_TYPE: Endpoint = {
  path: API_PATHS.objectType,
  formatSuffix: true,
  formats: API_FORMATS,
  name: 'Object Type Instance',
  description: DESCRIPTION,
  schema: () => ({
    operationId: 'extras_object_types_retrieve',
    description: 'Read-only list of ObjectTypes.',
    tags: ['extras'],
    // Text that is no integer is a plain 404, as in the reference (see render).
    params: Type.Object({ id: Type.Integer({ description: 'A unique integer value identifying this object type.' }) }),
    security: SECURITY,
    response: responses(Type.Ref(ObjectType), {
      400: FILTER_REFUSED,
      404: described(Detail, 'An unknown `format`, no object type with this id, or one the filters leave out.'),
    }),
  }),
  render (context) {
    const { app, catalog, query, params } = context
    // As in the reference, the list's filters apply here too, and are checked first.
    const filter = filterOf(query)
    // The reference looks the id up as an integer: text that is none is a plain 404.
    const id = parseInteger(params.id!)
    if (id === undefined) throw app.httpErrors.notFound(MESSAGES.notFound)
    const item = catalog.item(String(id))
    if (item === undefined || !catalog.matches(item, filter)) throw app.httpErrors.notFound(MESSAGES.noObjectType)
    return { body: itemsJson(context).item(item) }
  },
}

/** GET /api/extras/object-types/ and /api/extras/object-types/{id}/: pages and items sliced from pre-rendered JSON. */
const objectTypes: FastifyPluginCallback<EndpointOptions> = (app, options, done) => {
  endpointRoutes(app, OBJECT_TYPE_LIST, options)
  endpointRoutes(app, OBJECT_TYPE, options)
  done()
}

export default objectTypes
