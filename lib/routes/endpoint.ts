import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onRequestHookHandler } from 'fastify'
import { Description, Detail } from '../../schemas/api.ts'
import { MESSAGES } from '../errors.ts'
import { TagSeed } from '../http/entity-tag.ts'
import { ifNoneMatches } from '../http/headers.ts'
import { pathEnd } from '../http/target.ts'
import type { Catalog, StatusKeys } from '../inventory/catalog.ts'
import { PageBuffer } from '../inventory/page-buffer.ts'
import type { Generation, Served } from '../inventory/served.ts'
import { toJson } from '../reference/json.ts'
import type { PageSizes } from '../reference/pagination.ts'
import { lastValue, type QueryParams } from '../reference/query.ts'
import type { ApiTokens } from '../tokens.ts'
import { OTHER_METHODS } from './methods.ts'

/**
 * An endpoint of the API, declared once by its route module: its path, its schemas (the OpenAPI
 * document is made from them, and the tests check every answer against them), what its OPTIONS
 * answer says, and its renderer. `endpointRoutes` makes its routes.
 */
export interface Endpoint {
  /** The route's path, trailing slash included (`:name` for a parameter). */
  readonly path: string
  /** Also served with a `.json` format suffix in place of the trailing slash (with or without one after it). */
  readonly formatSuffix?: true
  /** The values of `format` it answers (an empty one is none); any other is a 404. */
  readonly formats: ReadonlySet<string>
  /** Its 200 is not JSON: the renderer says what it is (Rendered.contentType). */
  readonly ownContentType?: true
  /** What the OPTIONS answer calls it. */
  readonly name: string
  readonly description: string
  /** Its GET's schemas, with what the OpenAPI document says of it (`hide` leaves it out), for the status's key names served. */
  readonly schema: (statusKeys: StatusKeys) => EndpointSchema
  /** The 200 to GET and HEAD, or a thrown error of @fastify/sensible's (errors.ts holds the texts). */
  readonly render: (context: RenderContext) => Rendered | Promise<Rendered>
}

export type EndpointSchema = FastifySchema & { operationId?: string, tags?: string[], description?: string, hide?: true, security?: unknown }

/** What a renderer may depend on: nothing else, since its answer is replayed by Host and URL. */
export interface RenderContext {
  /** Scheme and host (or PUBLIC_URL) that absolute URLs start with. */
  readonly base: string
  /** The path as requested (a `.json` suffix included): links lead back to it. */
  readonly path: string
  readonly query: QueryParams
  /** The path's parameters, by the names in its route. */
  readonly params: Readonly<Record<string, string | undefined>>
  /** The query's `format` (its last value), if any. */
  readonly format: string | undefined
  readonly catalog: Catalog
  readonly sizes: PageSizes
  readonly statusKeys: StatusKeys
  /** Where a long page is written: the endpoint hands it back once the answer is sent. */
  readonly pageBuffer: PageBuffer
  /** The app the endpoint is registered on: its httpErrors and its OpenAPI document. */
  readonly app: FastifyInstance
}

/**
 * A 200's body and, when it is not JSON, its Content-Type. A body longer than Node writes from its
 * stack is bytes (inventory/items-json.ts), which the heap does not hold while a client leaves it unread.
 */
export interface Rendered {
  readonly body: Buffer | string
  readonly contentType?: string
}

/** What the endpoints need to answer. */
export interface EndpointOptions {
  served: Served
  sizes: PageSizes
  /** The status's key names served, which its schema follows. */
  statusKeys: StatusKeys
  /** A refused token (or none, where one is required) gets a 403. */
  tokens: ApiTokens
}

/** The methods of every API endpoint: its Allow header, on every answer of it, errors included. */
const ENDPOINT_METHODS = 'GET, HEAD, OPTIONS'

/** `format` selects a renderer in the reference: `api` (the browsable one, whose body here is the same JSON) and `json`. */
export const API_FORMATS: ReadonlySet<string> = new Set(['', 'api', 'json'])

/** What an endpoint's checks refuse with, whatever the method. */
const REFUSED = { 400: Detail, 403: Detail, 404: Detail } as const

/** OPTIONS describes every endpoint; the other methods but GET and HEAD are a 405. Neither is in the document, as in the reference's. */
export const OPTIONS_SCHEMA = { hide: true, response: { 200: Description, ...REFUSED } } as const
export const OTHER_METHODS_SCHEMA = { hide: true, response: { ...REFUSED, 405: Detail } } as const

/** A schema with what it means for one status (the document's response description). */
export const described = (schema: TSchema, description: string): TSchema => ({ ...schema, description })

/** What any GET of an endpoint may answer besides its 200: the 304, a refused Host, token or `format`. */
export function responses (ok: TSchema | { content: Record<string, { schema: TSchema }> }, more: Partial<Record<400 | 404, TSchema>> = {}) {
  return {
    200: ok,
    304: { type: 'null', description: 'If-None-Match names the current tag: the same headers, no body.' },
    400: more[400] ?? described(Detail, 'A Host that ALLOWED_HOSTS refuses.'),
    403: described(Detail, 'A token that is not known, or (with LOGIN_REQUIRED) none.'),
    404: more[404] ?? described(Detail, 'An unknown `format` (or format suffix).'),
  }
}

