import type { Test } from 'tap'
import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'

/** A reply that never ends: a bulk string of a gigabyte, written for as long as the connection stays open. */
export const ENDLESS: unique symbol = Symbol('endless reply')

/**
 * A stand-in for a Redis that misbehaves: it passes ioredis's ready check (INFO) and answers every
 * SCARD with what `reply` gives, written as it comes (text, ENDLESS, or nothing at all). It counts
 * its connections and the most bytes written on one.
 */
export async function brokenRedis (t: Test, reply: (poll: number) => string | typeof ENDLESS | undefined) {
  const seen = { connections: 0, polls: 0, mostWritten: 0 }
  const server = createServer((socket) => {
    seen.connections++
    socket.on('error', () => {})
    socket.on('close', () => { seen.mostWritten = Math.max(seen.mostWritten, socket.bytesWritten) })
    socket.on('data', (chunk) => {
      // Each command is an array of bulk strings: its first one names it.
      for (const [, name] of chunk.toString('latin1').matchAll(/\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g)) {
        const command = name!.toUpperCase()
        if (command === 'SCARD') {
          const answer = reply(++seen.polls)
          if (answer === ENDLESS) endless(socket)
          else if (answer !== undefined) socket.write(answer)
        } else if (command === 'INFO') {
          const info = '# Server\r\nredis_version:7.0.0\r\nloading:0\r\n'
          socket.write(`$${info.length}\r\n${info}\r\n`)
        } else {
          // HELLO 3: a RESP3 map of the server's name; the rest (CLIENT SETINFO) is taken.
          socket.write(command === 'HELLO' ? '%1\r\n+server\r\n+redis\r\n' : '+OK\r\n')
        }
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const sockets = new Set<Socket>()
  server.on('connection', (socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)) })
  t.teardown(() => {
    server.close()
    for (const socket of sockets) socket.destroy()
  })
  return { url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

/** Writes a gigabyte's bulk string, a piece each time the socket drains, until it closes. */
function endless (socket: Socket): void {
  const piece = Buffer.alloc(64 * 1024, 'x')
  socket.write(`$${2 ** 30}\r\n`)
  const more = () => {
    while (!socket.destroyed && socket.write(piece));
  }
  socket.on('drain', more)
  more()
}
