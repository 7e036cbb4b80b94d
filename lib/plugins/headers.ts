import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { JSON_HEADERS, REQUEST_ID } from '../http/headers.ts'
import { apiVersionOf, type Catalog } from '../inventory/catalog.ts'

/** The reference's middleware: on every answer under /api/, with API-Version and a fresh X-Request-ID. */
const SECURITY_HEADERS = [
  ['x-content-type-options', 'nosniff'],
  ['referrer-policy', 'same-origin'],
  ['cross-origin-opener-policy', 'same-origin'],
  ['x-frame-options', 'SAMEORIGIN'],
] as const

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The Allow header of every answer of the route. */
    allow?: string
    /** The route's handler sets the Content-Type of its 200 (not JSON); its errors are JSON. */
    ownContentType?: true
  }
}

/** The headers of every answer under /api/ for one profile (its API-Version), made once per profile. */
const byCatalog = new WeakMap<Catalog, ReadonlyArray<readonly [string, string]>>()

function apiHeaders (catalog: Catalog): ReadonlyArray<readonly [string, string]> {
  let headers = byCatalog.get(catalog)
  if (headers === undefined) {
    const apiVersion = apiVersionOf(catalog.profile.status['service-version'])
    headers = [['api-version', apiVersion], ...SECURITY_HEADERS]
    byCatalog.set(catalog, headers)
  }
  return headers
}

/** The one place where answers get their headers: every answer Fastify sends, 200s included. */
const headers: FastifyPluginCallback = (app, _options, done) => {
  app.addHook('onSend', (request, reply, payload, next) => {
    setHeaders(request, reply)
    next(null, payload)
  })
  done()
}

export default fastifyPlugin(headers, { name: 'headers', decorators: { fastify: ['served'] } })

/** Sets the headers of the request's answer; also for answers sent before routing, which skip onSend. */
export function setHeaders (request: FastifyRequest, reply: FastifyReply): void {
  const { allow, ownContentType } = request.routeOptions.config
  const status = reply.statusCode
  const own = ownContentType === true && status < 400
  // A 304 has no body to describe.
  if (!own && status !== 304) reply.header('content-type', JSON_HEADERS['content-type'])
  if (request.url.startsWith('/api/')) {
    reply.header('vary', JSON_HEADERS.vary)
    for (const [name, value] of apiHeaders(request.server.served.current.catalog)) reply.header(name, value)
    reply.header(REQUEST_ID, request.id)
  } else if (!own) {
    reply.header('vary', JSON_HEADERS.vary)
  }
  if (allow !== undefined) reply.header('allow', allow)
}
