import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { http } from '../builtins.ts'
import { InvalidFilters } from '../reference/filters.ts'
import { toJson } from '../reference/json.ts'
import { detail, MESSAGES } from './messages.ts'
import { JSON_HEADERS, setHeaders } from './headers.ts'

/**
 * An error a route or a check throws, answered by the error handler below as `{"detail":…}`.
 * (Not @fastify/sensible's: see docs/architecture.md, Schemas.)
 */
class ApiError extends Error {
  readonly statusCode: number

  constructor (statusCode: number, message: string) {
    super(message)
    this.statusCode = statusCode
    this.name = 'ApiError'
  }
}

/** The errors of the catalogue. */
export const errors = {
  notFound: () => new ApiError(404, MESSAGES.notFound),
  noObjectType: () => new ApiError(404, MESSAGES.noObjectType),
  forbidden: (message: string) => new ApiError(403, message),
  methodNotAllowed: (method: string) => new ApiError(405, MESSAGES.methodNotAllowed(method)),
}

const SERVER_ERROR = detail(MESSAGES.serverError)
const NOT_FOUND = detail(MESSAGES.notFound)
const MOVED = detail(MESSAGES.moved)
const INVALID_HOST = detail(MESSAGES.invalidHost)

/** Sends a JSON body rendered ahead of time (a Buffer skips Fastify's serializer); the onSend hook adds the headers (headers.ts). */
export function sendJson (reply: FastifyReply, status: number, body: Buffer): void {
  reply.code(status).send(body)
}

/** The 400 of a Host that ALLOWED_HOSTS (or the reference's host syntax) refuses. */
export function refuseHost (reply: FastifyReply): void {
  sendJson(reply, 400, INVALID_HOST)
}

/**
 * Every error answer is the reference's JSON; nothing reaches a client as HTML or a stack
 * trace. A request no route takes gets a 301 for a known path that lacks its trailing slash
 * (`redirect`, see routes.ts), or a 404.
 */
export function installErrorAnswers (app: FastifyInstance, redirect: (path: string) => boolean): void {
  app.setErrorHandler<FastifyError | InvalidFilters>((error, request, reply) => {
    if (error instanceof InvalidFilters) return sendJson(reply, 400, Buffer.from(toJson(error.fields)))
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'request failed')
    sendJson(reply, status, status === 500 ? SERVER_ERROR : detail(error.message))
  })

  app.setNotFoundHandler((request, reply) => {
    const queryStart = request.url.indexOf('?')
    const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart)
    if (!redirect(path)) return sendJson(reply, 404, NOT_FOUND)
    reply.header('location', request.baseUrl + path + '/' + (queryStart === -1 ? '' : request.url.slice(queryStart)))
    sendJson(reply, 301, MOVED)
  })
}

/** A path with malformed percent-encoding: the reference finds no object there. */
export function badUrlHandler (_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  setHeaders(request, reply)
  sendJson(reply, 404, NOT_FOUND)
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, MESSAGES.headersTooLarge],
  ERR_HTTP_REQUEST_TIMEOUT: [408, MESSAGES.requestTimeout],
}

/** Requests Node cannot parse never become requests; they get the same JSON, written to the socket, which the caller closes. */
export function answerClientError (error: NodeJS.ErrnoException, socket: Duplex): void {
  const [status, message] = CLIENT_ERRORS[String(error.code)] ?? [400, MESSAGES.badRequest]
  answerAndClose(socket, status, message)
}

/** CONNECT never reaches a request handler in Node: the reference's 405, and the connection closes once it is written. */
export function refuseConnect (socket: Socket): void {
  answerAndClose(socket, 405, MESSAGES.methodNotAllowed('CONNECT'))
  socket.destroySoon()
}

/** An Expect header other than 100-continue: Node's 417, in JSON like every answer. */
export function refuseExpectation (_request: IncomingMessage, response: ServerResponse): void {
  const body = detail(MESSAGES.expectationFailed)
  response.writeHead(417, { ...JSON_HEADERS, 'content-length': body.length }).end(body)
}

/** Writes a JSON error straight to a socket, for what never becomes a request. */
function answerAndClose (socket: Duplex, status: number, message: string): void {
  // A reset connection is no longer writable: there is no one to answer.
  if (!socket.writable) return
  const body = detail(message)
  socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: ${JSON_HEADERS['content-type']}\r\n` +
    `Vary: ${JSON_HEADERS.vary}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`)
  socket.write(body)
}
