import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { answer } from '../answer/answer.ts'
import { cacheKeyOf } from '../answer/cache-key.ts'
import { http } from '../builtins.ts'
import { toJson } from '../reference/json.ts'
import type { Served } from '../inventory/served.ts'
import { lastValue, type QueryParams } from '../reference/query.ts'
import { ENDPOINTS, type Endpoint } from './endpoints.ts'
import { errors, sendJson } from './errors.ts'
import { ENDPOINT_METHODS } from './headers.ts'
import type { OtherMethodHandler } from './other-methods.ts'
import { itemTailOf, routeUrls, type EndpointRoute, type Renderings } from './renderings.ts'
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

/** A request as the endpoints see it: the query parsed the reference's way (ROUTER_OPTIONS in service.ts). */
type ApiRequest = FastifyRequest<{ Querystring: QueryParams, Params: Record<string, string> }>

/** A concrete path's matcher for a route template: `:name` is one path segment. */
export function pathPattern (template: string): RegExp {
  return new RegExp('^' + template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+') + '$')
}

const UNSLASHED = ENDPOINTS.map((endpoint) => pathPattern(endpoint.path.slice(0, -1)))

/** A known endpoint's path without its trailing slash: the reference redirects it to the slashed one. */
export const lacksSlash = (path: string): boolean => UNSLASHED.some((pattern) => pattern.test(path))

/** Registers every endpoint of the table for every method. */
export function registerEndpoints (app: FastifyInstance, access: ApiAccess, renderings: Renderings): void {
  for (const endpoint of ENDPOINTS) registerEndpoint(app, access, renderings, endpoint)
}

/**
 * One endpoint, at its path and (with `formatSuffix`) at `<path>.<format>` with or without a
 * trailing slash: GET and HEAD answer its representation (renderings.ts); OPTIONS describes
 * it; other methods are a 405 (other-methods.ts). Each checks `format`, then the token, so
 * the order of checks is the reference's: Host (a hook), `format`, token, method.
 */
function registerEndpoint (app: FastifyInstance, { trustsProxies, tokens }: ApiAccess, renderings: Renderings, endpoint: Endpoint): void {
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
  const optionsBody = Buffer.from(toJson({
    name: endpoint.name,
    description: endpoint.description,
    renders: ['application/json'],
    parses: ['application/json'],
  }))

  for (const url of routeUrls(endpoint)) route({ url, endpoint })
  function route (endpointRoute: EndpointRoute) {
    const { url } = endpointRoute
    app.route({
      method: ['GET', 'HEAD'],
      url,
      config,
      handler: checked((request, reply, itemTail) => {
        const { baseUrl: base, query, params } = request
        const representation = renderings.representation(endpointRoute, cacheKeyOf(request.raw, trustsProxies), { base, url: request.url, query, params, itemTail })
        // Written by the fast path's function, not Fastify's send: the same bytes whichever
        // answers. onResponse hooks still run.
        reply.hijack()
        answer(request.raw, reply.raw, representation, request.id)
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
