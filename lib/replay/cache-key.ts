import type { IncomingMessage } from 'node:http'
import { headerIndex } from '../http/headers.ts'
import { hostOf } from '../http/target.ts'

/**
 * What a 200 depends on besides the profile, without forwarded headers that count: the host
 * (which decides the base URL, or is checked against ALLOWED_HOSTS when PUBLIC_URL sets it)
 * and the request URL; and their hash, by which the cache finds it (see cache.ts).
 */
export interface CacheKey {
  readonly host: string
  readonly url: string
  readonly hash: number
}

/** The key of this Host and URL. */
export function cacheKey (host: string, url: string): CacheKey {
  // FNV-1a over the host, a space and the URL, read where they are: joined, the text would be
  // copied once more, and a string key of a Map is interned by V8 (docs/performance.md).
  let hash = 0x811c9dc5
  for (let i = 0; i < host.length; i++) hash = Math.imul(hash ^ host.charCodeAt(i), 0x01000193)
  hash = Math.imul(hash ^ 0x20, 0x01000193)
  for (let i = 0; i < url.length; i++) hash = Math.imul(hash ^ url.charCodeAt(i), 0x01000193)
  return { host, url, hash: hash >>> 0 }
}

/**
 * The cache key of a request, or undefined when it is not cacheable: no host that counts (see
 * hostOf), or X-Forwarded-Host/Proto that a trusted proxy may have set.
 */
export function cacheKeyOf (request: IncomingMessage, trustsProxies: boolean): CacheKey | undefined {
  if (trustsProxies && forwarded(request)) return undefined
  const host = hostOf(request)
  return host === undefined ? undefined : cacheKey(host, request.url!)
}

/** Whether the request has X-Forwarded-Host or X-Forwarded-Proto. */
function forwarded (request: IncomingMessage): boolean {
  return headerIndex(request, 'x-forwarded-host') !== -1 || headerIndex(request, 'x-forwarded-proto') !== -1
}
