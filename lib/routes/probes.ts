import type { FastifyPluginCallback } from 'fastify'
import { Detail, Probe } from '../../schemas/api.ts'
import { MESSAGES } from '../errors.ts'
import { toJson } from '../reference/json.ts'
import { OTHER_METHODS } from './methods.ts'
import { PROBE_PATHS } from '../paths.ts'

const ALIVE = Buffer.from(toJson({ status: 'ok' }))
const READY = Buffer.from(toJson({ status: 'ready' }))
const DRAINING = Buffer.from(toJson({ status: 'draining' }))

/** Whether the process takes traffic: false from the shutdown signal on (front/lifecycle.ts). */
export interface Readiness {
  readonly ready: boolean
}

/**
 * Liveness and readiness for orchestrators and load balancers, outside /api/ and the OpenAPI
 * document: probes address the process by IP, so these answer any Host; and never from a
 * replay, since readiness changes.
 */
const probes: FastifyPluginCallback<{ readiness: Readiness }> = (app, { readiness }, done) => {
  const config = { anyHost: true, replay: false } as const
  const schema = { hide: true, response: { 200: Probe, 503: Probe, 405: Detail } } as const
  const answers: Record<typeof PROBE_PATHS[number], () => readonly [200 | 503, Buffer]> = {
    '/healthz': () => [200, ALIVE],
    '/readyz': () => readiness.ready ? [200, READY] : [503, DRAINING],
  }
  for (const url of PROBE_PATHS) {
    const answer = answers[url]
    app.route({
      method: 'GET',
      url,
      config,
      schema,
      handler (_request, reply) {
        const [status, body] = answer()
        reply.code(status).send(body)
      },
    })
    app.route({
      method: OTHER_METHODS.concat('OPTIONS'),
      url,
      config: { ...config, allow: 'GET, HEAD' },
      schema,
      handler: (request) => { throw app.httpErrors.methodNotAllowed(MESSAGES.methodNotAllowed(request.method)) },
    })
  }
  done()
}

export default probes
