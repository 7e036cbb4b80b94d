import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Connection } from '../http/connection.ts'

/**
 * Back-pressure on pipelined requests. Node's parser reads a whole read of a socket (64 KiB, some
 * 1,700 small requests) before it looks at the socket's back-pressure, and every request it reads
 * holds a request and a response in memory until the client reads its answer. So the parser is
 * stopped after a request whose successor's answer would have to wait beyond a bound: when
 * MAX_WAITING_ANSWERS wait on the connection behind the answer being written, or, while the
 * process holds MAX_WAITING_ANSWERS_IN_PROCESS or MAX_WAITING_BYTES_IN_PROCESS, as soon as an
 * answer is being written on it. The bound is checked before the next request is read, so it holds
 * as written: a connection never holds a waiting answer the bound did not let in. The rest of the
 * read is held and the socket is read no further. Parsing goes on, from the held bytes, once the
 * connection's answers have advanced below the bound (or its last answer has been written): a client
 * that reads gets every answer, in order, at any depth; one that never reads holds at most the
 * answer being written, and its share of the bound, until the send timeout closes its connection
 * (connection-timeouts.ts).
 *
 * `parser`, its `onIncoming`, its execute callback, `_paused` and `_httpMessage` are node:http's
 * own, not its API (docs/architecture.md, Connections; test/front/hostile-clients.test.ts fails on a
 * Node version where they stop working, and runs on every version the project supports).
 */
export const MAX_WAITING_ANSWERS = 64
/** Parsing goes on once this few wait: in batches, not a request at a time. */
const RESUME_AT = MAX_WAITING_ANSWERS / 2
export const MAX_WAITING_ANSWERS_IN_PROCESS = 4096
export const MAX_WAITING_BYTES_IN_PROCESS = 8 * 1024 * 1024

/** llhttp's return that pauses it from a callback; execute() then answers an error of this code. */
const HPE_PAUSED = 21
const PAUSED = 'HPE_PAUSED'

/** Answers waiting in this process, on every connection, and the bytes they hold. */
let waitingInProcess = 0
let bytesInProcess = 0

/** On a connection: how many answers wait behind the one being written. */
const WAITING = Symbol('waiting answers')
/** On a connection: the bytes its waiting answers hold. */
const WAITING_BYTES = Symbol('bytes of waiting answers')
/** On a waiting answer: node:http's count of the bytes its connection's waiting answers hold. */
const PENDING = Symbol('node:http pending data')
/** On a connection: the last answer that waits, after which a CONNECT is answered. */
const LAST_WAITING = Symbol('last waiting answer')
/** On a connection: the bytes read and not yet parsed while parsing is stopped. */
const HELD = Symbol('held bytes')
/** On a connection: parsing goes on from its held bytes in the next tick. */
const RESUMING = Symbol('resuming')
/** On a connection: an Upgrade request Node answers as any other, after which llhttp stops parsing the read. */
const UPGRADE = Symbol('upgrade answered as a request')
/** On a connection: node:http's handler of what the parser made of a read. */
const ON_EXECUTE = Symbol('node:http execute handler')

type ParseError = Error & { code: string, bytesParsed: number }
/** A request as llhttp marks it: `upgrade` is its own field, which node:http clears when nothing takes the upgrade. */
type Read = IncomingMessage & { upgrade: boolean }
type Parser = {
  incoming?: IncomingMessage | null
  onIncoming: (request: Read, keepAlive: boolean) => number
  execute: (bytes: Buffer) => number | ParseError
  getCurrentBuffer: () => Buffer
  pause: () => void
  resume: () => void
  [execute: number]: (result: number | ParseError) => void
}
type Pipelined = Connection & {
  parser: Parser | null
  _paused: boolean
  [WAITING]: number
  [WAITING_BYTES]: number
  [LAST_WAITING]: ServerResponse | undefined
  [HELD]: Buffer | undefined
  [RESUMING]: boolean
  [UPGRADE]: IncomingMessage | undefined
  [ON_EXECUTE]: (result: number | ParseError) => void
}

