import sensible from '@fastify/sensible'
import type { FastifyPluginCallback } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import type { Config } from './config.ts'
import type { Served } from './inventory/served.ts'
import type { Metrics } from './metrics.ts'
import errors from './plugins/errors.ts'
import headers from './plugins/headers.ts'
import hosts from './plugins/hosts.ts'
import metricsPlugin from './plugins/metrics.ts'
import openApi from './plugins/openapi.ts'
import replay from './plugins/replay.ts'
import servedPlugin from './plugins/served.ts'
import type { Replays } from './replay/replays.ts'
import type { EndpointOptions } from './routes/endpoint.ts'
import methods from './routes/methods.ts'
import objectTypes from './routes/object-types.ts'
import probes, { type Readiness } from './routes/probes.ts'
import roots from './routes/roots.ts'
import schema from './routes/schema.ts'
import status from './routes/status.ts'
import type { ApiTokens } from './tokens.ts'

export interface AppOptions {
  config: Config
  served: Served
  /** The known API tokens, and whether one is required. */
  tokens: ApiTokens
  /** Set when METRICS is set. */
  metrics: Metrics | undefined
  /** Where 200s are kept to be replayed; undefined when nothing is (ACCESS_LOG). */
  replays: Replays | undefined
  readiness: Readiness
  /** Registered before the routes, so that their hooks apply to every route: the faults plugin with FAULTS. */
  plugins: readonly FastifyPluginCallback[]
}

/**
 * The app that makes every answer: its plugins (plugins/) and its routes (routes/), in the order
 * their hooks must run. The composition root (service.ts) registers it on Fastify, and the front
 * hands it every request it does not replay.
 */
const serviceApp: FastifyPluginCallback<AppOptions> = (app, { config, served, tokens, metrics, replays, readiness, plugins }, done) => {
  app.register(sensible)
  app.register(methods)
  app.register(servedPlugin, { served })
  app.register(headers)
  app.register(hosts, { config })
  app.register(errors)
  app.register(openApi)
  for (const plugin of plugins) app.register(plugin)
  if (metrics !== undefined) app.register(metricsPlugin, { metrics })
  // Last of the plugins: it keeps an answer as every other hook made it.
  app.register(replay, { replays })
  app.register(probes, { readiness })
  const endpoints: EndpointOptions = { served, sizes: config, statusKeys: config.statusKeys, tokens }
  for (const routes of [roots, status, objectTypes, schema]) app.register(routes, endpoints)
  done()
}

export default fastifyPlugin(serviceApp, { name: 'app' })
