import type { IncomingMessage } from 'node:http'
import { parseQuery, type QueryParams } from '../reference/query.ts'
import { headerIndex } from './headers.ts'

/**
 * A request's target as every later step reads it: a path in origin form, and the one host the
 * request is for. RFC 9112 §3.2.2: the authority of an absolute-form target (`GET http://h/p`)
 * is the host, whatever the Host header says; §3.2: an HTTP/1.1 request with no Host, or with
 * more than one, is refused.
 */

/** On a request that came in absolute form, whose URL is now in origin form: its authority. */
const AUTHORITY = Symbol('authority')
type Targeted = IncomingMessage & { [AUTHORITY]?: string }

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)(.*)$/is

/**
 * Rewrites an absolute-form target into origin form (`http://h/p?q` -> `/p?q`) and keeps its
 * authority as the request's host; other forms are left as they are (Fastify answers them 404).
 */
export function toOriginForm (request: Targeted): void {
  const absolute = ABSOLUTE_FORM.exec(request.url!)
  if (absolute === null) return
  const authority = absolute[1]!
  const rest = absolute[2]!
  request[AUTHORITY] = authority
  // What Fastify and a log read as the host, too.
  request.headers.host = authority
  request.url = rest.startsWith('/') ? rest : '/' + rest
}

/** Whether the request's target came in absolute form (see toOriginForm). */
export function cameAbsolute (request: Targeted): boolean {
  return request[AUTHORITY] !== undefined
}

/**
 * The host a request is for: its absolute-form target's authority, else its one Host header; for
 * an empty Host, or none on HTTP/1.0, the address it reached (the reference's SERVER_NAME).
 * undefined when it has none that counts: more than one Host, or none on HTTP/1.1.
 */
export function hostOf (request: Targeted): string | undefined {
  const authority = request[AUTHORITY]
  if (authority !== undefined) return authority
  const at = headerIndex(request, 'host')
  if (at === -1) return request.httpVersion === '1.0' ? localAddressOf(request) : undefined
  if (headerIndex(request, 'host', at + 2) !== -1) return undefined
  const host = request.rawHeaders[at + 1]!
  return host === '' ? localAddressOf(request) : host
}

function localAddressOf ({ socket: { localAddress, localPort } }: IncomingMessage): string {
  return (localAddress!.includes(':') ? `[${localAddress}]` : localAddress) + ':' + localPort
}

/** Where the path of a request URL ends, as Fastify's router reads it: at its first `?` or `#`. */
export function pathEnd (url: string): number {
  for (let i = 0; i < url.length; i++) {
    const char = url.charCodeAt(i)
    if (char === 0x3f || char === 0x23) return i
  }
  return url.length
}

/** A query as the router hands it (what follows the path's end): up to a fragment, which is never part of it. */
export function queryText (afterPath: string): string {
  const fragment = afterPath.indexOf('#')
  return fragment === -1 ? afterPath : afterPath.slice(0, fragment)
}

/** The query of a request URL, parsed the reference's way. */
export function queryOf (url: string): QueryParams {
  const end = pathEnd(url)
  return end === url.length ? new Map() : parseQuery(queryText(url.slice(end + 1)))
}