const isPause = (result: number | ParseError): result is ParseError => typeof result !== 'number' && result.code === PAUSED

/** Whether the process holds as many waiting answers, or bytes of them, as it lets wait. */
const processFull = () => waitingInProcess >= MAX_WAITING_ANSWERS_IN_PROCESS || bytesInProcess >= MAX_WAITING_BYTES_IN_PROCESS

/** Whether the next request must not be read yet: its answer would wait beyond a bound. */
const mustWait = (socket: Pipelined) => socket[WAITING] >= MAX_WAITING_ANSWERS || (socket._httpMessage != null && processFull())

/** Puts a new connection's parser under back-pressure; called on 'connection', after node:http's own listener. */
export function pipelined (connection: Connection): void {
  const socket = connection as Pipelined
  socket[WAITING] = 0
  socket[WAITING_BYTES] = 0
  socket[LAST_WAITING] = undefined
  socket[HELD] = undefined
  socket[RESUMING] = false
  socket[UPGRADE] = undefined
  const parser = socket.parser
  /* c8 ignore next: node:http has had a parser on every connection since its first release */
  if (parser == null) return
  const onIncoming = parser.onIncoming
  const executed = (parser.constructor as unknown as { kOnExecute: number }).kOnExecute
  socket[ON_EXECUTE] = parser[executed]!
  parser.onIncoming = (request, keepAlive) => {
    // llhttp stops at the end of an Upgrade request; Node answers it as any other when nothing takes the upgrade.
    const upgrade = request.upgrade
    const next = onIncoming(request, keepAlive)
    if (request.upgrade) return next
    if (upgrade) socket[UPGRADE] = request
    return next === 0 && mustWait(socket) ? HPE_PAUSED : next
  }
  // What the parser made of a read of the socket.
  const read = () => parser.getCurrentBuffer()
  parser[executed] = (result) => { afterExecute(socket, result, read) }
}

/**
 * Takes what the parser made of `read` (a function: node:http's current buffer is a copy, made only
 * when needed): a pause holds the rest; after an Upgrade that Node answered, the rest is parsed on.
 * Anything else is node:http's. Whether parsing stopped is returned.
 */
function afterExecute (socket: Pipelined, result: number | ParseError, read: () => Buffer): boolean {
  if (isPause(result)) return hold(socket, read().subarray(result.bytesParsed))
  const upgrade = socket[UPGRADE]
  if (upgrade !== undefined && typeof result === 'number') {
    // llhttp stopped short of a read's end: at the Upgrade request's end, or, before it, in a pause
    // (with the Upgrade flag set, a pause is reported as the bytes parsed).
    const bytes = read()
    if (result < bytes.length) {
      if (!upgrade.complete) return hold(socket, bytes.subarray(result))
      socket[UPGRADE] = undefined
      return parse(socket, bytes.subarray(result))
    }
    if (upgrade.complete) socket[UPGRADE] = undefined
  }
  socket[ON_EXECUTE](result)
  return false
}

/** A closed connection's answers wait no more (Node drops them, and gives them no turn): nothing of it is counted again. */
export function released (connection: Connection): void {
  const socket = connection as Pipelined
  waitingInProcess -= socket[WAITING]
  bytesInProcess -= socket[WAITING_BYTES]
  socket[WAITING] = 0
  socket[WAITING_BYTES] = 0
  socket[HELD] = undefined
  socket[LAST_WAITING] = undefined
}

/** Parses bytes the socket read before; what the parser makes of them goes to node:http, which reads on unless it pauses. */
function parse (socket: Pipelined, bytes: Buffer): boolean {
  const parser = socket.parser!
  const result = parser.execute(bytes)
  if (afterExecute(socket, result, () => bytes)) return true
  if (!socket._paused && socket.parser === parser) socket.resume()
  return false
}

