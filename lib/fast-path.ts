import type { IncomingMessage, ServerResponse } from 'node:http'
import { notModified } from './conditional.ts'
import { headerOf } from './http.ts'
import type { Metrics } from './metrics.ts'
import type { ApiGuards } from './routes/endpoint.ts'

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

const FORWARDED = /^x-forwarded-(host|proto)$/i

/**
 * Answers GET and HEAD from the response cache before Fastify sees the request. Only a
 * 200 that Fastify rendered for the same key is ever there, so a hit has passed every check
 * (Host, format, method) and Fastify's answer is reproduced byte for byte; everything else
 * goes to Fastify, and so does a request without a valid token when tokens are required.
 * This is the bare-Node speed of the service.
 */
export class FastPath {
  constructor (private readonly guards: ApiGuards, private readonly metrics?: Metrics) {}

  /** True when the request was answered from the cache. */
  answered (request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false
    const started = this.metrics === undefined ? 0n : process.hrtime.bigint()
    const { served, trustsProxies, tokens } = this.guards
    const key = cacheKeyOf(request, trustsProxies)
    const answer = key === undefined ? undefined : served.current.cache.get(key)
    if (answer === undefined) return false
    // The key leaves the token out (one entry serves every client), so it is checked here.
    if (tokens !== undefined && tokens.refusal(headerOf(request, 'authorization')) !== undefined) return false
    const status = notModified(headerOf(request, 'if-none-match'), answer.etag) ? 304 : 200
    if (status === 304) {
      response.writeHead(304, answer.notModifiedHeaders)
      response.end()
    } else {
      response.writeHead(200, answer.headers)
      response.end(answer.body)
    }
    this.metrics?.answered(answer.route, request.method, status, Number(process.hrtime.bigint() - started) / 1e9)
    return true
  }
}
