import type { IncomingMessage } from 'node:http'
import { etagOf, represent, type Representation } from '../answer/answer.ts'
import type { CacheKey } from '../answer/cache-key.ts'
import type { Served } from '../inventory/served.ts'
import type { PageSizes } from '../reference/pagination.ts'
import { encodeQuery, lastValue, type QueryParams } from '../reference/query.ts'
import { ENDPOINTS, type Endpoint } from './endpoints.ts'
import { apiHeaders } from './headers.ts'
import { PlainRoutes } from './plain-routes.ts'
import type { BaseUrlOf } from './hosts.ts'

/** One route template of an endpoint (see routeUrls). */
export interface EndpointRoute {
  readonly url: string
  readonly endpoint: Endpoint
}

/** What a 200 of an endpoint depends on besides the profile and the page sizes. */
export interface Asked {
  /** Scheme and host (or PUBLIC_URL) that absolute URLs start with. */
  readonly base: string
  /** The request URL as sent: its path and query. */
  readonly url: string
  readonly query: QueryParams
  readonly params: Readonly<Record<string, string | undefined>>
  /** See itemTailOf. */
  readonly itemTail: string
}

// `format` selects a renderer in the reference: `api` (the browsable one, whose body here is
// the same JSON) and `json`; an empty value selects none. Any other value is a 404 there.
// Item urls carry the request's `format`: what follows an item's id, by that value.
const ITEM_TAILS = new Map([['', '/?format='], ['api', '/?format=api'], ['json', '/?format=json']])

/**
 * What follows an item's id in its url, or undefined for a format the reference has no
 * renderer for. A path's `.json` suffix wins over the `format` parameter, which item urls
 * keep all the same (as the reference's reverse() keeps it).
 */
export function itemTailOf (pathFormat: string | undefined, format: string | undefined): string | undefined {
  if (pathFormat === undefined) return format === undefined ? '/' : ITEM_TAILS.get(format)
  if (pathFormat !== 'json') return undefined
  return format === undefined ? '.json' : '.json?' + encodeQuery(new Map([['format', [format]]]))
}

/** The route templates of an endpoint: its path and, with `formatSuffix`, `<path>.<format>` with or without a slash. */
export function routeUrls ({ path, formatSuffix }: Endpoint): string[] {
  return formatSuffix === true ? [path, `${path.slice(0, -1)}.:format`, `${path.slice(0, -1)}.:format/`] : [path]
}

/** The path of a request URL as the router reads it: it ends at `?`, `;` or `#`. */
const PATH = /^[^?;#]*/

/**
 * The 200s of the endpoints' GET and HEAD: from the cache, or rendered and offered to it. One
 * pipeline for the fast path and Fastify's handlers alike, so that an answer is the same
 * bytes whoever renders it, and whether or not it was cached.
 */
export class Renderings {
  readonly #served: Served
  readonly #sizes: PageSizes
  /** Part of every tag: the same URL gives other pages under other sizes. */
  readonly #pageSizes: string
  readonly #baseUrl: BaseUrlOf
  /** Every endpoint's routes, for the plain paths that read here as Fastify's router reads them. */
  readonly #routes: PlainRoutes<EndpointRoute>

  /** `parseQuery`: the reading of a query that Fastify's router is given (service.ts). */
  constructor (served: Served, sizes: PageSizes, baseUrl: BaseUrlOf, parseQuery: (query: string) => QueryParams) {
    this.#served = served
    this.#sizes = sizes
    this.#pageSizes = `${sizes.paginateCount} ${sizes.maxPageSize}`
    this.#baseUrl = baseUrl
    this.#routes = new PlainRoutes(ENDPOINTS.flatMap((endpoint) => routeUrls(endpoint).map((url) => [url, { url, endpoint }] as const)), parseQuery)
  }

  /**
   * The representation of a request's 200: from the cache under `key` (undefined: not
   * cacheable), or rendered, which throws the error of the catalogue a renderer finds.
   */
  representation (route: EndpointRoute, key: CacheKey | undefined, asked: Asked): Representation {
    return (key === undefined ? undefined : this.#served.current.cache.get(key)) ?? this.#rendered(route, key, asked)
  }

  /** Renders a 200 the cache does not hold under `key`, and offers it to the cache. */
  #rendered ({ url, endpoint }: EndpointRoute, key: CacheKey | undefined, asked: Asked): Representation {
    const { catalog, cache } = this.#served.current
    const path = PATH.exec(asked.url)![0]
    const body = endpoint.render({ ...asked, path, catalog, sizes: this.#sizes })
    const representation = represent(url, body, etagOf(catalog.digest, this.#pageSizes, asked.base, asked.url), apiHeaders(catalog).endpoint)
    if (key !== undefined) cache.set(key, representation)
    return representation
  }

  /**
   * The fast path's miss: the 200 of a GET or HEAD whose cache key `key` the cache does not
   * hold (whose token has been checked), rendered as Fastify's handler would render it.
   * undefined for anything else (another path or one not plain, see plain-routes.ts, a refused
   * Host or `format`, a renderer's error): Fastify answers that.
   */
  miss (request: IncomingMessage, key: CacheKey): Representation | undefined {
    const url = request.url!
    const found = this.#routes.find(url)
    if (found === undefined) return undefined
    const { query } = found
    const itemTail = itemTailOf(found.params.format, lastValue(query, 'format'))
    // Without trusted forwarded headers (see cacheKeyOf) the protocol is the connection's: plain HTTP.
    const base = this.#baseUrl(key.host, 'http')
    if (itemTail === undefined || base === undefined) return undefined
    try {
      return this.#rendered(found.route, key, { base, url, query, params: found.params, itemTail })
    } catch {
      return undefined
    }
  }
}
