import type { IncomingMessage } from 'node:http'

const FORWARDED = /^x-forwarded-(host|proto)$/i

/**
 * The cache key of a request: everything besides the profile that a 200 depends on.
 * Without forwarded headers that count, that is the Host (which decides the base URL,
 * or is checked against ALLOWED_HOSTS when PUBLIC_URL sets it) and the request URL.
 * undefined: not cacheable (no Host, or X-Forwarded-Host/Proto that a trusted proxy may have set).
 */
export function cacheKeyOf (request: IncomingMessage, trustsProxies: boolean): string | undefined {
  // The raw list, not `request.headers`: Node builds that object on first use, and a hit never needs it.
  const raw = request.rawHeaders
  let host: string | undefined
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 4 && host === undefined && name.toLowerCase() === 'host') host = raw[i + 1]
    else if (trustsProxies && FORWARDED.test(name)) return undefined
  }
  // An empty Host makes the base the address the request reached, which a key cannot tell apart.
  return host === undefined || host === '' ? undefined : host + ' ' + request.url
}
