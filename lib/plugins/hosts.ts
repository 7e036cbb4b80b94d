import type { FastifyPluginCallback } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import type { Config } from '../config.ts'
import { detail, MESSAGES } from '../errors.ts'
import { hostOf } from '../http/target.ts'

const INVALID_HOST = detail(MESSAGES.invalidHost)

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

/**
 * Every request but those of `anyHost` routes gets its base URL (from PUBLIC_URL or its host),
 * or a 400 for a host that ALLOWED_HOSTS or the reference's host syntax refuses, or a Host header
 * that does not count (http/target.ts).
 */
const hosts: FastifyPluginCallback<{ config: Pick<Config, 'publicUrl' | 'allowedHosts' | 'trustProxy'> }> = (app, { config }, done) => {
  const baseUrl = lastRemembered(baseUrlOf(config))
  const trustsProxies = config.trustProxy !== undefined
  app.decorateRequest('baseUrl', '')
  app.addHook('onRequest', (request, reply, next) => {
    if (request.routeOptions.config.anyHost === true) return next()
    const host = hostOf(request.raw)
    if (host === undefined) return reply.code(400).send(INVALID_HOST)
    // Fastify's host and protocol are a trusted proxy's X-Forwarded-Host and -Proto as sent; only https counts as secure.
    const base = baseUrl(trustsProxies && request.headers['x-forwarded-host'] !== undefined ? request.host : host, request.protocol === 'https' ? 'https' : 'http')
    if (base === undefined) return reply.code(400).send(INVALID_HOST)
    request.baseUrl = base
    next()
  })
  done()
}

export default fastifyPlugin(hosts, { name: 'hosts' })

/**
 * The scheme and authority (and any PUBLIC_URL path) that absolute URLs start with, from the
 * request's Host (or trusted X-Forwarded-Host) and protocol; undefined for a Host we refuse.
 */
type BaseUrlOf = (host: string, protocol: 'http' | 'https') => string | undefined

// The reference's host syntax check: it refuses anything else even when every host is allowed,
// which also keeps a forged Host from writing characters into links that need escaping.
const HOST_SYNTAX = /^([a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+\])(:[0-9]+)?$/i

function baseUrlOf (config: Pick<Config, 'publicUrl' | 'allowedHosts'>): BaseUrlOf {
  const { publicUrl, allowedHosts } = config
  const allowed = (host: string) => HOST_SYNTAX.test(host) && (allowedHosts === undefined || isAllowed(host, allowedHosts))
  if (publicUrl !== undefined) {
    return allowedHosts === undefined ? () => publicUrl : (host) => allowed(host) ? publicUrl : undefined
  }
  return (host, protocol) => allowed(host) ? `${protocol}://${host}` : undefined
}

/**
 * The same, remembering its last answer: a load's requests mostly carry one Host, whose pattern is
 * then tested once, and whose base URL is one string (routes/object-types.ts makes its items' url
 * prefix once for it).
 */
function lastRemembered (baseUrl: BaseUrlOf): BaseUrlOf {
  let lastHost: string | undefined
  let lastProtocol: string | undefined
  let lastBase: string | undefined
  return (host, protocol) => {
    if (host !== lastHost || protocol !== lastProtocol) {
      lastBase = baseUrl(host, protocol)
      lastHost = host
      lastProtocol = protocol
    }
    return lastBase
  }
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
