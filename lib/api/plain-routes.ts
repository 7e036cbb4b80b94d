import type { QueryParams } from '../reference/query.ts'

/** A route template and what a request found through it gets: the path's params and the parsed query. */
export interface Found<Route> {
  readonly route: Route
  readonly params: Readonly<Record<string, string>>
  readonly query: QueryParams
}

/**
 * A param as this matches it: no dot, so that `:id/` and `:id.:format` cannot both match, and
 * within find-my-way's limit of 100 characters, beyond which it finds no route.
 */
const PARAM = '([^/.?#%]{1,100})'

const NO_PARAMS = Object.freeze({})

/**
 * The endpoints' route templates, matched as the fast path needs them. Its answers must be
 * Fastify's, whose router (find-my-way) reads a path in its own ways: it decodes escapes, splits
 * `:id.:format` at the last dot, takes absolute URLs and empty params. This matches only plain
 * paths (from `/` to `?`, no `%` or `#`, params without a dot), on which the two agree
 * (test/plain-routes.test.ts holds them to it), and leaves every other path to Fastify
 * (undefined). Loading find-my-way took 8.5 ms of a start (docs/performance.md); Fastify loads
 * it only when it is built.
 */
export class PlainRoutes<Route> {
  readonly #exact = new Map<string, Route>()
  readonly #patterns: Array<{ pattern: RegExp, names: string[], route: Route }> = []
  readonly #parseQuery: (query: string) => QueryParams

  /** `parseQuery`: the reading of the query that Fastify's router is given. */
  constructor (routes: ReadonlyArray<readonly [template: string, route: Route]>, parseQuery: (query: string) => QueryParams) {
    this.#parseQuery = parseQuery
    for (const [template, route] of routes) {
      const names = [...template.matchAll(/:(\w+)/g)].map((match) => match[1]!)
      if (names.length === 0) this.#exact.set(template, route)
      else {
        const source = template.split(/:\w+/).map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(PARAM)
        this.#patterns.push({ pattern: new RegExp(`^${source}$`), names, route })
      }
    }
  }

  /** The route of a request URL, or undefined when it has none or is not plain. */
  find (url: string): Found<Route> | undefined {
    const queryAt = url.indexOf('?')
    const path = queryAt === -1 ? url : url.slice(0, queryAt)
    if (path.charCodeAt(0) !== 0x2f || path.includes('%') || path.includes('#')) return undefined
    const exact = this.#exact.get(path)
    const found = exact === undefined ? this.#matched(path) : { route: exact, params: NO_PARAMS }
    if (found === undefined) return undefined
    return { route: found.route, params: found.params, query: this.#parseQuery(queryAt === -1 ? '' : url.slice(queryAt + 1)) }
  }

  #matched (path: string): Omit<Found<Route>, 'query'> | undefined {
    for (const { pattern, names, route } of this.#patterns) {
      const match = pattern.exec(path)
      if (match === null) continue
      const params: Record<string, string> = {}
      for (let i = 0; i < names.length; i++) params[names[i]!] = match[i + 1]!
      return { route, params }
    }
    return undefined
  }
}
