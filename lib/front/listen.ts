import type { Server as HttpServer } from 'node:http'
import type { AddressInfo, ListenOptions, Server } from 'node:net'
import type { Logger } from 'pino'
import { cluster, events, net, os } from '../builtins.ts'
import type { Lifecycle } from './lifecycle.ts'

/**
 * Listening sockets per address, sharing its port (SO_REUSEPORT). libuv accepts one connection
 * per listening socket per turn of the event loop, and a turn under load is long: through one
 * socket new connections waited seconds. The kernel spreads them over the sockets
 * (docs/performance.md, 32 listening sockets).
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
  const probe = await bound(net.createServer(), { port, host, backlog: BACKLOG })
  const chosen = (probe.address() as AddressInfo).port
  probe.close()
  await events.once(probe, 'close')
  return chosen
}

/**
 * For a cluster's primary: checks `host:port` as reservePort does, and returns the port to give
 * its first worker. On Linux a port for the system to choose stays 0: the first worker's socket is
 * given one that no socket holds, and the others bind it once that one listens (cluster.ts). The
 * probe's port would be free from its close until the workers bind it, and the system may give
 * it to another process meanwhile: one of the same user, sharing it (SO_REUSEPORT), would answer
 * a share of the service's connections.
 */
export async function firstWorkerPort (port: number, host: string): Promise<number> {
  const reserved = await reservePort(port, host)
  return port === 0 && process.platform === 'linux' ? 0 : reserved
}

export interface Listening {
  server: HttpServer
  lifecycle: Lifecycle
  logger: Logger
}

/**
 * Listens on `host:port` with ACCEPTORS sockets, the HTTP server's own and acceptors handing
 * their connections to it; shutdown closes them all at once (Lifecycle.stopAccepting). A
 * cluster worker binds its own (exclusive): through the primary's one socket, which hands each
 * connection over to a worker and waits for its reply, new connections came in as slowly as
 * through one socket. Elsewhere than on Linux, the system does not spread connections over
 * SO_REUSEPORT sockets: there the service listens once (a worker through the primary).
 */
export async function listen ({ server, lifecycle, logger }: Listening, port: number, host: string): Promise<void> {
  const linux = process.platform === 'linux'
  const shared = linux ? { backlog: BACKLOG, reusePort: true, exclusive: true } : { backlog: BACKLOG }
  // A cluster's primary reserved the port before it forked the workers; one process does it here.
  if (linux && cluster.isPrimary && port !== 0) await reservePort(port, host)
  const address = (await bound(server, { port, host, ...shared })).address() as AddressInfo
  lifecycle.accepts(server)
  for (const url of urlsOf(address)) logger.info(`Server listening at ${url}`)
  if (!linux) return
  // All at once: one after another, each waited a turn of the event loop for its address to be looked up.
  await Promise.all(Array.from({ length: ACCEPTORS - 1 }, async () => {
    // As node:http's own listener does for its connections: half-open allowed, Nagle off.
    const acceptor = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => server.emit('connection', socket))
    lifecycle.accepts(await bound(acceptor, { port: address.port, host: address.address, ...shared }))
  }))
}

async function bound<S extends Server> (server: S, options: ListenOptions): Promise<S> {
  server.listen(options)
  await events.once(server, 'listening')
  return server
}

/** Where to reach the service: for 0.0.0.0, each IPv4 address of this machine, its own first. */
function urlsOf ({ address, port }: AddressInfo): string[] {
  if (address.includes(':')) return [`http://[${address}]:${port}`]
  const addresses = address !== '0.0.0.0'
    ? [address]
    : Object.values(os.networkInterfaces()).flat()
      .filter((nic) => nic!.family === 'IPv4')
      .sort((a, b) => Number(b!.internal) - Number(a!.internal))
      .map((nic) => nic!.address)
  return addresses.map((ip) => `http://${ip}:${port}`)
}
