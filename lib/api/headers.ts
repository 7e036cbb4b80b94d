import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { REQUEST_ID } from '../answer/answer.ts'
import type { Catalog } from '../inventory/catalog.ts'

type HeaderSet = Readonly<Record<string, string>>

/** Every JSON answer: the reference's Content-Type carries no charset. */
export const JSON_HEADERS = { 'content-type': 'application/json', vary: 'Accept' } as const

/** The methods of every API endpoint: its Allow header, on every answer of it, errors included. */
export const ENDPOINT_METHODS = 'GET, HEAD, OPTIONS'

/** The reference's middleware: on every answer under /api/, with API-Version and a fresh X-Request-ID. */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'x-frame-options': 'SAMEORIGIN',
} as const

/** The headers of the answers under /api/ for one profile (its API-Version), made once per profile. */
export interface ApiHeaders {
  /** Any answer under /api/. */
  readonly api: HeaderSet
  /** Any answer of an endpoint: `api` and Allow, as a flat name, value… list, Content-Type first (see answer.ts). */
  readonly endpoint: readonly string[]
}

const byCatalog = new WeakMap<Catalog, ApiHeaders>()

export function apiHeaders (catalog: Catalog): ApiHeaders {
  let headers = byCatalog.get(catalog)
  if (headers === undefined) {
    // `4.3.7` -> `4.3`, as the reference's settings derive it.
    const apiVersion = catalog.profile.status['service-version'].split('.').slice(0, 2).join('.')
    const api = { ...JSON_HEADERS, 'api-version': apiVersion, ...SECURITY_HEADERS }
    headers = { api, endpoint: Object.entries({ ...api, allow: ENDPOINT_METHODS }).flat() }
    byCatalog.set(catalog, headers)
  }
  return headers
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The Allow header of every answer of the route. */
    allow?: string
    /** The route's 200 is something else than JSON (its handler sets the Content-Type); its errors are JSON. */
    notJson?: true
  }
}

/**
 * The one place where answers sent through Fastify get their headers: errors, redirects,
 * OPTIONS, roots, probes. A 200 or 304 of an endpoint is written by answer() instead (see
 * answer/answer.ts), from a representation built with the same sets.
 */
export function installHeaders (app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    setHeaders(request, reply)
    done(null, payload)
  })
}

/** Sets the headers of the request's answer; also for answers sent before routing, which skip onSend. */
export function setHeaders (request: FastifyRequest, reply: FastifyReply): void {
  const { allow, notJson } = request.server.otherMethods.routeOf(request).config
  if (notJson === true && reply.statusCode < 400) return
  if (request.url.startsWith('/api/')) {
    reply.headers(apiHeaders(request.server.served.current.catalog).api)
    reply.header(REQUEST_ID, request.id)
  } else {
    reply.headers(JSON_HEADERS)
  }
  if (allow !== undefined) reply.header('allow', allow)
}
