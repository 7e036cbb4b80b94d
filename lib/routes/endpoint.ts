import { METHODS } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { Description, Detail } from '../../schemas/api.ts'
import { answerOf, notModified } from '../conditional.ts'
import { API_HEADERS, headerOf, sendJson } from '../http.ts'
import { toJson } from '../json.ts'
import { lastValue, type QueryParams } from '../query.ts'
import { cacheKeyOf } from '../fast-path.ts'
import type { Catalog } from '../catalog.ts'
import type { Served } from '../served.ts'
import type { ApiTokens } from '../tokens.ts'

/** Every method Node parses except CONNECT, which never reaches a request handler. */
export const ROUTED_METHODS = METHODS.filter((method) => method !== 'CONNECT')
const WRITE_METHODS = ROUTED_METHODS.filter((method) => !['GET', 'HEAD', 'OPTIONS'].includes(method))

/** A request as the endpoints see it: the query parsed the reference's way (see app.ts). */
export type ApiRequest<Params = unknown> = FastifyRequest<{ Querystring: QueryParams, Params: Params }>

type Answer<Params> = (request: ApiRequest<Params>, reply: FastifyReply, formatSuffix: string) => void

export interface Endpoint<Params> {
  url: string
  /** Name and description of the OPTIONS answer. */
  name: string
  description: string
  /** The body of a 200 to GET, and those of its errors. */
  schemas: { 200: TSchema, '4xx'?: TSchema }
  /**
   * The body of a 200 to GET and HEAD, or a thrown HTTP error; `formatSuffix` is what item
   * URLs carry of the request's `format`. It depends on the base URL, the request URL and
   * the catalog only.
   */
  render: (request: ApiRequest<Params>, formatSuffix: string, catalog: Catalog) => Buffer
}

/** What every API path shares: what is served, whether forwarded headers can change it, the tokens. */
export interface ApiGuards {
  served: Served
  trustsProxies: boolean
  /** Set when LOGIN_REQUIRED: a request without one of these tokens gets a 403. */
  tokens?: ApiTokens
}

// `format` selects a renderer in the reference: `api` (the browsable one, whose body here is
// the same JSON) and `json`; an empty value selects none. Any other value is a 404 there.
const FORMAT_SUFFIXES = new Map([['', '?format='], ['api', '?format=api'], ['json', '?format=json']])

/**
 * Registers one read-only API path for every method. Each answer checks `format`, then the
 * token, so the order of checks is the reference's: Host (a hook), `format`, token, method.
 */
export function addEndpoint<Params = unknown> (app: FastifyInstance, guards: ApiGuards, endpoint: Endpoint<Params>): void {
  const { served, trustsProxies, tokens } = guards
  const checked = (answer: Answer<Params>) => (request: ApiRequest<Params>, reply: FastifyReply) => {
    reply.headers(API_HEADERS)
    const format = lastValue(request.query, 'format')
    const formatSuffix = format === undefined ? '' : FORMAT_SUFFIXES.get(format)
    if (formatSuffix === undefined) throw app.httpErrors.notFound('Not found.')
    const refusal = tokens?.refusal(request.headers.authorization)
    if (refusal !== undefined) throw app.httpErrors.forbidden(refusal)
    answer(request, reply, formatSuffix)
  }
  const errors = { '4xx': endpoint.schemas['4xx'] ?? Detail }
  const optionsBody = Buffer.from(toJson({
    name: endpoint.name,
    description: endpoint.description,
    renders: ['application/json'],
    parses: ['application/json'],
  }))

  // Node leaves the body out of a HEAD answer but keeps its Content-Length.
  app.route({
    method: ['GET', 'HEAD'],
    url: endpoint.url,
    schema: { response: { 200: endpoint.schemas[200], ...errors } },
    handler: checked((request, reply, formatSuffix) => {
      const { catalog, cache } = served.current
      const key = cacheKeyOf(request.raw, trustsProxies)
      let answer = key === undefined ? undefined : cache.get(key)
      if (answer === undefined) {
        answer = answerOf(endpoint.url, endpoint.render(request, formatSuffix, catalog))
        if (key !== undefined) cache.set(key, answer)
      }
      if (notModified(headerOf(request.raw, 'if-none-match'), answer.etag)) {
        reply.code(304).headers(answer.notModifiedHeaders).removeHeader('content-type').send()
        return
      }
      reply.headers(answer.headers)
      sendJson(reply, 200, answer.body)
    }),
  })
  app.route({
    method: 'OPTIONS',
    url: endpoint.url,
    schema: { response: { 200: Description, ...errors } },
    handler: checked((_request, reply) => sendJson(reply, 200, optionsBody)),
  })
  app.route({
    method: WRITE_METHODS,
    url: endpoint.url,
    schema: { response: errors },
    handler: checked((request) => {
      throw app.httpErrors.methodNotAllowed(`Method "${request.method}" not allowed.`)
    }),
  })
}
