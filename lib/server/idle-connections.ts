import { betweenRequests, type Connection } from './connection.ts'

/** On a connection: the last sweep after which it was active (it read a request, or an answer was being written). */
const ACTIVE_AFTER = Symbol('active after sweep')
type Watched = Connection & { [ACTIVE_AFTER]: number }

/**
 * Closes the connections that have been between requests (connection.ts) for at least `idleMs`,
 * in place of node:http's keep-alive timer and of a connection's inactivity timer: the one is set
 * anew after every answer, the other refreshed at every read and write, and under a thousand
 * connections either costs each request memory or time (docs/performance.md). Here a request costs
 * one number written on its connection, and while there are connections a sweep looks at each of
 * them every quarter of `idleMs`, or every second when that is shorter.
 */
export class IdleConnections {
  readonly #open = new Set<Watched>()
  readonly #everyMs: number
  /** Sweeps after a connection's mark by which it has been idle for `idleMs` (see #sweep). */
  readonly #idleSweeps: number
  #sweeps = 0
  #timer: NodeJS.Timeout | undefined

  constructor (idleMs: number) {
    this.#everyMs = Math.min(1000, Math.ceil(idleMs / 4))
    this.#idleSweeps = Math.ceil(idleMs / this.#everyMs) + 1
  }

  opened (socket: Connection): void {
    this.active(socket)
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
   * more. The sweeps stop while there is no connection.
   */
  #sweep (): void {
    const sweep = ++this.#sweeps
    for (const socket of this.#open) {
      if (!betweenRequests(socket)) socket[ACTIVE_AFTER] = sweep
      else if (sweep - socket[ACTIVE_AFTER] >= this.#idleSweeps) socket.destroy()
    }
    if (this.#open.size === 0) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }
}
