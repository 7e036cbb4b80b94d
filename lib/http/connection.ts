import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * A connection as node:http keeps it, beyond its API (docs/architecture.md, Connections): its
 * parser, with the request it read last, and the answer being written.
 */
export type Connection = Socket & {
  parser?: { incoming?: IncomingMessage | null } | null
  _httpMessage?: ServerResponse | null
}

/**
 * Whether a connection is between requests: no answer is being written, and the request read last
 * (if any) is whole.
 */
export function betweenRequests (socket: Connection): boolean {
  const read = socket.parser?.incoming
  return socket._httpMessage == null && (read == null || read.complete)
}
