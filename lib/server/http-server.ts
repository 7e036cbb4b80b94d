import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { Logger } from 'pino'
import { http } from '../builtins.ts'
import type { Config } from '../config.ts'
import { answerClientError, refuseConnect, refuseExpectation } from '../api/errors.ts'
import { toOriginForm } from '../replay/target.ts'
import { betweenRequests, type Connection } from './connection.ts'
import { IdleConnections } from './idle-connections.ts'

type Limits = Pick<Config, 'keepAliveTimeoutMs' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'maxHeaderSize'>

/**
 * Answers that may wait behind the one being written: on one connection, and in the whole process.
 * A client that sends more without reading its answers has its connection closed: Node parses a
 * whole read before it stops reading, and each waiting answer holds a request and a response in
 * memory; the process's bound keeps a crowd of such clients within the deployment's heap
 * (docs/architecture.md, Connections).
 */
export const MAX_WAITING_ANSWERS = 16
export const MAX_WAITING_ANSWERS_IN_PROCESS = 4096

/** Answers waiting in this process, on every connection. */
let waitingInProcess = 0

/** On a connection: how many answers wait behind the one being written. */
const WAITING = Symbol('waiting answers')
type Counted = Connection & { [WAITING]: number }

/**
 * Stops Node's parser at the request that would be one answer too many (on its connection, or in
 * the process): the handler's -1 is the parser's "callback error", which ends the read there (no
 * request or response is made for the rest of it) and comes back as a client error, which closes
 * the connection. `parser` and `onIncoming` are node:http's own, not its API (test/server/hostile-clients.test.ts
 * fails without them; it runs on every Node version the project supports).
 */
function boundWaitingAnswers (socket: Counted): void {
  socket[WAITING] = 0
  const parser = socket.parser
  const onIncoming = parser?.onIncoming
  /* c8 ignore next: node:http has had both since its first release; without them, no bound */
  if (onIncoming === undefined) return
  parser!.onIncoming = (request, keepAlive) => socket._httpMessage == null ||
    (socket[WAITING] < MAX_WAITING_ANSWERS && waitingInProcess < MAX_WAITING_ANSWERS_IN_PROCESS)
    ? onIncoming(request, keepAlive)
    : -1
}

/**
 * The service's one node:http server, with the configured limits. Every answer is JSON, also
 * for what Node would otherwise answer, or drop, by itself, before there is a request for
 * Fastify to answer. A request reaches `listener` with its target in origin form (target.ts).
 */
export function createHttpServer (limits: Limits, logger: Logger, listener: RequestListener): Server {
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
    countWaiting(request, response)
    if (request.url!.charCodeAt(0) !== 0x2f) toOriginForm(request)
    listener(request, response)
  })
  // Idle keep-alive connections are closed by the sweeps of IdleConnections, not by node:http's timer.
  const idle = new IdleConnections(limits.keepAliveTimeoutMs + KEEP_ALIVE_GRACE_MS)
  server.keepAliveTimeout = 0
  // A client that half-closes after its request (an HTTP/1.0 probe, a script) gets its answer
  // also when it is not written at once (an answer that waits for a promise), and then the
  // connection closes; node:http would otherwise drop the answer. Node's own switch,
  // set on the server as Node's tests do: it is not an option of createServer.
  ;(server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Connection) => {
    // Never err.rawPacket: the bytes read, which may hold a token, and other requests.
    logger.debug({ code: error.code, message: error.message }, 'client error')
    // Only between requests can what the error was found in be a request of its own; otherwise it
    // may be the rest of an answered request, and an answer to it would be taken for the next
    // request's (behind a proxy, another client's): the connection closes without one.
    if (betweenRequests(socket)) answerClientError(error, socket)
    socket.destroy()
  })
  server.on('connection', (socket: Counted) => {
    boundWaitingAnswers(socket)
    idle.opened(socket)
    socket.once('close', () => {
      closed(socket)
      idle.closed(socket)
    })
  })
  server.on('connect', refuseConnect)
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
    refuseExpectation(request, response)
  })
  return server
}

/** What Node's keep-alive timer gives a client beyond the timeout it advertises, so that the client closes first. */
const KEEP_ALIVE_GRACE_MS = 1000

/**
 * The `Keep-Alive: timeout=…` header of an answer that keeps its connection, as node:http writes
 * it from the server's keepAliveTimeout: `_keepAliveTimeout` is node:http's own field, not its
 * API (test/server/limits.test.ts fails without it).
 */
function advertiseKeepAlive (response: ServerResponse, timeoutMs: number): void {
  (response as ServerResponse & { _keepAliveTimeout: number })._keepAliveTimeout = timeoutMs
}

/** Counts the answers waiting on the request's connection (see MAX_WAITING_ANSWERS). */
function countWaiting (request: IncomingMessage, response: ServerResponse): void {
  const socket = request.socket as Counted
  // Node gives a response its socket at once when no answer is being written before it.
  if (response.socket !== null) {
    socket[WAITING] = 0
    return
  }
  socket[WAITING]++
  waitingInProcess++
  response.once('socket', advanced)
}

/** A waiting answer's turn has come: one fewer waits. */
function advanced (socket: Counted): void {
  socket[WAITING]--
  waitingInProcess--
}

/** A closed connection's answers wait no more (Node drops them, and gives them no turn). */
function closed (socket: Counted): void {
  waitingInProcess -= socket[WAITING]
  socket[WAITING] = 0
}
