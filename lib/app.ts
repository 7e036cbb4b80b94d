import type { RequestListener, Server } from 'node:http'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginCallback, type FastifyReply, type FastifyRequest } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import type { Logger } from 'pino'
import { SHARED_SCHEMAS } from '../schemas/api.ts'
import { badUrlHandler, installErrorAnswers } from './api/errors.ts'
import { installHeaders } from './api/headers.ts'
import { baseUrlOf, installHostCheck } from './api/hosts.ts'
import { registerProbes, type Readiness } from './api/probes.ts'
import { registerMetrics } from './api/prometheus.ts'
import { RequestLogger } from './logging.ts'
import { lacksSlash, registerEndpoints, ROUTED_METHODS } from './api/routes.ts'
import { SCHEMA_CONTROLLER } from './schema-controller.ts'
import type { ApiTokens } from './tokens.ts'
import type { Config } from './config.ts'
import type { Served } from './inventory/served.ts'
import type { Metrics } from './metrics.ts'
import { parseQuery } from './reference/query.ts'
import { requestId } from './http/headers.ts'
import type { Replays } from './replay/replays.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** What is served: the profile's catalog. */
    served: Served
  }
}

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
  /** The node:http server Fastify answers on (it never listens itself). */
  server: Server
  /** Registered before the routes, so that their hooks apply to every route (docs/architecture.md, Fastify makes every answer). */
  plugins?: readonly FastifyPluginCallback[] | undefined
}

/** The router reads a query the reference's way; the fragment is never part of it. */
const ROUTER_OPTIONS = {
  querystringParser: (query: string) => {
    const fragment = query.indexOf('#')
    return parseQuery(fragment === -1 ? query : query.slice(0, fragment)) as never
  },
}

/** What a log line says of a request: Fastify's fields, with any known token in its URL masked. */
function loggedRequest (tokens: ApiTokens) {
  return (request: FastifyRequest) => ({
    method: request.method,
    url: tokens.redact(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort,
  })
}

/** What a log line says of an answer, as Fastify's own serializer does. */
const loggedReply = (reply: FastifyReply) => ({ statusCode: reply.statusCode })

/**
 * The Fastify app that makes every answer: the endpoints, the probes and `/metrics` as routes
 * with their schemas, the Host check, the headers of every answer (onSend) and the error
 * answers. It answers on the service's server, through the request handler returned beside it
 * (service.ts, which replays what it kept instead of asking again).
 */
export function buildApp ({ config, served, tokens, metrics, replays, readiness, logger, server, plugins = [] }: AppOptions): [FastifyInstance, RequestListener] {
  let handler!: RequestListener
  const appLogger = logger.child({}, {
    serializers: { req: loggedRequest(tokens), res: loggedReply },
    // Access logs are info: with ACCESS_LOG they are written whatever LOG_LEVEL says of the rest.
    ...(config.accessLog && !logger.isLevelEnabled('info') && { level: 'info' }),
  }) as FastifyBaseLogger
  const app = Fastify({
    serverFactory: (fastify) => {
      handler = fastify
      return server
    },
    // A closing server keeps answering the connections it has (see process/shutdown.ts).
    return503OnClosing: false,
    // Per-request logs cost about half the throughput, so they are opt-in. Without them Fastify
    // is given no logger: given one, it listens for the end of every answer to log it. Each
    // request's logger is then made from the app's by the factory (docs/performance.md).
    logController: new LogController({ disableRequestLogging: !config.accessLog }),
    ...(config.accessLog
      ? { loggerInstance: appLogger }
      : { childLoggerFactory: (_none, bindings, options) => new RequestLogger(appLogger, bindings, options) as unknown as FastifyBaseLogger }),
    trustProxy: config.trustProxy ?? false,
    // The id a request is logged with is the X-Request-ID its answer carries.
    genReqId: () => requestId(),
    // The server answers what Node cannot parse itself (front/server.ts).
    clientErrorHandler: () => {},
    frameworkErrors: badUrlHandler,
    routerOptions: ROUTER_OPTIONS,
    schemaController: SCHEMA_CONTROLLER,
  })
  // The API is read-only and never reads a body: declaring every method bodyless keeps
  // Fastify from parsing one (so a body cannot turn a 405 into a 400 or 415).
  for (const method of ROUTED_METHODS) app.addHttpMethod(method, { hasBody: false, overrideExisting: true })
  // Fastify given no logger has, as its `log`, one that writes nothing: plugins log with the app's.
  if (!config.accessLog) app.log = appLogger
  app.decorate('served', served)
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)
  installHeaders(app)
  installHostCheck(app, baseUrlOf(config), config.trustProxy !== undefined)
  installErrorAnswers(app, lacksSlash)
  for (const plugin of plugins) app.register(plugin)
  // After the plugins, in the app's own scope: whatever they add applies to every route.
  app.register(fastifyPlugin((routes, _options, done) => {
    registerProbes(routes, readiness)
    if (metrics !== undefined) registerMetrics(routes, metrics)
    registerEndpoints(routes, { served, sizes: config, statusKeys: config.statusKeys, tokens, replays })
    done()
  }))
  return [app, handler]
}
