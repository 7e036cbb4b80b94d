import type { Test } from 'tap'
import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'

/** A reply too large to hold: `head`, then `size` bytes, written a piece each time the socket drains, until it closes. */
export interface Flood { head: string, size: number }

/** A reply that never ends: a bulk string of a gigabyte, written for as long as the connection stays open. */
export const ENDLESS: Flood = { head: `$${2 ** 30}\r\n`, size: 2 ** 30 }
/** A bulk string of 100 MB. */
export const HUNDRED_MB: Flood = { head: `$${100e6}\r\n`, size: 100e6 }
/** An error reply of 100 MB: one line, which the parser reads to its end. */
export const HUNDRED_MB_ERROR: Flood = { head: '-ERR ', size: 100e6 }

/**
 * A stand-in for a Redis that misbehaves: it passes ioredis's ready check (INFO) and answers every
 * SCARD with what `reply` gives, written as it comes (text, a Flood, or nothing at all). It counts
 * its connections and the most bytes written on one.
 */
export async function brokenRedis (t: Test, reply: (poll: number) => string | Flood | undefined) {
  const seen = { connections: 0, polls: 0, mostWritten: 0 }
  // A client's FIN stops none of its writing, as a Redis that means harm would not stop.
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    seen.connections++
    socket.on('error', () => {})
    socket.on('close', () => { seen.mostWritten = Math.max(seen.mostWritten, socket.bytesWritten) })
    socket.on('data', (chunk) => {
      // Each command is an array of bulk strings: its first one names it.
      for (const [, name] of chunk.toString('latin1').matchAll(/\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g)) {
        const command = name!.toUpperCase()
        if (command === 'SCARD') {
          const answer = reply(++seen.polls)
          if (typeof answer === 'object') flood(socket, answer)
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

const PIECE = Buffer.alloc(64 * 1024, 'x')

/** Writes a flood's head and its bytes, a piece each time the socket drains, then the end of its line. */
function flood (socket: Socket, { head, size }: Flood): void {
  socket.write(head)
  let left = size
  const more = () => {
    while (!socket.destroyed && left > 0) {
      const piece = left >= PIECE.length ? PIECE : PIECE.subarray(0, left)
      left -= piece.length
      const drained = socket.write(piece)
      if (left === 0) socket.write('\r\n')
      if (!drained) return
    }
  }
  socket.on('drain', more)
  more()
}
