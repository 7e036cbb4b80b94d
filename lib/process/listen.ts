import cluster from 'node:cluster'
import { once } from 'node:events'
import { createServer, type AddressInfo, type ListenOptions, type Server } from 'node:net'
import type { FastifyInstance } from 'fastify'

/**
 * Listening sockets per address, sharing its port (SO_REUSEPORT). libuv accepts one connection
 * per listening socket per turn of the event loop, and with 1000 busy keep-alive connections a
 * turn takes 30–60 ms: through one socket new connections waited seconds under load. The kernel
 * spreads them over the sockets (docs/performance.md, 32 listening sockets).
 */
export const ACCEPTORS = 32
/** Each socket's queue of connections not yet accepted (Linux caps it at net.core.somaxconn). */
const BACKLOG = 4096

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
 * the app's HTTP server; shutdown closes them all at once (Lifecycle.stopAccepting). A cluster
 * worker binds its own (exclusive): through the primary's one socket, which hands each
 * connection over to a worker and waits for its reply, new connections came in as slowly as
 * through one socket.
 */
export async function listen (app: FastifyInstance, port: number, host: string): Promise<void> {
  // Elsewhere than on Linux, the system does not spread connections over SO_REUSEPORT sockets:
  // there the service listens once (a worker through the primary).
  if (process.platform !== 'linux') {
    await app.listen({ port, host, backlog: BACKLOG })
    return
  }
  const { lifecycle } = app
  // An acceptor emits 'close' once it stopped listening and its connections have ended; the app's
  // HTTP server waits only for its own, so closing the app waits for these too (onClose runs
  // after Fastify has closed its server). A socket still being bound when the app closes is
  // closed once bound (preClose), so that none outlives the app.
  const closed: Array<Promise<unknown>> = []
  let acceptorsBound: Promise<void> = Promise.resolve()
  app.addHook('preClose', async () => {
    await acceptorsBound
    lifecycle.stopAccepting()
  })
  app.addHook('onClose', async () => { await Promise.all(closed) })
  // As node:http's own listener does for its connections: half-open allowed, Nagle off.
  const acceptor = () => createServer({ allowHalfOpen: true, noDelay: true }, (socket) => app.server.emit('connection', socket))
  const shared = { backlog: BACKLOG, reusePort: true, exclusive: true }
  // A cluster's primary reserved the port before it forked the workers; one process does it here.
  if (cluster.isPrimary && port !== 0) await reservePort(port, host)
  await app.listen({ port, host, ...shared })
  acceptorsBound = (async () => {
    // A TCP listener's addresses, never a pipe's path.
    for (const address of app.addresses() as AddressInfo[]) {
      for (let i = 1; i < ACCEPTORS; i++) {
        const socket = acceptor()
        closed.push(new Promise((resolve) => socket.once('close', resolve)))
        lifecycle.listeners.push(await bound(socket, { port: address.port, host: address.address, ...shared }))
      }
    }
  })()
  await acceptorsBound
}

async function bound (server: Server, options: ListenOptions): Promise<Server> {
  server.listen(options)
  await once(server, 'listening')
  return server
}
