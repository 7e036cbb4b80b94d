import type { FastifyInstance } from 'fastify'
import type { Metrics } from '../metrics.ts'

/**
 * GET /metrics for Prometheus, outside /api/ like the probes: scrapers address the process
 * by IP, so it answers any Host, and it needs no API token.
 */
export function metricsRoutes (app: FastifyInstance, metrics: Metrics): void {
  // Every answer, Fastify's and the fast path's, is counted once it is sent.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.answered(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  app.route({
    method: ['GET', 'HEAD'],
    url: '/metrics',
    config: { anyHost: true },
    async handler (_request, reply) {
      reply.header('content-type', metrics.registry.contentType)
      return metrics.registry.metrics()
    },
  })
}
