import type { IncomingMessage } from 'node:http'

const FORWARDED = /^x-forwarded-(host|proto)$/i

/**
 * What a 200 depends on besides the profile, without forwarded headers that count: the Host
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
 * The cache key of a request, or undefined when it is not cacheable: no Host, or
 * X-Forwarded-Host/Proto that a trusted proxy may have set.
 */
export function cacheKeyOf (request: IncomingMessage, trustsProxies: boolean): CacheKey | undefined {
  // The raw list, not `request.headers`: Node builds that object on first use, and a hit never needs it.
  const raw = request.rawHeaders
  let host: string | undefined
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 4 && host === undefined && name.toLowerCase() === 'host') host = raw[i + 1]
    else if (trustsProxies && FORWARDED.test(name)) return undefined
  }
  // An empty Host makes the base the address the request reached, which a key cannot tell apart.
  return host === undefined || host === '' ? undefined : cacheKey(host, request.url!)
}
