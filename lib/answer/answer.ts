import { createHash } from 'node:crypto'
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { REQUEST_ID, requestId, type HeaderSet } from '../api/headers.ts'

/** Clients may keep an answer but must ask again each time (If-None-Match makes that cheap). */
const CACHE_CONTROL = 'no-cache'

/**
 * A rendered 200 of an endpoint with everything computed that answering it needs: its tag
 * and the headers of its 200 and of a 304 in its place. This is what the cache holds.
 */
export interface Representation {
  /** The template of the route that rendered it, for metrics. */
  readonly route: string
  readonly body: Buffer
  /** Strong: the same bytes always give the same tag, other bytes another. */
  readonly etag: string
  /** Name, value, name, value…: Node writes a flat list as it is, the fastest form. */
  readonly headers: readonly string[]
  readonly notModifiedHeaders: readonly string[]
}

const flat = (headers: OutgoingHttpHeaders) => Object.entries(headers).flatMap(([name, value]) => [name, String(value)])

/** Computes, once per rendered body, its tag and the headers of its 200 and 304. */
export function represent (route: string, body: Buffer, headers: HeaderSet): Representation {
  const etag = `"${createHash('sha1').update(body).digest('base64url')}"`
  const { 'content-type': _type, ...described } = headers
  return {
    route,
    body,
    etag,
    headers: flat({ ...headers, 'cache-control': CACHE_CONTROL, etag, 'content-length': body.length }),
    // A 304 carries what the 200 would have said about caching, and no body.
    notModifiedHeaders: flat({ ...described, 'cache-control': CACHE_CONTROL, etag }),
  }
}

/**
 * The one answer function: turns a representation into the status, headers and bytes of the
 * answer to a GET or HEAD (Node sends no body for HEAD and keeps the Content-Length), with a
 * fresh request id. Both the fast path and Fastify's handler answer through it, so a hit is
 * the miss's answer, byte for byte but for Date and the request id.
 */
export function answer (request: IncomingMessage, response: ServerResponse, representation: Representation): 200 | 304 {
  if (notModified(headerOf(request, 'if-none-match'), representation.etag)) {
    response.writeHead(304, [...representation.notModifiedHeaders, REQUEST_ID, requestId()]).end()
    return 304
  }
  response.writeHead(200, [...representation.headers, REQUEST_ID, requestId()]).end(representation.body)
  return 200
}

/** Whether If-None-Match names this tag: `*`, or a list of tags compared weakly, as RFC 9110 says. */
function notModified (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  for (const tag of ifNoneMatch.split(',')) {
    const trimmed = tag.trim()
    if (trimmed === '*' || trimmed === etag || (trimmed.startsWith('W/') && trimmed.slice(2) === etag)) return true
  }
  return false
}

/**
 * The first header of this (lower-case) name, without building `request.headers`: cheaper on
 * the fast path, and the same reading of a repeated header on both paths.
 */
export function headerOf (request: IncomingMessage, name: string): string | undefined {
  const raw = request.rawHeaders
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) return raw[i + 1]
  }
  return undefined
}
