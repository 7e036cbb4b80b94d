import type { FastifyPluginCallback } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { MESSAGES } from '../errors.ts'
import { cameAbsolute } from '../http/target.ts'
import type { Metrics } from '../metrics.ts'
import { METRICS_PATH } from '../paths.ts'

/**
 * Counts every answer Fastify sends (the front counts its replays) by route, as the OpenAPI
 * document writes it, and serves GET /metrics for Prometheus, outside /api/ and the OpenAPI
 * document like the probes: scrapers address the process by IP, so it answers any Host, and it
 * needs no API token. Only the type of Metrics is imported: prom-client is loaded when METRICS is
 * set (service.ts), not by every replica.
 */
const metricsPlugin: FastifyPluginCallback<{ metrics: Metrics }> = (app, { metrics }, done) => {
  // Every route registered after this plugin (app.ts registers it before the routes).
  app.addHook('onRoute', (route) => { metrics.routed(route.url, [route.method].flat()) })
  app.addHook('onResponse', (request, reply, next) => {
    metrics.answered(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
    next()
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
      if (request.url !== METRICS_PATH || cameAbsolute(request.raw)) throw app.httpErrors.notFound(MESSAGES.notFound)
      reply.header('content-type', metrics.registry.contentType)
      return metrics.scrape()
    },
  })
  done()
}

export default fastifyPlugin(metricsPlugin, { name: 'metrics', dependencies: ['@fastify/sensible'] })
