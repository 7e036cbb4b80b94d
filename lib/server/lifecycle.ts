import type { Server } from 'node:net'
import { net } from '../builtins.ts'

/** Where a serving process is on its way out: read by /readyz and by the HTTP server, led by shutdown.ts. */
export class Lifecycle {
  /** False from the shutdown signal on: /readyz answers 503 so that load balancers stop sending. */
  ready = true
  /** True once connections are being closed: every response carries `Connection: close`. */
  closing = false
  /** Every socket the service accepts connections on: the HTTP server and the acceptors (listen.ts). */
  readonly #listeners: Server[] = []
  /** Each listener's 'close': it stopped listening and the connections it accepted have ended. */
  readonly #closed: Array<Promise<unknown>> = []

  /** A socket the service now accepts connections on. */
  accepts (listener: Server): void {
    this.#listeners.push(listener)
    // Not events.once, which rejects on 'error': an acceptor's failed accept (EMFILE) is not its end.
    this.#closed.push(new Promise((resolve) => listener.once('close', resolve)))
  }

  /**
   * Closes every listening socket and none of the connections: a new connect is refused from now
   * on. (node:http's own close() would also close the idle keep-alive connections, and a request
   * a client is writing to one at that moment would be lost.)
   */
  stopAccepting (): void {
    for (const listener of this.#listeners) {
      if (listener.listening) net.Server.prototype.close.call(listener)
    }
  }

  /** Resolves once every listening socket is closed and every connection it accepted has ended. */
  async drained (): Promise<void> {
    await Promise.all(this.#closed)
  }
}
