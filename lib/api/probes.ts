import type { FastifyInstance } from 'fastify'
import { Detail, Probe } from '../../schemas/api.ts'
import { toJson } from '../reference/json.ts'
import { errors, sendJson } from './errors.ts'
import { OTHER_METHODS } from './routes.ts'

const ALIVE = Buffer.from(toJson({ status: 'ok' }))
const READY = Buffer.from(toJson({ status: 'ready' }))
const DRAINING = Buffer.from(toJson({ status: 'draining' }))

/** The probes' paths; every answer's body is a schemas/api.ts Probe. */
export const PROBE_PATHS = ['/healthz', '/readyz'] as const

/** Whether the process takes traffic: false from the shutdown signal on (lib/front/lifecycle.ts). */
export interface Readiness {
  readonly ready: boolean
}

/**
 * Liveness and readiness for orchestrators and load balancers, outside /api/ and the OpenAPI
 * document: probes address the process by IP, so these answer any Host; and never from a
 * replay, since readiness changes.
 */
export function registerProbes (app: FastifyInstance, readiness: Readiness): void {
  const config = { anyHost: true, replay: false } as const
  const schema = { hide: true, response: { 200: Probe, 503: Probe, 405: Detail } } as const
  const probes = [
    ['/healthz', () => [200, ALIVE] as const],
    ['/readyz', () => readiness.ready ? [200, READY] as const : [503, DRAINING] as const],
  ] as const
  for (const [url, probe] of probes) {
    app.route({
      method: 'GET',
      url,
      config,
      schema,
      handler (_request, reply) {
        const [status, body] = probe()
        sendJson(reply, status, body)
      },
    })
    app.route({ method: OTHER_METHODS.concat('OPTIONS'), url, config: { ...config, allow: 'GET, HEAD' }, schema, handler: (request) => { throw errors.methodNotAllowed(request.method) } })
  }
}
