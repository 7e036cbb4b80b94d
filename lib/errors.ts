import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { detail, JSON_HEADERS, sendJson } from './http.ts'
import { toJson } from './json.ts'

/** An error about one query parameter, answered as `{"<field>":["<message>"]}` like the reference's filter errors. */
export interface FieldError extends FastifyError {
  field?: string
}

const SERVER_ERROR = detail('A server error occurred.')
const NOT_FOUND = detail('Not found.')
const MOVED = detail('Moved permanently.')

// A known path without its trailing slash: the reference redirects these to the slashed path.
const UNSLASHED_API_PATH = /^\/api\/(status|schema|extras\/object-types(\/[^/?]+)?)$/

/** Every error answer is the reference's JSON; nothing reaches a client as HTML or a stack trace. */
export function installErrorAnswers (app: FastifyInstance): void {
  app.setErrorHandler<FieldError>((error, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'request failed')
    const body = status === 500
      ? SERVER_ERROR
      : error.field === undefined ? detail(error.message) : Buffer.from(toJson({ [error.field]: [error.message] }))
    reply.header('vary', JSON_HEADERS.vary)
    sendJson(reply, status, body)
  })

  app.setNotFoundHandler((request, reply) => {
    reply.headers(JSON_HEADERS)
    const queryStart = request.url.indexOf('?')
    const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart)
    if (!UNSLASHED_API_PATH.test(path)) return sendJson(reply, 404, NOT_FOUND)
    reply.header('location', request.baseUrl + path + '/' + (queryStart === -1 ? '' : request.url.slice(queryStart)))
    sendJson(reply, 301, MOVED)
  })
}

/** A path with malformed percent-encoding: the reference finds no object there. */
export function badUrlHandler (_error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(JSON_HEADERS)
  sendJson(reply, 404, NOT_FOUND)
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout.'],
}

/** Requests Node cannot parse never reach Fastify's handlers; they get the same JSON shape. */
export function clientErrorHandler (this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  const [status, message] = CLIENT_ERRORS[String(error.code)] ?? [400, 'Bad request.']
  this.log.debug({ err: error }, 'client error')
  // A reset connection is no longer writable: there is no one to answer.
  if (socket.writable) {
    const body = detail(message)
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${JSON_HEADERS['content-type']}\r\n` +
      `Vary: ${JSON_HEADERS.vary}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`)
    socket.write(body)
  }
  socket.destroy(error)
}
