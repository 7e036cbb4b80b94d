import { spawn, type SendHandle } from 'node:child_process'
import cluster from 'node:cluster'
import { once } from 'node:events'
import { createServer, type AddressInfo, type ListenOptions, type Server } from 'node:net'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'

/**
 * Listening sockets per address, sharing its port (SO_REUSEPORT), or descriptors of one socket
 * where Node has no reusePort (copiesOf). libuv accepts one connection per listening descriptor
 * per turn of the event loop, and with 1000 busy keep-alive connections a turn takes 30–60 ms:
 * one socket let in some 20 new connections a second, so under load the last of wrk's 1000
 * waited 7 s and probes queued behind them. The kernel spreads new connections over the
 * sockets; 32 took that wait to under a second (README, Connections under load).
 */
export const ACCEPTORS = 32
/** Each socket's queue of connections not yet accepted (Linux caps it at net.core.somaxconn). */
const BACKLOG = 4096
/**
 * Node honours reusePort from 22.12 and 23.1 on. An older one (this machine's Node 20) ignores it,
 * and the second socket would fail with EADDRINUSE: there the one socket is copied (copiesOf).
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
 * In a cluster's primary, before it forks. A worker of a Node without reusePort listens through
 * the primary's one socket: by default the primary accepts each connection and hands it over,
 * one at a time; instead, each worker gets the socket itself (SCHED_NONE), to copy it (copiesOf).
 */
export function shareSocketWithWorkers (): void {
  if (process.platform === 'linux' && !REUSE_PORT) cluster.schedulingPolicy = cluster.SCHED_NONE
}

/**
 * Listens on `host:port` with ACCEPTORS sockets per address, each handing its connections to
 * the app's HTTP server; they stop accepting when the app starts closing. A cluster worker binds
 * its own (exclusive): through the primary's one socket, which hands each connection over to a
 * worker and waits for its reply, new connections came in as slowly as through one socket.
 * A Node without reusePort gets ACCEPTORS descriptors of its one socket instead (copiesOf).
 */
export async function listen (app: FastifyInstance, port: number, host: string): Promise<void> {
  // Elsewhere than on Linux, Node refuses SO_REUSEPORT or the system does not spread connections
  // with it: there the service listens once (a worker through the primary).
  if (process.platform !== 'linux') {
    await app.listen({ port, host, backlog: BACKLOG })
    return
  }
  const acceptors: Server[] = []
  // Each acceptor counts the connections it accepted: the app's server waits only for its own,
  // so closing waits for the acceptors' too (a net.Server emits 'close' once they have ended).
  // Fastify runs preClose, then closes its server, then the onClose hooks added before it started.
  // Closing while acceptors are still being set up waits for them, so that none outlives the app.
  let acceptorsBound: Promise<void> = Promise.resolve()
  let acceptorsClosed: Promise<unknown> | undefined
  app.addHook('preClose', async () => {
    await acceptorsBound
    acceptorsClosed = Promise.all(acceptors.map((acceptor) => {
      const closed = once(acceptor, 'close')
      acceptor.close()
      return closed
    }))
  })
  app.addHook('onClose', async () => { await acceptorsClosed })
  // As node:http's own listener does for its connections: half-open allowed, Nagle off.
  const acceptor = () => createServer({ allowHalfOpen: true, noDelay: true }, (socket) => app.server.emit('connection', socket))
  if (REUSE_PORT) {
    const shared = { backlog: BACKLOG, reusePort: true, exclusive: true }
    // A cluster's primary reserved the port before it forked the workers; one process does it here.
    if (cluster.isPrimary && port !== 0) await reservePort(port, host)
    await app.listen({ port, host, ...shared })
    acceptorsBound = (async () => {
      // A TCP listener's addresses, never a pipe's path.
      for (const address of app.addresses() as AddressInfo[]) {
        for (let i = 1; i < ACCEPTORS; i++) {
          acceptors.push(await bound(acceptor(), { port: address.port, host: address.address, ...shared }))
        }
      }
    })()
  } else {
    await app.listen({ port, host, backlog: BACKLOG })
    acceptorsBound = (async () => {
      for (const copy of await copiesOf(app.server, ACCEPTORS - 1, app.log)) {
        // Not listen({ handle, backlog }): with a handle, Node takes the backlog from the arguments only.
        const copied = acceptor().listen(copy, BACKLOG)
        await once(copied, 'listening')
        acceptors.push(copied)
      }
    })()
  }
  await acceptorsBound
}

/** What a net.Server wraps: Node sends and receives it as such ('net.Native'), and listens on it. */
interface TcpHandle { close (): void }

/** The helper process: it sends each listening socket it receives back, as many times as asked. */
const COPIER = "process.on('message', (count, socket) => { for (let i = 0; i < count; i++) process.send(0, socket) })"
/** The copies take some 60 ms; on a machine too busy for that, the helper is stopped. */
const COPY_DEADLINE_MS = 5000

/**
 * `count` more descriptors of the server's listening socket, for a Node without reusePort: a
 * helper process is sent the socket and sends it back, and each time it arrives (SCM_RIGHTS) as a
 * descriptor of its own. libuv polls each one and accepts from each in a turn of the event loop,
 * as from the reusePort sockets, but from one queue. The first address's socket only: with
 * HOST=localhost, the other address keeps its one socket. Should the helper fail, the service
 * listens through its one socket, as it did before, and says so.
 */
async function copiesOf (server: Server, count: number, log: FastifyBaseLogger): Promise<TcpHandle[]> {
  // The raw socket: sent as a net.Server, the helper would listen on it and accept connections.
  const socket = (server as unknown as { _handle: TcpHandle })._handle
  const helper = spawn(process.execPath, ['-e', COPIER], { env: {}, stdio: ['ignore', 'ignore', 'inherit', 'ipc'], timeout: COPY_DEADLINE_MS })
  const copies: TcpHandle[] = []
  const exited = new Promise((resolve) => helper.on('exit', resolve))
  try {
    await new Promise<void>((resolve, reject) => {
      helper.on('message', (_, copy) => {
        copies.push(copy as unknown as TcpHandle)
        if (copies.length === count) resolve()
      })
      helper.on('error', reject)
      helper.on('exit', (code, signal) => reject(new Error(`it exited (code ${code}, signal ${signal}) after sending ${copies.length} of ${count}`)))
      helper.send(count, socket as unknown as SendHandle)
    })
  } catch (error) {
    for (const copy of copies.splice(0)) copy.close()
    log.warn({ err: error }, 'listening through one socket: no copies of it from a helper process')
  } finally {
    // Once it has exited, no process but this one holds the socket: closing the app closes it.
    if (helper.pid !== undefined) {
      helper.kill()
      await exited
    }
  }
  return copies
}

async function bound (server: Server, options: ListenOptions): Promise<Server> {
  server.listen(options)
  await once(server, 'listening')
  return server
}
