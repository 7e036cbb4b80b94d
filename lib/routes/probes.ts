import type { FastifyInstance } from 'fastify'
import { Probe } from '../../schemas/api.ts'
import { JSON_HEADERS, sendJson } from '../http.ts'
import { toJson } from '../json.ts'
import type { Lifecycle } from '../lifecycle.ts'

const ALIVE = Buffer.from(toJson({ status: 'ok' }))
const READY = Buffer.from(toJson({ status: 'ready' }))
const DRAINING = Buffer.from(toJson({ status: 'draining' }))

/**
 * Liveness and readiness for orchestrators and load balancers, outside /api/: probes
 * address the process by IP, so these answer any Host (see `anyHost` in app.ts).
 */
export function probeRoutes (app: FastifyInstance, lifecycle: Lifecycle): void {
  const probe = (url: string, answer: () => [number, Buffer]) => app.route({
    method: ['GET', 'HEAD'],
    url,
    config: { anyHost: true },
    schema: { response: { 200: Probe, 503: Probe } },
    handler (_request, reply) {
      const [status, body] = answer()
      reply.headers(JSON_HEADERS)
      sendJson(reply, status, body)
    },
  })
  probe('/healthz', () => [200, ALIVE])
  probe('/readyz', () => lifecycle.ready ? [200, READY] : [503, DRAINING])
}
