import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { answer, etagOf, represent } from '../answer/answer.ts'
import { cacheKeyOf } from '../answer/cache-key.ts'
import { http } from '../builtins.ts'
import type { Served } from '../inventory/served.ts'
import type { PageSizes } from '../reference/pagination.ts'
import { toJson } from '../reference/json.ts'
import { encodeQuery, lastValue, type QueryParams } from '../reference/query.ts'
import { ENDPOINTS, type Endpoint } from './endpoints.ts'
import { errors, sendJson } from './errors.ts'
import { apiHeaders, ENDPOINT_METHODS } from './headers.ts'
import type { OtherMethodHandler } from './other-methods.ts'
import type { ApiTokens } from './tokens.ts'

/** Every method Node parses except CONNECT, which never reaches a request handler. */
export const ROUTED_METHODS = http.METHODS.filter((method) => method !== 'CONNECT')

/** Who may see what: the served profile, whether forwarded headers can change an answer, the tokens. */
export interface ApiAccess {
  served: Served
  trustsProxies: boolean
  /** Set when LOGIN_REQUIRED: a request without one of these tokens gets a 403. */
  tokens?: ApiTokens
}

/** A request as the endpoints see it: the query parsed the reference's way (see app.ts). */
type ApiRequest = FastifyRequest<{ Querystring: QueryParams, Params: Record<string, string> }>

// `format` selects a renderer in the reference: `api` (the browsable one, whose body here is
// the same JSON) and `json`; an empty value selects none. Any other value is a 404 there.
// Item urls carry the request's `format`: what follows an item's id, by that value.
const ITEM_TAILS = new Map([['', '/?format='], ['api', '/?format=api'], ['json', '/?format=json']])

/**
 * What follows an item's id in its url, or undefined for a format the reference has no
 * renderer for. A path's `.json` suffix wins over the `format` parameter, which item urls
 * keep all the same (as the reference's reverse() keeps it).
 */
function itemTailOf (pathFormat: string | undefined, format: string | undefined): string | undefined {
  if (pathFormat === undefined) return format === undefined ? '/' : ITEM_TAILS.get(format)
  if (pathFormat !== 'json') return undefined
  return format === undefined ? '.json' : '.json?' + encodeQuery(new Map([['format', [format]]]))
}

/** A concrete path's matcher for a route template: `:name` is one path segment. */
export function pathPattern (template: string): RegExp {
  return new RegExp('^' + template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+') + '$')
}

const UNSLASHED = ENDPOINTS.map((endpoint) => pathPattern(endpoint.path.slice(0, -1)))

/** A known endpoint's path without its trailing slash: the reference redirects it to the slashed one. */
export const lacksSlash = (path: string): boolean => UNSLASHED.some((pattern) => pattern.test(path))

/** The route templates of an endpoint: its path and, with `formatSuffix`, `<path>.<format>` with or without a slash. */
export function routeUrls ({ path, formatSuffix }: Endpoint): string[] {
  return formatSuffix === true ? [path, `${path.slice(0, -1)}.:format`, `${path.slice(0, -1)}.:format/`] : [path]
}

/** Registers every endpoint of the table for every method. */
export function registerEndpoints (app: FastifyInstance, access: ApiAccess, sizes: PageSizes): void {
  for (const endpoint of ENDPOINTS) registerEndpoint(app, access, sizes, endpoint)
}

/**
 * One endpoint, at its path and (with `formatSuffix`) at `<path>.<format>` with or without a
 * trailing slash: GET and HEAD render (or take from the cache) and answer through answer();
 * OPTIONS describes it; other methods are a 405 (other-methods.ts). Each checks `format`, then
 * the token, so the order of checks is the reference's: Host (a hook), `format`, token, method.
 */
function registerEndpoint (app: FastifyInstance, access: ApiAccess, sizes: PageSizes, endpoint: Endpoint): void {
  const { served, trustsProxies, tokens } = access
  type Respond = (request: ApiRequest, reply: FastifyReply, itemTail: string) => void
  // A route's params and query are the request's; the other methods' come from their own lookup.
  const checked = (respond: Respond) => (request: ApiRequest, reply: FastifyReply, { params, query } = request) => {
    const itemTail = itemTailOf(params.format, lastValue(query, 'format'))
    if (itemTail === undefined) throw errors.notFound()
    const refusal = tokens?.refusal(request.raw)
    if (refusal !== undefined) throw errors.forbidden(refusal)
    respond(request, reply, itemTail)
  }
  const config = { allow: ENDPOINT_METHODS }
  // Part of every tag: the same URL gives other pages under other sizes.
  const pageSizes = `${sizes.paginateCount} ${sizes.maxPageSize}`
  const optionsBody = Buffer.from(toJson({
    name: endpoint.name,
    description: endpoint.description,
    renders: ['application/json'],
    parses: ['application/json'],
  }))

  for (const url of routeUrls(endpoint)) route(url)
  function route (url: string) {
    app.route({
      method: ['GET', 'HEAD'],
      url,
      config,
      handler: checked((request, reply, itemTail) => {
        const { catalog, cache } = served.current
        const key = cacheKeyOf(request.raw, trustsProxies)
        let representation = key === undefined ? undefined : cache.get(key)
        if (representation === undefined) {
          // The path the router matched: it ends where find-my-way's does, at `?`, `;` or `#`.
          const path = /^[^?;#]*/.exec(request.url)![0]
          const body = endpoint.render({ base: request.baseUrl, path, query: request.query, params: request.params, itemTail, catalog, sizes })
          representation = represent(url, body, etagOf(catalog.digest, pageSizes, request.baseUrl, request.url), apiHeaders(catalog))
          if (key !== undefined) cache.set(key, representation)
        }
        // Written by the fast path's function, not Fastify's send: the repeats of this request
        // are answered from the cache with the same bytes. onResponse hooks still run.
        reply.hijack()
        answer(request.raw, reply.raw, representation)
      }),
    })
    app.route({
      method: 'OPTIONS',
      url,
      config,
      handler: checked((_request, reply) => sendJson(reply, 200, optionsBody)),
    })
    // Typed for a route's request (its parsed query); the lookup brings the query it reads.
    app.otherMethods.add(url, config, checked((request) => {
      throw errors.methodNotAllowed(request.method)
    }) as OtherMethodHandler)
  }
}
