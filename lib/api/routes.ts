import { hash } from 'node:crypto'
import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, onSendHookHandler, RouteOptions } from 'fastify'
import { http } from '../builtins.ts'
import type { Catalog, StatusKeys } from '../inventory/catalog.ts'
import type { Generation, Served } from '../inventory/served.ts'
import { toJson } from '../reference/json.ts'
import type { PageSizes } from '../reference/pagination.ts'
import { lastValue, type QueryParams } from '../reference/query.ts'
import { ifNoneMatches } from '../http/headers.ts'
import type { Replays } from '../replay/replays.ts'
import { ENDPOINTS, OPTIONS_SCHEMA, OTHER_METHODS_SCHEMA, type Documents, type Endpoint, type Rendered } from './endpoints.ts'
import { errors, sendJson } from './errors.ts'
import { ENDPOINT_METHODS } from './headers.ts'
import type { ApiTokens } from '../tokens.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The generation a 200 was rendered from; null for any other answer (nothing to keep). */
    generation: Generation | null
  }
  interface FastifyContextConfig {
    /** false: the route's answers are never replayed, so that its hooks see every request (docs/architecture.md). */
    replay?: false
  }
}

/** Every method Node parses except CONNECT, which never reaches a request handler. */
export const ROUTED_METHODS = http.METHODS.filter((method) => method !== 'CONNECT')
/** The methods an endpoint answers with a 405 (after the checks of its other methods). */
export const OTHER_METHODS = ROUTED_METHODS.filter((method) => !['GET', 'HEAD', 'OPTIONS'].includes(method))

/** What the endpoints need besides the table. */
export interface EndpointOptions {
  served: Served
  sizes: PageSizes
  /** The status's key names served, which its schema follows. */
  statusKeys: StatusKeys
  /** A refused token (or none, where one is required) gets a 403. */
  tokens: ApiTokens
  /** Where 200s are kept to be replayed; undefined when nothing is (ACCESS_LOG). */
  replays: Replays | undefined
}

/** A request as the endpoints see it: the query parsed the reference's way (ROUTER_OPTIONS in app.ts). */
type ApiRequest = FastifyRequest<{ Querystring: QueryParams, Params: Record<string, string> }>

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

