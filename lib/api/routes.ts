import { METHODS } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { answer, represent } from '../answer/answer.ts'
import { cacheKeyOf } from '../answer/cache-key.ts'
import type { Served } from '../inventory/served.ts'
import type { PageSizes } from '../reference/pagination.ts'
import { toJson } from '../reference/json.ts'
import { lastValue, type QueryParams } from '../reference/query.ts'
import { ENDPOINTS, type Endpoint } from './endpoints.ts'
import { errors, sendJson } from './errors.ts'
import { ENDPOINT_HEADERS } from './headers.ts'
import type { ApiTokens } from './tokens.ts'

/** Every method Node parses except CONNECT, which never reaches a request handler. */
export const ROUTED_METHODS = METHODS.filter((method) => method !== 'CONNECT')
const OTHER_METHODS = ROUTED_METHODS.filter((method) => !['GET', 'HEAD', 'OPTIONS'].includes(method))

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
const FORMAT_SUFFIXES = new Map([['', '?format='], ['api', '?format=api'], ['json', '?format=json']])

/** A concrete path's matcher for a route template: `:name` is one path segment. */
export function pathPattern (template: string): RegExp {
  return new RegExp('^' + template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+') + '$')
}

const UNSLASHED = ENDPOINTS.map((endpoint) => pathPattern(endpoint.path.slice(0, -1)))

/** A known endpoint's path without its trailing slash: the reference redirects it to the slashed one. */
export const lacksSlash = (path: string): boolean => UNSLASHED.some((pattern) => pattern.test(path))

/** Registers every endpoint of the table for every method. */
export function registerEndpoints (app: FastifyInstance, access: ApiAccess, sizes: PageSizes): void {
  for (const endpoint of ENDPOINTS) registerEndpoint(app, access, sizes, endpoint)
}

/**
 * One endpoint: GET and HEAD render (or take from the cache) and answer through answer();
 * OPTIONS describes it; other methods are a 405. Each checks `format`, then the token, so
 * the order of checks is the reference's: Host (a hook), `format`, token, method.
 */
function registerEndpoint (app: FastifyInstance, access: ApiAccess, sizes: PageSizes, endpoint: Endpoint): void {
  const { served, trustsProxies, tokens } = access
  type Respond = (request: ApiRequest, reply: FastifyReply, formatSuffix: string) => void
  const checked = (respond: Respond) => (request: ApiRequest, reply: FastifyReply) => {
    const format = lastValue(request.query, 'format')
    const formatSuffix = format === undefined ? '' : FORMAT_SUFFIXES.get(format)
    if (formatSuffix === undefined) throw errors.notFound()
    const refusal = tokens?.refusal(request.raw)
    if (refusal !== undefined) throw errors.forbidden(refusal)
    respond(request, reply, formatSuffix)
  }
  const config = { headers: ENDPOINT_HEADERS }
  const optionsBody = Buffer.from(toJson({
    name: endpoint.name,
    description: endpoint.description,
    renders: ['application/json'],
    parses: ['application/json'],
  }))

  app.route({
    method: ['GET', 'HEAD'],
    url: endpoint.path,
    config,
    handler: checked((request, reply, formatSuffix) => {
      const { catalog, cache } = served.current
      const key = cacheKeyOf(request.raw, trustsProxies)
      let representation = key === undefined ? undefined : cache.get(key)
      if (representation === undefined) {
        const body = endpoint.render({ base: request.baseUrl, query: request.query, params: request.params, formatSuffix, catalog, sizes })
        representation = represent(endpoint.path, body, ENDPOINT_HEADERS)
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
    url: endpoint.path,
    config,
    handler: checked((_request, reply) => sendJson(reply, 200, optionsBody)),
  })
  app.route({
    method: OTHER_METHODS,
    url: endpoint.path,
    config,
    handler: checked((request) => {
      throw errors.methodNotAllowed(request.method)
    }),
  })
}
