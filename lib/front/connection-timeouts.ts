import { betweenRequests, type Connection } from '../http/connection.ts'

/** On a connection: the last sweep after which it was active (it read a request, or an answer was being written). */
const ACTIVE_AFTER = Symbol('active after sweep')
/** On a connection: the bytes its client had taken when a sweep last saw it take more, and that sweep. */
const TAKEN = Symbol('bytes taken by the client')
const TAKEN_AT = Symbol('sweep that saw the client take bytes')
type Watched = Connection & { [ACTIVE_AFTER]: number, [TAKEN]: number, [TAKEN_AT]: number }

/**
 * Closes the connections that have been between requests (connection.ts) for at least `idleMs`,
 * and those whose client has taken nothing of an answer written to it for at least `sendMs` (a
 * send timeout, as nginx's). It stands in for node:http's keep-alive timer and a connection's
 * inactivity timer: the one is set anew after every answer, the other refreshed at every read and
 * write, and under a thousand connections either costs each request memory or time
 * (docs/performance.md). Here a request costs one number written on its connection, and while there
 * are connections a sweep looks at each of them every quarter of the shorter timeout, or every
 * second when that is shorter.
 */
export class ConnectionTimeouts {
  readonly #open = new Set<Watched>()
  readonly #everyMs: number
  /** Sweeps after a connection's mark by which it has been idle for `idleMs` (see #sweep). */
  readonly #idleSweeps: number
  /** Sweeps without a byte taken by which a client has taken nothing for `sendMs`. */
  readonly #sendSweeps: number
  #sweeps = 0
  #timer: NodeJS.Timeout | undefined

  constructor (idleMs: number, sendMs: number) {
    this.#everyMs = Math.min(1000, Math.ceil(Math.min(idleMs, sendMs) / 4))
    this.#idleSweeps = Math.ceil(idleMs / this.#everyMs) + 1
    this.#sendSweeps = Math.ceil(sendMs / this.#everyMs) + 1
  }

  opened (socket: Connection): void {
    this.active(socket)
    ;(socket as Watched)[TAKEN] = 0
    ;(socket as Watched)[TAKEN_AT] = this.#sweeps
    this.#open.add(socket as Watched)
    this.#timer ??= setInterval(() => this.#sweep(), this.#everyMs).unref()
  }

  closed (socket: Connection): void {
    this.#open.delete(socket as Watched)
  }

  /** The connection read a request. */
  active (socket: Connection): void {
    (socket as Watched)[ACTIVE_AFTER] = this.#sweeps
  }

  /**
   * A connection marked n has been idle since sweep n + 1 at the latest: a request marks it with the
   * last sweep's number, and a sweep that finds it busy with its own. So at sweep n + 1 + k it has
   * been idle for k intervals at least, and it is closed once that is `idleMs`: at most one interval
   * more. Likewise a client that has taken no byte since sweep n, while bytes wait for it. The sweeps
   * stop while there is no connection.
   */
  #sweep (): void {
    const sweep = ++this.#sweeps
    for (const socket of this.#open) {
      if (betweenRequests(socket)) {
        if (sweep - socket[ACTIVE_AFTER] >= this.#idleSweeps) socket.destroy()
        continue
      }
      socket[ACTIVE_AFTER] = sweep
      // What the kernel has taken: what was written, less what still waits to be.
      const taken = socket.bytesWritten - socket.writableLength
      if (socket.writableLength === 0 || taken !== socket[TAKEN]) {
        socket[TAKEN] = taken
        socket[TAKEN_AT] = sweep
      } else if (sweep - socket[TAKEN_AT] >= this.#sendSweeps) {
        socket.destroy()
      }
    }
    if (this.#open.size === 0) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }
}
