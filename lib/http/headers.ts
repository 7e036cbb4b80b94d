import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** Every JSON answer: the reference's Content-Type carries no charset. */
export const JSON_HEADERS = { 'content-type': 'application/json', vary: 'Accept' } as const

/** The header every answer under /api/ carries a new value of, also when replayed. */
export const REQUEST_ID = 'x-request-id'
export const requestId: () => string = randomUUID

/**
 * Where a header of this (lower-case) name is in the raw list, from `from` on: its name's index, or
 * -1. The one reader of request headers below Fastify: cheaper than building `request.headers`,
 * and the same reading of a repeated header by Fastify and by a replay.
 */
export function headerIndex (request: IncomingMessage, name: string, from = 0): number {
  const raw = request.rawHeaders
  for (let i = from; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) return i
  }
  return -1
}

/** The first header of this (lower-case) name. */
export function headerOf (request: IncomingMessage, name: string): string | undefined {
  const at = headerIndex(request, name)
  return at === -1 ? undefined : request.rawHeaders[at + 1]
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
