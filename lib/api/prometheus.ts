import type { FastifyInstance } from 'fastify'
import type { Metrics } from '../metrics.ts'
import { cameAbsolute } from '../http/target.ts'
import { errors } from './errors.ts'

const METRICS_PATH = '/metrics'

/**
 * Counts every answer Fastify sends (the service counts its replays) and serves GET /metrics
 * for Prometheus, outside /api/ and the OpenAPI document like the probes: scrapers address the
 * process by IP, so it answers any Host, and it needs no API token. Only the type of Metrics is
 * imported: prom-client is loaded when METRICS is set (process/serve.ts), not by every replica.
 */
export function registerMetrics (app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.answered(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  app.route({
    method: 'GET',
    url: METRICS_PATH,
    // Prometheus's text format, not JSON; never replayed, since it counts.
    config: { anyHost: true, ownContentType: true, replay: false },
    schema: { hide: true },
    handler: async (request, reply) => {
      // One spelling only, so that an edge rule on this exact path holds: Fastify's router
      // also takes `/%6detrics` and `http://host/metrics` (docs/behaviour.md).
      if (request.url !== METRICS_PATH || cameAbsolute(request.raw)) throw errors.notFound()
      reply.header('content-type', metrics.registry.contentType)
      return metrics.scrape()
    },
  })
}
