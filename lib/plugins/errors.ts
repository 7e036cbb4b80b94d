import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { detail, MESSAGES } from '../errors.ts'
import { betweenRequests, type Connection } from '../http/connection.ts'
import { writeRawAnswer } from '../http/raw-answer.ts'
import { pathEnd } from '../http/target.ts'
import { InvalidFilters } from '../reference/filters.ts'
import { toJson } from '../reference/json.ts'
import { pathPattern } from '../routes/endpoint.ts'
import { setHeaders } from './headers.ts'

const SERVER_ERROR = detail(MESSAGES.serverError)
const NOT_FOUND = detail(MESSAGES.notFound)
const MOVED = detail(MESSAGES.moved)

/**
 * Every error answer is the reference's JSON; nothing reaches a client as HTML or a stack trace.
 * A route or a check throws one of @fastify/sensible's `httpErrors` with a text of the catalogue
 * (errors.ts). A request no route takes gets a 301 when the path of a GET route lacks only its
 * trailing slash, as the reference's APPEND_SLASH does, or a 404.
 */
const errors: FastifyPluginCallback = (app, _options, done) => {
  // The slashed GET routes, as registered: a path that is one of them without its slash is redirected.
  const slashed: RegExp[] = []
  app.addHook('onRoute', ({ method, url }) => {
    if ([method].flat().includes('GET') && url.endsWith('/') && url.length > 1) slashed.push(pathPattern(url.slice(0, -1)))
  })

  app.setErrorHandler<FastifyError | InvalidFilters>((error, request, reply) => {
    if (error instanceof InvalidFilters) return reply.code(400).send(Buffer.from(toJson(error.fields)))
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'request failed')
    reply.code(status).send(status === 500 ? SERVER_ERROR : detail(error.message))
  })

  app.setNotFoundHandler((request, reply) => {
    const end = pathEnd(request.url)
    const path = request.url.slice(0, end)
    if (!slashed.some((pattern) => pattern.test(path))) return reply.code(404).send(NOT_FOUND)
    reply.header('location', request.baseUrl + path + '/' + request.url.slice(end))
    reply.code(301).send(MOVED)
  })
  done()
}

export default fastifyPlugin(errors, { name: 'errors', dependencies: ['hosts'] })

/** Fastify's frameworkErrors: a path with malformed percent-encoding, where the reference finds no object. */
export function badUrlHandler (_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // Answered before routing, so without the onSend hooks.
  setHeaders(request, reply)
  reply.code(404).send(NOT_FOUND)
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, MESSAGES.headersTooLarge],
  ERR_HTTP_REQUEST_TIMEOUT: [408, MESSAGES.requestTimeout],
}

/**
 * Fastify's clientErrorHandler, the server's one `clientError` listener: what Node cannot parse
 * never becomes a request, and gets the same JSON, written to the socket, which then closes.
 */
export function clientErrorHandler (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // Never err.rawPacket: the bytes read, which may hold a token, and other requests.
  this.log.debug({ code: error.code, message: error.message }, 'client error')
  // Only between requests can what the error was found in be a request of its own; otherwise it
  // may be the rest of an answered request, and an answer to it would be taken for the next
  // request's (behind a proxy, another client's): the connection closes without one.
  if (betweenRequests(socket as Connection)) {
    const [status, message] = CLIENT_ERRORS[String(error.code)] ?? [400, MESSAGES.badRequest]
    writeRawAnswer(socket, status, message)
  }
  socket.destroy()
}
