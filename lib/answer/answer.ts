import { hash, randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'

/** The header every answer under /api/ carries a new value of. */
export const REQUEST_ID = 'x-request-id'
export const requestId: () => string = randomUUID

/** Clients may keep an answer but must ask again each time (If-None-Match makes that cheap). */
const CACHE_CONTROL = 'no-cache'

/**
 * The bytes of a 200, as pieces written in order, text as UTF-8. A rendering is a head of
 * text and views of memory that outlives the answer (a catalog's, see items-json.ts), so a
 * miss allocates no Buffer; what the cache keeps is one piece of its own.
 */
export type Body = ReadonlyArray<Buffer | string>

/**
 * A rendered 200 of an endpoint with everything computed that answering it needs: its tag
 * and its headers. This is what the cache holds.
 */
export interface Representation {
  /** The template of the route that rendered it, for metrics. */
  readonly route: string
  readonly body: Body
  readonly etag: string
  /**
   * Name, value, name, value…, the last value left for the request id: Node writes a flat
   * list as it is, the fastest form, and a copy of it is all an answer makes. Content-Type
   * comes first and Content-Length just before the request id (see answer()).
   */
  readonly headers: readonly string[]
}

/**
 * The strong tag of what a request is answered with: a digest of all the body depends on (the
 * profile, the page sizes, the base URL, the request URL), so equal inputs on any replica get
 * the same tag and other bytes another; cheaper than hashing every body it names.
 */
export function etagOf (catalog: string, pageSizes: string, base: string, url: string): string {
  return `"${hash('sha1', `${catalog}\n${pageSizes}\n${base}\n${url}`, 'base64url')}"`
}

/** Puts a rendered body together with its tag and the headers of its 200 (`endpoint` from headers.ts). */
export function represent (route: string, body: Body, etag: string, endpoint: readonly string[]): Representation {
  // A copy pushed onto: V8's fastest way to a longer list, against spread and concat.
  const headers = endpoint.slice()
  headers.push('cache-control', CACHE_CONTROL, 'etag', etag, 'content-length', String(byteLength(body)), REQUEST_ID, '')
  return { route, body, etag, headers }
}

/**
 * The one answer function: turns a representation into the status, headers and bytes of the
 * answer to a GET or HEAD (Node sends no body for HEAD and keeps the Content-Length), with its
 * request id: Fastify's for the request it routed, else a fresh one. Both the fast path and
 * Fastify's handler answer through it, so a hit is the miss's answer, byte for byte but for
 * Date and the request id.
 */
export function answer (request: IncomingMessage, response: ServerResponse, representation: Representation, id = requestId()): 200 | 304 {
  if (ifNoneMatches(headerOf(request, 'if-none-match'), representation.etag)) {
    // What the 200 would have said about caching, without Content-Type and Content-Length:
    // a 304 has no body to describe.
    const headers = representation.headers.slice(2, -4)
    headers.push(REQUEST_ID, id)
    response.writeHead(304, headers).end()
    return 304
  }
  const headers = representation.headers.slice()
  headers[headers.length - 1] = id
  response.writeHead(200, headers)
  // Node gathers the pieces into one write (the response corks its socket on the first), and
  // sends a first piece of text in one string with the header block: a new page 1.12x the
  // requests/s of writing its head as a Buffer (docs/performance.md).
  const { body } = representation
  const last = body.length - 1
  for (let i = 0; i < last; i++) response.write(body[i])
  response.end(body[last])
  return 200
}

/** The length of a body: its pieces' lengths added up. */
export function byteLength (body: Body): number {
  let length = 0
  for (const piece of body) length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length
  return length
}

/** Whether If-None-Match names this tag: `*`, or a list of tags compared weakly, as RFC 9110 says. */
function ifNoneMatches (ifNoneMatch: string | undefined, etag: string): boolean {
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
