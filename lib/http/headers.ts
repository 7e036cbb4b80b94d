import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** The header every answer under /api/ carries a new value of, also when replayed. */
export const REQUEST_ID = 'x-request-id'
export const requestId: () => string = randomUUID

/**
 * The first header of this (lower-case) name, read from the raw list: cheaper than building
 * `request.headers`, and the same reading of a repeated header by Fastify and by a replay.
 */
export function headerOf (request: IncomingMessage, name: string): string | undefined {
  const raw = request.rawHeaders
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) return raw[i + 1]
  }
  return undefined
}

/** Whether the request's If-None-Match names this tag: `*`, or a list of tags compared weakly, as RFC 9110 says. */
export function ifNoneMatches (request: IncomingMessage, etag: string): boolean {
  const ifNoneMatch = headerOf(request, 'if-none-match')
  if (ifNoneMatch === undefined) return false
  for (const tag of ifNoneMatch.split(',')) {
    const trimmed = tag.trim()
    if (trimmed === '*' || trimmed === etag || (trimmed.startsWith('W/') && trimmed.slice(2) === etag)) return true
  }
  return false
}