/**
 * Keeps what the parser has not read yet (a copy: the read it is part of may be far larger) and
 * reads the socket no further (node:http's pause: its `_paused` also keeps a request's body from
 * asking for more). With no answer waiting, parsing goes on once the answer being written is.
 */
function hold (socket: Pipelined, rest: Buffer): true {
  socket[HELD] = Buffer.from(rest)
  // node:http reads again when its own back-pressure eases, not knowing of the held bytes.
  socket.on('resume', keepHolding)
  socket._paused = true
  socket.pause()
  if (socket[WAITING] === 0) socket._httpMessage?.once('finish', () => resumeIfFree(socket))
  return true
}

function keepHolding (this: Pipelined): void {
  this._paused = true
  this.parser?.pause()
  this.pause()
}

/** Parsing goes on from the held bytes in the next tick, once no bound stops it. */
function resumeIfFree (socket: Pipelined): void {
  if (socket[HELD] === undefined || socket[RESUMING] || socket[WAITING] > RESUME_AT || mustWait(socket)) return
  socket[RESUMING] = true
  process.nextTick(resumeParsing, socket)
}

/** Parsing goes on from the held bytes. */
function resumeParsing (socket: Pipelined): void {
  socket[RESUMING] = false
  const held = socket[HELD]
  socket[HELD] = undefined
  /* c8 ignore next: the client left between its answer's turn and this tick: nothing more to read */
  if (held === undefined || socket.destroyed || socket.parser == null) return
  socket.off('resume', keepHolding)
  socket._paused = false
  socket.parser.resume()
  parse(socket, held)
}

type Waiting = ServerResponse & { _onPendingData: (bytes: number) => void, [PENDING]: (bytes: number) => void }

/** Counts the answer to a request read on a connection: it waits when another is being written (see MAX_WAITING_ANSWERS). */
export function counted (request: IncomingMessage, response: ServerResponse): void {
  // Node gives a response its socket at once when no answer is being written before it.
  if (response.socket !== null) return
  const socket = request.socket as Pipelined
  socket[WAITING]++
  socket[LAST_WAITING] = response
  waitingInProcess++
  const waiting = response as Waiting
  waiting[PENDING] = waiting._onPendingData
  waiting._onPendingData = pendingData
  response.once('socket', advanced)
}

/**
 * node:http counts what a waiting answer holds (and gives back when it is written): so does the
 * process, while the answer's connection is open (a closed one's were given back at its close).
 */
function pendingData (this: Waiting, bytes: number): void {
  const socket = this.req.socket as Pipelined
  if (!socket.destroyed) {
    socket[WAITING_BYTES] += bytes
    bytesInProcess += bytes
  }
  this[PENDING](bytes)
}

/** A waiting answer's turn has come: one fewer waits, and parsing goes on once few enough do. */
function advanced (socket: Pipelined): void {
  /* c8 ignore next: node:http gives a closed connection's answers no turn */
  if (socket.destroyed) return
  socket[WAITING]--
  waitingInProcess--
  if (socket[WAITING] > 0) return resumeIfFree(socket)
  socket[LAST_WAITING] = undefined
  // The last waiting answer is being written: parsing goes on once it has been, if not before.
  if (socket[HELD] !== undefined) socket._httpMessage?.once('finish', () => resumeIfFree(socket))
  resumeIfFree(socket)
}

/**
 * Runs `then` once every answer read before on the connection has been written (at once when none
 * is left): what never becomes a request (CONNECT) is answered in its turn.
 */
export function afterEarlierAnswers (connection: Connection, then: () => void): void {
  const socket = connection as Pipelined
  const last = socket[LAST_WAITING] ?? socket._httpMessage
  if (last == null || last.writableFinished) return then()
  last.once('finish', then)
}

/** The answers waiting in this process, and the bytes they hold. */
export function waitingInThisProcess (): { answers: number, bytes: number } {
  return { answers: waitingInProcess, bytes: bytesInProcess }
}
