import { METHODS } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { API_HEADERS, sendJson } from '../http.ts'
import { toJson } from '../json.ts'
import { lastValue, type QueryParams } from '../query.ts'

/** Every method Node parses except CONNECT, which never reaches a request handler. */
export const ROUTED_METHODS = METHODS.filter((method) => method !== 'CONNECT')

/** A request as the endpoints see it: the query parsed the reference's way (see app.ts). */
export type ApiRequest<Params = unknown> = FastifyRequest<{ Querystring: QueryParams, Params: Params }>

export interface Endpoint<Params> {
  url: string
  /** Name and description of the OPTIONS answer. */
  name: string
  description: string
  /** Answers GET and HEAD; `formatSuffix` is what item URLs carry of the request's `format`. */
  get: (request: ApiRequest<Params>, reply: FastifyReply, formatSuffix: string) => void
}

// `format` selects a renderer in the reference: `api` (the browsable one, whose body here is
// the same JSON) and `json`; an empty value selects none. Any other value is a 404 there.
const FORMAT_SUFFIXES = new Map([['', '?format='], ['api', '?format=api'], ['json', '?format=json']])

/**
 * Registers one read-only API path for every method, so that the order of checks is
 * the reference's: Host (a hook), then `format`, then the method.
 */
export function addEndpoint<Params = unknown> (app: FastifyInstance, endpoint: Endpoint<Params>): void {
  const optionsBody = Buffer.from(toJson({
    name: endpoint.name,
    description: endpoint.description,
    renders: ['application/json'],
    parses: ['application/json'],
  }))
  app.route<{ Querystring: QueryParams, Params: Params }>({
    method: ROUTED_METHODS,
    url: endpoint.url,
    handler (request, reply) {
      reply.headers(API_HEADERS)
      const format = lastValue(request.query, 'format')
      const formatSuffix = format === undefined ? '' : FORMAT_SUFFIXES.get(format)
      if (formatSuffix === undefined) throw app.httpErrors.notFound('Not found.')
      switch (request.method) {
        case 'GET':
        case 'HEAD':
          // Node leaves the body out of a HEAD answer but keeps its Content-Length.
          endpoint.get(request, reply, formatSuffix)
          break
        case 'OPTIONS':
          sendJson(reply, 200, optionsBody)
          break
        default:
          throw app.httpErrors.methodNotAllowed(`Method "${request.method}" not allowed.`)
      }
    },
  })
}
