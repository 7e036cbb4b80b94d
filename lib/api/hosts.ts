import type { FastifyInstance } from 'fastify'
import { hostOf } from '../http/target.ts'
import type { Config } from '../config.ts'
import { refuseHost } from './errors.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Scheme and host (or PUBLIC_URL) that absolute URLs in the answer start with. */
    baseUrl: string
  }
  interface FastifyContextConfig {
    /** Answered whatever the Host: probes and scrapers address the process by IP. */
    anyHost?: true
  }
}

/** Every request but those of `anyHost` routes gets its base URL, or a 400 for a host we refuse or a Host header that does not count (target.ts). */
export function installHostCheck (app: FastifyInstance, baseUrl: BaseUrlOf, trustsProxies: boolean): void {
  app.decorateRequest('baseUrl', '')
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.anyHost === true) return done()
    const host = hostOf(request.raw)
    if (host === undefined) return refuseHost(reply)
    // Fastify's host and protocol are a trusted proxy's X-Forwarded-Host and -Proto as sent; only https counts as secure.
    const base = baseUrl(trustsProxies && request.headers['x-forwarded-host'] !== undefined ? request.host : host, request.protocol === 'https' ? 'https' : 'http')
    if (base === undefined) return refuseHost(reply)
    request.baseUrl = base
    done()
  })
}

/**
 * The scheme and authority (and any PUBLIC_URL path) that absolute URLs start with, from the
 * request's Host (or trusted X-Forwarded-Host) and protocol; undefined for a Host we refuse.
 */
export type BaseUrlOf = (host: string, protocol: 'http' | 'https') => string | undefined

// The reference's host syntax check: it refuses anything else even when every host is allowed,
// which also keeps a forged Host from writing characters into links that need escaping.
const HOST_SYNTAX = /^([a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+\])(:[0-9]+)?$/i

export function baseUrlOf (config: Pick<Config, 'publicUrl' | 'allowedHosts'>): BaseUrlOf {
  const { publicUrl, allowedHosts } = config
  const allowed = (host: string) => HOST_SYNTAX.test(host) && (allowedHosts === undefined || isAllowed(host, allowedHosts))
  if (publicUrl !== undefined) {
    return allowedHosts === undefined ? () => publicUrl : (host) => allowed(host) ? publicUrl : undefined
  }
  return (host, protocol) => allowed(host) ? `${protocol}://${host}` : undefined
}

/** Django's validate_host: patterns are exact names, `.domain` for a domain and its subdomains. */
function isAllowed (host: string, patterns: readonly string[]): boolean {
  const lower = host.toLowerCase()
  let domain = lower.endsWith(']') ? lower : lower.replace(/:[0-9]+$/, '')
  if (domain.endsWith('.')) domain = domain.slice(0, -1)
  return patterns.some((pattern) => pattern.startsWith('.')
    ? domain === pattern.slice(1) || domain.endsWith(pattern)
    : domain === pattern)
}
