import type { AddressInfo, Server } from 'node:net'
import { fs, net, timers } from '../builtins.ts'

/** How long closing the listening sockets waits for the queue of connections to shrink before it gives up. */
const ACCEPT_QUEUED_MS = 1000
/** How often it looks at the queue meanwhile. */
const QUEUE_POLL_MS = 10

/**
 * Connections the kernel has completed on this port and no process has accepted yet (Linux: a
 * listening socket's receive queue in /proc/net/tcp and tcp6 is its accept queue); 0 elsewhere.
 */
export function queuedConnections (port: number): number {
  // `sl local_address rem_address st tx_queue:rx_queue …`, state 0A a listening socket. Matched, not
  // split: the tables list every socket of the machine, and a drain reads them again and again.
  const listening = new RegExp(`^ *\\d+: [0-9A-F]+:${port.toString(16).toUpperCase().padStart(4, '0')} [0-9A-F]+:[0-9A-F]+ 0A [0-9A-F]+:([0-9A-F]+)`, 'gm')
  let queued = 0
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    /* c8 ignore start: a table is missing elsewhere than on Linux, or without IPv6 */
    try {
      text = fs.readFileSync(table, 'latin1')
    } catch {
      continue
    }
    /* c8 ignore stop */
    for (const [, rxQueue] of text.matchAll(listening)) queued += parseInt(rxQueue!, 16)
  }
  return queued
}

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
   * a client is writing to one at that moment would be lost.) The kernel resets the connections
   * still queued in a socket it closes, requests written: on a busy machine the event loop may not
   * have accepted them yet, so it first takes its turns until none is queued, for as long as the
   * queue shrinks (a second at most without).
   */
  async stopAccepting (): Promise<void> {
    const listening = this.#listeners.find((listener) => listener.listening)
    if (listening !== undefined) {
      const { port } = listening.address() as AddressInfo
      let queued = queuedConnections(port)
      let until = Date.now() + ACCEPT_QUEUED_MS
      while (queued > 0 && Date.now() < until) {
        await timers.setTimeout(QUEUE_POLL_MS)
        const now = queuedConnections(port)
        if (now < queued) until = Date.now() + ACCEPT_QUEUED_MS
        queued = now
      }
    }
    for (const listener of this.#listeners) {
      if (listener.listening) net.Server.prototype.close.call(listener)
    }
  }

  /** Resolves once every listening socket is closed and every connection it accepted has ended. */
  async drained (): Promise<void> {
    await Promise.all(this.#closed)
  }
}
