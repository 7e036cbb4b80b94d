import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Connection } from '../http/connection.ts'

/**
 * Back-pressure on pipelined requests. Node's parser reads a whole read of a socket (64 KiB, some
 * 1,700 small requests) before it looks at the socket's back-pressure, and every request it reads
 * holds a request and a response in memory until the client reads its answer. So the parser is
 * stopped after the request that leaves MAX_WAITING_ANSWERS queued behind the answer being written
 * (or, while the process holds MAX_WAITING_ANSWERS_IN_PROCESS, after any request that waits): the
 * rest of the read is held and the socket is read no further. Parsing goes on, from the held bytes,
 * once the connection's answers have advanced below the bound: a client that reads gets every
 * answer, in order, at any depth; one that never reads holds a bounded number of answers until
 * the send timeout closes its connection (connection-timeouts.ts).
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

/** Whether the request just read must wait for its connection's answers to advance before the next is read. */
const mustWait = (socket: Pipelined) => socket[WAITING] >= MAX_WAITING_ANSWERS ||
  (socket[WAITING] > 0 && (waitingInProcess >= MAX_WAITING_ANSWERS_IN_PROCESS || bytesInProcess >= MAX_WAITING_BYTES_IN_PROCESS))

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
  const onExecute = socket[ON_EXECUTE] = parser[executed]!
  parser.onIncoming = (request, keepAlive) => {
    // llhttp stops at the end of an Upgrade request; Node answers it as any other when nothing takes the upgrade.
    const upgrade = request.upgrade
    const next = onIncoming(request, keepAlive)
    if (request.upgrade) return next
    if (upgrade) socket[UPGRADE] = request
    return next === 0 && mustWait(socket) ? HPE_PAUSED : next
  }
  // What the parser made of a read of the socket.
  parser[executed] = (result) => {
    if (isPause(result)) return hold(socket, parser.getCurrentBuffer().subarray(result.bytesParsed))
    const upgrade = socket[UPGRADE]
    if (upgrade !== undefined && upgrade.complete) {
      socket[UPGRADE] = undefined
      const read = parser.getCurrentBuffer()
      if (typeof result === 'number' && result < read.length) return parse(socket, read.subarray(result))
    }
    onExecute(result)
  }
}

/** A closed connection's answers wait no more (Node drops them, and gives them no turn). */
export function released (connection: Connection): void {
  const socket = connection as Pipelined
  waitingInProcess -= socket[WAITING]
  bytesInProcess -= socket[WAITING_BYTES]
  socket[WAITING] = 0
  socket[WAITING_BYTES] = 0
  socket[HELD] = undefined
}

/** Parses bytes the socket read before; what the parser makes of them goes to node:http, which reads on unless it pauses. */
function parse (socket: Pipelined, bytes: Buffer): void {
  const parser = socket.parser!
  const result = parser.execute(bytes)
  if (isPause(result)) return hold(socket, bytes.subarray(result.bytesParsed))
  socket[ON_EXECUTE](result)
  if (!socket._paused && socket.parser === parser) socket.resume()
}

/**
 * Keeps what the parser has not read yet and reads the socket no further (node:http's pause: its
 * `_paused` also keeps a request's body from asking for more).
 */
function hold (socket: Pipelined, rest: Buffer): void {
  socket[HELD] = rest
  // node:http reads again when its own back-pressure eases, not knowing of the held bytes.
  socket.on('resume', keepHolding)
  socket._paused = true
  socket.pause()
}

function keepHolding (this: Pipelined): void {
  this._paused = true
  this.parser?.pause()
  this.pause()
}

/** Parsing goes on from the held bytes. */
function resumeParsing (socket: Pipelined): void {
  socket[RESUMING] = false
  const held = socket[HELD]!
  socket[HELD] = undefined
  /* c8 ignore next: the client left between its answer's turn and this tick: nothing more to read */
  if (socket.destroyed || socket.parser == null) return
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

/** node:http counts what a waiting answer holds (and gives back when it is written): so does the process. */
function pendingData (this: Waiting, bytes: number): void {
  (this.req.socket as Pipelined)[WAITING_BYTES] += bytes
  bytesInProcess += bytes
  this[PENDING](bytes)
}

/** A waiting answer's turn has come: one fewer waits, and parsing goes on once few enough do. */
function advanced (socket: Pipelined): void {
  socket[WAITING]--
  waitingInProcess--
  if (socket[WAITING] === 0) socket[LAST_WAITING] = undefined
  if (socket[HELD] === undefined || socket[RESUMING] || socket[WAITING] > RESUME_AT || mustWait(socket)) return
  socket[RESUMING] = true
  process.nextTick(resumeParsing, socket)
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
