import { createHash } from 'node:crypto'
import type { OutgoingHttpHeaders } from 'node:http'
import { API_HEADERS } from './http.ts'

/** Clients may keep an answer but must ask again each time (If-None-Match makes that cheap). */
const CACHE_CONTROL = 'no-cache'

/** A 200 of the API as it goes on the wire, with what a 304 in its place sends. */
export interface Answer {
  /** The template of the route that rendered it, for metrics. */
  readonly route: string
  readonly body: Buffer
  /** Strong: the same bytes always give the same tag, other bytes another. */
  readonly etag: string
  readonly headers: Readonly<OutgoingHttpHeaders>
  readonly notModifiedHeaders: Readonly<OutgoingHttpHeaders>
}

/** Computes, once per rendered body, the tag and the headers of its 200 and 304. */
export function answerOf (route: string, body: Buffer): Answer {
  const etag = `"${createHash('sha1').update(body).digest('base64url')}"`
  const { 'content-type': _type, ...described } = API_HEADERS
  return {
    route,
    body,
    etag,
    headers: { ...API_HEADERS, 'cache-control': CACHE_CONTROL, etag, 'content-length': body.length },
    // A 304 carries what the 200 would have said about caching, and no body.
    notModifiedHeaders: { ...described, 'cache-control': CACHE_CONTROL, etag },
  }
}

/** Whether If-None-Match names this tag: `*`, or a list of tags compared weakly, as RFC 9110 says. */
export function notModified (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  for (const tag of ifNoneMatch.split(',')) {
    const trimmed = tag.trim()
    if (trimmed === '*' || trimmed === etag || (trimmed.startsWith('W/') && trimmed.slice(2) === etag)) return true
  }
  return false
}
