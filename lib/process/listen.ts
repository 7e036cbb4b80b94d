import cluster from 'node:cluster'
import { once } from 'node:events'
import { createServer, type AddressInfo, type ListenOptions, type Server } from 'node:net'
import type { FastifyInstance } from 'fastify'

/**
 * Listening sockets per address, sharing its port (SO_REUSEPORT). libuv accepts one connection
 * per listening socket per turn of the event loop, and with 1000 busy keep-alive connections a
 * turn takes 30–60 ms: one socket let in some 20 new connections a second, so under load the
 * last of wrk's 1000 waited 7 s and probes queued behind them. The kernel spreads new connections
 * over the sockets; 32 took that wait to under a second (README, Connections under load).
 */
export const ACCEPTORS = 32
/** Each socket's queue of connections not yet accepted (Linux caps it at net.core.somaxconn). */
const BACKLOG = 4096
/**
 * Node honours reusePort from 22.12 and 23.1 on. An older one (this machine's Node 20) ignores it,
 * and the second socket would fail with EADDRINUSE: there the service listens once, as before.
 */
const REUSE_PORT = !/^v(?:1?[0-9]|2[01]|22\.(?:[0-9]|1[01])|23\.0)\./.test(process.version)

/**
 * Checks that `host:port` is free by binding it alone, and returns the port: the one the system
 * chose, for port 0. SO_REUSEPORT would also let a second copy of the service share a port it
 * should find taken, so a taken port must fail here, with EADDRINUSE, as it would without.
 */
export async function reservePort (port: number, host: string): Promise<number> {
  const probe = await bound(createServer(), { port, host, backlog: BACKLOG })
  const chosen = (probe.address() as AddressInfo).port
  probe.close()
  await once(probe, 'close')
  return chosen
}

/**
 * Listens on `host:port` with ACCEPTORS sockets per address, each handing its connections to
 * the app's HTTP server; they stop accepting when the app starts closing. A cluster worker binds
 * its own (exclusive): through the primary's one socket, which hands each connection over to a
 * worker and waits for its reply, new connections came in as slowly as through one socket.
 */
export async function listen (app: FastifyInstance, port: number, host: string): Promise<void> {
  // Elsewhere than on Linux, Node refuses SO_REUSEPORT or the system does not spread connections
  // with it; there a cluster worker listens through the primary.
  if (process.platform !== 'linux' || !REUSE_PORT) {
    await app.listen({ port, host, backlog: BACKLOG })
    return
  }
  // A cluster's primary reserved the port before it forked the workers; one process does it here.
  if (cluster.isPrimary && port !== 0) await reservePort(port, host)
  const acceptors: Server[] = []
  // Each acceptor counts the connections it accepted: the app's server waits only for its own,
  // so closing waits for the acceptors' too (a net.Server emits 'close' once they have ended).
  // Fastify runs preClose, then closes its server, then the onClose hooks added before it started.
  let acceptorsClosed: Promise<unknown> | undefined
  app.addHook('preClose', (done) => {
    acceptorsClosed = Promise.all(acceptors.map((acceptor) => {
      const closed = once(acceptor, 'close')
      acceptor.close()
      return closed
    }))
    done()
  })
  app.addHook('onClose', async () => { await acceptorsClosed })
  const shared = { backlog: BACKLOG, reusePort: true, exclusive: true }
  await app.listen({ port, host, ...shared })
  // A TCP listener's addresses, never a pipe's path.
  for (const address of app.addresses() as AddressInfo[]) {
    for (let i = 1; i < ACCEPTORS; i++) {
      // As node:http's own listener does for its connections: half-open allowed, Nagle off.
      const acceptor = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => app.server.emit('connection', socket))
      acceptors.push(await bound(acceptor, { port: address.port, host: address.address, ...shared }))
    }
  }
}

async function bound (server: Server, options: ListenOptions): Promise<Server> {
  server.listen(options)
  await once(server, 'listening')
  return server
}
