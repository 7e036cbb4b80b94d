import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** Every JSON answer: the reference's Content-Type carries no charset. */
export const JSON_HEADERS = { 'content-type': 'application/json', vary: 'Accept' } as const

/** Every answer of an API endpoint, its errors included. */
export const ENDPOINT_HEADERS = { ...JSON_HEADERS, allow: 'GET, HEAD, OPTIONS' } as const

export type HeaderSet = Readonly<Record<string, string>>

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The headers every answer of the route carries; JSON_HEADERS when unset. */
    headers?: HeaderSet
  }
}

/**
 * The one place where answers sent through Fastify get their headers: errors, redirects,
 * OPTIONS, probes. A 200 or 304 of an endpoint is written by answer() instead (see
 * answer/answer.ts), from a representation built with the same sets.
 */
export function installHeaders (app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    setHeaders(request, reply)
    done(null, payload)
  })
}

/** Sets the headers of the request's route; also for answers sent before routing, which skip onSend. */
export function setHeaders (request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(request.routeOptions.config.headers ?? JSON_HEADERS)
}