/** The path of a request URL as the router reads it: it ends at `?`, `;` or `#`. */
const PATH = /^[^?;#]*/

/**
 * Registers every endpoint of the table, at each of its route templates: GET (and Fastify's
 * HEAD) answer its 200, OPTIONS describes it, any other method is a 405. Each checks `format`,
 * then the token, in a hook of its own (so that the order of checks is the reference's: Host
 * in the app's hook, `format`, token, method), and every 200 is offered to the replays.
 */
export function registerEndpoints (app: FastifyInstance, options: EndpointOptions): void {
  app.decorateRequest('generation', null)
  const documented = documentedRoutes(app)
  // What a body depends on besides the profile and the request: part of every tag. (The key names
  // only when they are not the default, so that the default's tags are what they always were.)
  const settings = `${options.sizes.paginateCount} ${options.sizes.maxPageSize}${options.statusKeys === 'neutral' ? '' : ` ${options.statusKeys}`}`
  const keep = keepHook(options.replays)
  for (const endpoint of ENDPOINTS) {
    const onRequest = checks(endpoint, options.tokens)
    const config = { allow: ENDPOINT_METHODS }
    const optionsBody = Buffer.from(toJson({
      name: endpoint.name,
      description: endpoint.description,
      renders: ['application/json'],
      parses: ['application/json'],
    }))
    const declared = endpoint.schema(options.statusKeys)
    for (const url of routeUrls(endpoint)) {
      // The suffixed routes are the same operation: the OpenAPI document leaves them out, as the reference's does.
      const schema = url === endpoint.path ? declared : { ...declared, hide: true as const }
      app.route({
        method: 'GET',
        url,
        schema,
        config: endpoint.ownContentType === true ? { ...config, ownContentType: true } : config,
        onRequest,
        onSend: keep,
        handler: (request: ApiRequest, reply) => {
          const generation = options.served.current
          const { catalog } = generation
          const { baseUrl: base, query, params } = request
          const rendered = endpoint.render({ base, path: PATH.exec(request.url)![0], query, params, format: lastValue(query, 'format'), catalog, sizes: options.sizes, statusKeys: options.statusKeys, documented })
          const etag = etagOf(catalog.digest, settings, base, request.url)
          if (!(rendered instanceof Promise)) return send(request, reply, generation, etag, rendered)
          return rendered.then((later) => send(request, reply, generation, etag, later))
        },
      })
      app.route({ method: 'OPTIONS', url, schema: OPTIONS_SCHEMA, config, onRequest, handler: (_request, reply) => sendJson(reply, 200, optionsBody) })
      app.route({
        method: OTHER_METHODS,
        url,
        schema: OTHER_METHODS_SCHEMA,
        config,
        onRequest,
        handler: (request) => { throw errors.methodNotAllowed(request.method) },
      })
    }
  }
}

/**
 * The strong tag of what a request is answered with: a digest of all the body depends on (the
 * profile, the settings, the base URL, the request URL), so equal inputs on any replica get
 * the same tag and other bytes another; cheaper than hashing every body it names.
 */
function etagOf (catalog: string, settings: string, base: string, url: string): string {
  return `"${hash('sha1', `${catalog}\n${settings}\n${base}\n${url}`, 'base64url')}"`
}

/** Clients may keep an answer but must ask again each time (If-None-Match makes that cheap). */
const CACHE_CONTROL = 'no-cache'

/** Sends a rendered 200, or its 304 when If-None-Match names its tag. */
function send (request: FastifyRequest, reply: FastifyReply, generation: Generation, etag: string, { body, contentType }: Rendered): FastifyReply {
  if (contentType !== undefined) reply.header('content-type', contentType)
  reply.header('cache-control', CACHE_CONTROL)
  reply.header('etag', etag)
  if (ifNoneMatches(request.raw, etag)) return reply.code(304).send()
  request.generation = generation
  return reply.send(body)
}

/** The endpoint's checks of a request, before its method's: `format` (404), then the token (403). */
function checks ({ formats }: Endpoint, tokens: ApiTokens): onRequestHookHandler {
  return (request, _reply, done) => {
    const { query, params } = request as ApiRequest
    // A path's `.json` suffix wins over the `format` parameter.
    const known = params.format === undefined ? formats.has(lastValue(query, 'format') ?? '') : params.format === 'json'
    if (!known) return done(errors.notFound())
    const refusal = tokens.refusal(request.raw)
    done(refusal === undefined ? undefined : errors.forbidden(refusal))
  }
}

/**
 * Offers each 200 to the replays, with its headers as every hook before this one set them: a
 * route's own onSend hooks run after the app's and the plugins', so this sees the answer whole.
 */
function keepHook (replays: Replays | undefined): onSendHookHandler {
  return (request, reply, payload, done) => {
    const { generation } = request
    // Every 200 of an endpoint is text or bytes; a plugin may have made it something else (a stream), which is not kept.
    if (replays !== undefined && generation !== null && reply.statusCode === 200 && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      const { config, url } = request.routeOptions
      if (config.replay !== false) replays.keep(request.raw, generation, url!, () => reply.getHeaders() as OutgoingHttpHeaders, payload)
    }
    done(null, payload)
  }
}

/**
 * The routes the OpenAPI document describes, as they are registered (their schemas, not hidden),
 * and the document made from them for a catalog (its version), when first asked for.
 */
function documentedRoutes (app: FastifyInstance): (catalog: Catalog) => Promise<Documents> {
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    if (route.schema !== undefined && (route.schema as { hide?: boolean }).hide !== true && route.method !== 'HEAD') routes.push(route)
  })
  const documents = new WeakMap<Catalog, Promise<Documents>>()
  return (catalog) => {
    let document = documents.get(catalog)
    if (document === undefined) {
      document = import('../openapi.ts').then(({ openApiDocuments }) => openApiDocuments(routes, catalog.profile.status['service-version']))
      documents.set(catalog, document)
    }
    return document
  }
}
