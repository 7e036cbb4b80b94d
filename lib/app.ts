import type { Server } from 'node:http'
import sensible from '@fastify/sensible'
import Fastify, { type FastifyInstance, type FastifyPluginCallback } from 'fastify'
import type { Logger } from 'pino'
import { SHARED_SCHEMAS } from '../schemas/api.ts'
import type { Config } from './config.ts'
import { requestId } from './http/headers.ts'
import { queryText } from './http/target.ts'
import type { Served } from './inventory/served.ts'
import { appLoggerOf, loggingOptions } from './logging.ts'
import type { Metrics } from './metrics.ts'
import errors, { badUrlHandler, clientErrorHandler } from './plugins/errors.ts'
import headers from './plugins/headers.ts'
import hosts from './plugins/hosts.ts'
import metricsPlugin from './plugins/metrics.ts'
import openApi from './plugins/openapi.ts'
import replay from './plugins/replay.ts'
import servedPlugin from './plugins/served.ts'
import { parseQuery } from './reference/query.ts'
import type { Replays } from './replay/replays.ts'
import type { EndpointOptions } from './routes/endpoint.ts'
import { ROUTED_METHODS } from './routes/methods.ts'
import objectTypes from './routes/object-types.ts'
import probes, { type Readiness } from './routes/probes.ts'
import roots from './routes/roots.ts'
import schema from './routes/schema.ts'
import status from './routes/status.ts'
import { SCHEMA_CONTROLLER } from './schema-controller.ts'
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
  logger: Logger
  /** The node:http server Fastify answers on, through `app.routing` (it never listens itself). */
  server: Server
  /** Registered before the routes, so that their hooks apply to every route: the faults plugin with FAULTS. */
  plugins: readonly FastifyPluginCallback[]
}

/**
 * The Fastify app that makes every answer: Fastify's options, then its plugins (plugins/) and its
 * routes (routes/), in the order their hooks must run. The front (service.ts) hands it every request
 * it does not replay.
 */
export function buildApp ({ config, served, tokens, metrics, replays, readiness, logger, server, plugins }: AppOptions): FastifyInstance {
  const log = appLoggerOf(config, logger, tokens)
  const app = Fastify({
    serverFactory: () => server,
    // A closing server keeps answering the connections it has (see process/shutdown.ts).
    return503OnClosing: false,
    ...loggingOptions(config, log),
    trustProxy: config.trustProxy ?? false,
    // The id a request is logged with is the X-Request-ID its answer carries.
    genReqId: () => requestId(),
    clientErrorHandler,
    frameworkErrors: badUrlHandler,
    // The query is read the reference's way; a fragment is never part of it.
    routerOptions: { querystringParser: (query: string) => parseQuery(queryText(query)) as never },
    schemaController: SCHEMA_CONTROLLER,
  })
  // The API is read-only and never reads a body: declaring every method bodyless keeps
  // Fastify from parsing one (so a body cannot turn a 405 into a 400 or 415).
  for (const method of ROUTED_METHODS) app.addHttpMethod(method, { hasBody: false, overrideExisting: true })
  // Fastify given no logger has, as its `log`, one that writes nothing: plugins log with the app's.
  if (!config.accessLog) app.log = log
  for (const shared of SHARED_SCHEMAS) app.addSchema(shared)
  app.register(sensible)
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
  return app
}
