import type { FastifyInstance } from 'fastify'
import { errors, sendJson } from '../api/errors.ts'
import type { Lifecycle } from '../process/lifecycle.ts'
import { toJson } from '../reference/json.ts'

const ALIVE = Buffer.from(toJson({ status: 'ok' }))
const READY = Buffer.from(toJson({ status: 'ready' }))
const DRAINING = Buffer.from(toJson({ status: 'draining' }))

/** The probes' paths; every answer's body is a schemas/api.ts Probe. */
export const PROBE_PATHS = ['/healthz', '/readyz'] as const

/**
 * Liveness and readiness for orchestrators and load balancers, outside /api/: probes
 * address the process by IP, so these answer any Host.
 */
export function probeRoutes (app: FastifyInstance, lifecycle: Lifecycle): void {
  const probe = (url: typeof PROBE_PATHS[number], answer: () => [number, Buffer]) => {
    app.route({
      method: ['GET', 'HEAD'],
      url,
      config: { anyHost: true },
      handler (_request, reply) {
        const [status, body] = answer()
        sendJson(reply, status, body)
      },
    })
    app.otherMethods.add(url, { anyHost: true, allow: 'GET, HEAD' }, (request) => {
      throw errors.methodNotAllowed(request.method)
    })
  }
  probe('/healthz', () => [200, ALIVE])
  probe('/readyz', () => lifecycle.ready ? [200, READY] : [503, DRAINING])
}
