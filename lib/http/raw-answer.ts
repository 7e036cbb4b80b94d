import type { Duplex } from 'node:stream'
import { http } from '../builtins.ts'
import { detail } from '../errors.ts'
import { JSON_HEADERS } from './headers.ts'

/**
 * Writes a JSON error answer straight to a socket, with `Connection: close`, for what never
 * becomes a request (what Node cannot parse, CONNECT); the caller closes the connection.
 */
export function writeRawAnswer (socket: Duplex, status: number, message: string): void {
  // A reset connection is no longer writable: there is no one to answer.
  if (!socket.writable) return
  const body = detail(message)
  socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: ${JSON_HEADERS['content-type']}\r\n` +
    `Vary: ${JSON_HEADERS.vary}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`)
  socket.write(body)
}