/** As the reference's document says: a session or a token. Here a token (there are no sessions), required with LOGIN_REQUIRED. */
export const SECURITY = [{ cookieAuth: [] }, { tokenAuth: [] }]

/** A request as the endpoints see it: the query parsed the reference's way (service.ts). */
type ApiRequest = FastifyRequest<{ Querystring: QueryParams, Params: Record<string, string> }>

/** A concrete path's matcher for a route's path: `:name` is one path segment. */
export function pathPattern (route: string): RegExp {
  return new RegExp('^' + route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+') + '$')
}

/** The routes of an endpoint: its path and, with `formatSuffix`, `<path>.<format>` with or without a slash. */
export function routeUrls ({ path, formatSuffix }: Endpoint): string[] {
  return formatSuffix === true ? [path, `${path.slice(0, -1)}.:format`, `${path.slice(0, -1)}.:format/`] : [path]
}

/** Clients may keep an answer but must ask again each time (If-None-Match makes that cheap). */
const CACHE_CONTROL = 'no-cache'

/**
 * Registers an endpoint at each of its routes: GET (and Fastify's HEAD) answer its 200, OPTIONS
 * describes it, any other method is a 405. Each checks `format`, then the token, in a hook of its
 * own (so that the order of checks is the reference's: Host in the hosts plugin, `format`, token,
 * method). Every 200 carries its tag (http/entity-tag.ts): of what the body depends on, the profile,
 * the settings, the base URL and the request URL, so that equal inputs on any replica get the same
 * tag and other bytes another. Every 200 is marked with its generation for the replay plugin.
 */
export function endpointRoutes (app: FastifyInstance, endpoint: Endpoint, options: EndpointOptions): void {
  // What a body depends on besides the profile and the request: part of every tag (the key names
  // only when they are not the default).
  const settings = `${options.sizes.paginateCount} ${options.sizes.maxPageSize}${options.statusKeys === 'neutral' ? '' : ` ${options.statusKeys}`}`
  const seeds = new WeakMap<Catalog, TagSeed>()
  const seedOf = (catalog: Catalog) => {
    let seed = seeds.get(catalog)
    if (seed === undefined) seeds.set(catalog, seed = new TagSeed(`${catalog.digest}\n${settings}`))
    return seed
  }
  const onRequest = checks(app, endpoint, options.tokens)
  const pageBuffer = new PageBuffer()
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
      handler: (request: ApiRequest, reply) => {
        const generation = options.served.current
        const { catalog } = generation
        const { baseUrl: base, query, params } = request
        const rendered = endpoint.render({ base, path: request.url.slice(0, pathEnd(request.url)), query, params, format: lastValue(query, 'format'), catalog, sizes: options.sizes, statusKeys: options.statusKeys, pageBuffer, app })
        const etag = seedOf(catalog).tag(base, request.url)
        if (!(rendered instanceof Promise)) return send(request, reply, generation, etag, rendered, pageBuffer)
        return rendered.then((later) => send(request, reply, generation, etag, later, pageBuffer))
      },
    })
    app.route({ method: 'OPTIONS', url, schema: OPTIONS_SCHEMA, config, onRequest, handler: (_request, reply) => reply.send(optionsBody) })
    app.route({
      method: OTHER_METHODS,
      url,
      schema: OTHER_METHODS_SCHEMA,
      config,
      onRequest,
      handler: (request) => { throw app.httpErrors.methodNotAllowed(MESSAGES.methodNotAllowed(request.method)) },
    })
  }
}

/** Sends a rendered 200, or its 304 when If-None-Match names its tag; then hands the page's memory back. */
function send (request: FastifyRequest, reply: FastifyReply, generation: Generation, etag: string, { body, contentType }: Rendered, pageBuffer: PageBuffer): FastifyReply {
  if (contentType !== undefined) reply.header('content-type', contentType)
  reply.cacheControl(CACHE_CONTROL)
  reply.header('etag', etag)
  if (ifNoneMatches(request.raw, etag)) {
    reply.code(304).send()
  } else {
    request.generation = generation
    reply.send(body)
  }
  pageBuffer.handBack(body, reply.raw)
  return reply
}

/** The endpoint's checks of a request, before its method's: `format` (404), then the token (403). */
function checks (app: FastifyInstance, { formats }: Endpoint, tokens: ApiTokens): onRequestHookHandler {
  return (request, _reply, done) => {
    const { query, params } = request as ApiRequest
    // A path's `.json` suffix wins over the `format` parameter.
    const known = params.format === undefined ? formats.has(lastValue(query, 'format') ?? '') : params.format === 'json'
    if (!known) return done(app.httpErrors.notFound(MESSAGES.notFound))
    const refusal = tokens.refusal(request.raw)
    done(refusal === undefined ? undefined : app.httpErrors.forbidden(refusal))
  }
}
