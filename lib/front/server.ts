import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { http } from '../builtins.ts'
import type { Config } from '../config.ts'
import { detail, MESSAGES } from '../errors.ts'
import type { Connection } from '../http/connection.ts'
import { JSON_HEADERS } from '../http/headers.ts'
import { writeRawAnswer } from '../http/raw-answer.ts'
import { toOriginForm } from '../http/target.ts'
import { ConnectionTimeouts } from './connection-timeouts.ts'
import { afterEarlierAnswers, counted, pipelined, released } from './pipelining.ts'

type Limits = Pick<Config, 'keepAliveTimeoutMs' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'sendTimeoutMs' | 'maxHeaderSize' | 'maxConnections'>

/**
 * The service's one node:http server, with the configured limits. Every answer is JSON, also
 * for what Node would otherwise answer, or drop, by itself, before there is a request for
 * Fastify to answer: Fastify's clientErrorHandler answers what Node cannot parse (plugins/errors.ts),
 * this server CONNECT, an unmet Expect and a connection beyond MAX_CONNECTIONS. A request reaches
 * `listener` with its target in origin form (http/target.ts).
 */
export function createHttpServer (limits: Limits, listener: RequestListener): Server {
  const server = http.createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    maxHeaderSize: limits.maxHeaderSize,
    // Node checks both timeouts on this interval (30 s by default), so a slow client is
    // cut off at most a second after its time is up.
    connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    // Node's own 400 for an HTTP/1.1 request without Host has no body: the Host check answers it in JSON.
    requireHostHeader: false,
  }, (request, response) => {
    advertiseKeepAlive(response, limits.keepAliveTimeoutMs)
    idle.active(request.socket)
    counted(request, response)
    if (request.url!.charCodeAt(0) !== 0x2f) toOriginForm(request)
    listener(request, response)
  })
  // Idle keep-alive connections, and those whose client reads nothing, are closed by sweeps, not by node:http's timers.
  const idle = new ConnectionTimeouts(limits.keepAliveTimeoutMs + KEEP_ALIVE_GRACE_MS, limits.sendTimeoutMs)
  server.keepAliveTimeout = 0
  // A client that half-closes after its request (an HTTP/1.0 probe, a script) gets its answer
  // also when it is not written at once (an answer that waits for a promise, not an injected
  // delay: lib/plugins/faults.ts), and then the connection closes; node:http would otherwise drop
  // the answer. Node's own switch, set on the server as Node's tests do: it is not an option of
  // createServer.
  ;(server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  // A connection beyond MAX_CONNECTIONS never reaches node:http: it gets a 503 and is closed.
  const [serve] = server.listeners('connection') as Array<(this: Server, socket: Connection) => void>
  server.removeAllListeners('connection')
  let open = 0
  server.on('connection', (socket: Connection) => {
    if (open >= limits.maxConnections) {
      server.emit('drop')
      return refuse(socket)
    }
    open++
    serve!.call(server, socket)
    pipelined(socket)
    idle.opened(socket)
    socket.once('close', () => {
      open--
      released(socket)
      idle.closed(socket)
    })
  })
  // CONNECT never becomes a request: its 405 comes in its turn, after the answers read before it, and the connection closes.
  server.on('connect', (request: IncomingMessage) => afterEarlierAnswers(request.socket, () => {
    writeRawAnswer(request.socket, 405, MESSAGES.methodNotAllowed('CONNECT'))
    request.socket.destroySoon()
  }))
  // Node writes a 100 Continue into the queue of an answer that waits behind another, and then puts
  // the answer's header block before it when its body is a Buffer: the client would read the 100
  // inside the answer. A waiting request gets its final answer alone, after which node:http closes
  // the connection, as it does after any final answer to an Expect without a 100.
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (response.socket !== null) response.writeContinue()
    server.emit('request', request, response)
  })
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    advertiseKeepAlive(response, limits.keepAliveTimeoutMs)
    counted(request, response)
    // An Expect header other than 100-continue: Node's 417, in JSON like every answer.
    response.writeHead(417, { ...JSON_HEADERS, 'content-length': EXPECTATION_FAILED.length }).end(EXPECTATION_FAILED)
  })
  return server
}

const EXPECTATION_FAILED = detail(MESSAGES.expectationFailed)

/** A connection the process has no room for: its 503 is written at once, and the connection closed once it is sent. */
function refuse (socket: Socket): void {
  // node:http's error handler is not on it: a client that resets before its 503 is written must not take the process.
  socket.on('error', ignore)
  writeRawAnswer(socket, 503, MESSAGES.serviceUnavailable)
  socket.destroySoon()
}

/* c8 ignore next: only a reset that comes before the 503 is written calls it */
function ignore (): void {}

/** What Node's keep-alive timer gives a client beyond the timeout it advertises, so that the client closes first. */
const KEEP_ALIVE_GRACE_MS = 1000

/**
 * The `Keep-Alive: timeout=…` header of an answer that keeps its connection, as node:http writes
 * it from the server's keepAliveTimeout: `_keepAliveTimeout` is node:http's own field, not its
 * API (test/front/limits.test.ts fails without it).
 */
function advertiseKeepAlive (response: ServerResponse, timeoutMs: number): void {
  (response as ServerResponse & { _keepAliveTimeout: number })._keepAliveTimeout = timeoutMs
}
