import { Server } from 'node:net'

/** Where a serving process is on its way out: read by /readyz and by the HTTP server, led by shutdown.ts. */
export class Lifecycle {
  /** False from the shutdown signal on: /readyz answers 503 so that load balancers stop sending. */
  ready = true
  /** True once connections are being closed: every response carries `Connection: close`. */
  closing = false
  /** Every socket the service accepts connections on: the HTTP servers' own and the acceptors (listen.ts). */
  readonly listeners: Server[] = []

  /**
   * Closes every listening socket and none of the connections: a new connect is refused from now
   * on. (node:http's own close() would also close the idle keep-alive connections, and a request
   * a client is writing to one at that moment would be lost.)
   */
  stopAccepting (): void {
    for (const listener of this.listeners) {
      if (listener.listening) Server.prototype.close.call(listener)
    }
  }
}
