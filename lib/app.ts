import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import sensible from '@fastify/sensible'
import { baseUrlOf } from './base-url.ts'
import type { Config } from './config.ts'
import { badUrlHandler, clientErrorHandler, installErrorAnswers } from './errors.ts'
import { API_HEADERS, detail, JSON_HEADERS, sendJson } from './http.ts'
import { FastPath } from './fast-path.ts'
import { httpServerFactory } from './http-server.ts'
import { Lifecycle } from './lifecycle.ts'
import { parseQuery } from './query.ts'
import type { ResponseCache } from './response-cache.ts'
import type { Served } from './served.ts'
import type { ApiTokens } from './tokens.ts'
import { ROUTED_METHODS } from './routes/endpoint.ts'
import { objectTypeRoutes } from './routes/object-types.ts'
import type { Metrics } from './metrics.ts'
import { metricsRoutes } from './routes/metrics.ts'
import { probeRoutes } from './routes/probes.ts'
import { schemaRoutes } from './routes/schema.ts'
import { statusRoutes } from './routes/status.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Scheme and host (or PUBLIC_URL) that absolute URLs in the answer start with. */
    baseUrl: string
  }
  interface FastifyInstance {
    responseCache: ResponseCache
    lifecycle: Lifecycle
  }
  interface FastifyContextConfig {
    /** Answered whatever the Host: probes address the process by IP. */
    anyHost?: boolean
  }
}

export interface AppOptions {
  config: Config
  /** What to serve; swapping its catalog is reloading the profile. */
  served: Served
  /** Required when LOGIN_REQUIRED (config.apiTokensFile) is set. */
  tokens?: ApiTokens
  /** Required when METRICS is set. */
  metrics?: Metrics
  logger: FastifyBaseLogger
}

const INVALID_HOST = detail('Invalid Host header.')

export async function buildApp ({ config, served, tokens, metrics, logger }: AppOptions): Promise<FastifyInstance> {
  const guards = { served, trustsProxies: config.trustProxy !== undefined, ...(tokens !== undefined && { tokens }) }
  // Cache hits skip Fastify; with per-request logs on, every request goes through it to be logged.
  const fastPath = config.accessLog ? undefined : new FastPath(guards, metrics)
  const lifecycle = new Lifecycle()
  const app = Fastify({
    serverFactory: httpServerFactory(config, lifecycle, fastPath),
    // A closing server keeps answering the connections it has (see shutdown.ts).
    return503OnClosing: false,
    loggerInstance: logger,
    // Per-request logs cost about half the throughput, so they are opt-in.
    logController: new LogController({ disableRequestLogging: !config.accessLog }),
    trustProxy: config.trustProxy ?? false,
    clientErrorHandler,
    frameworkErrors: badUrlHandler,
    routerOptions: {
      // The reference's reading of a query string; the fragment is never part of it.
      querystringParser: (query) => parseQuery(query.split('#', 1)[0]!) as never,
    },
  })
  // The API is read-only and never reads a body: declaring every method bodyless keeps
  // Fastify from parsing one (so a body cannot turn a 405 into a 400 or 415).
  for (const method of ROUTED_METHODS) app.addHttpMethod(method, { hasBody: false, overrideExisting: true })
  await app.register(sensible)
  installErrorAnswers(app)

  const baseUrl = baseUrlOf(config)
  app.decorateRequest('baseUrl', '')
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.anyHost === true) return done()
    const base = baseUrl(request)
    if (base === undefined) {
      reply.headers(request.is404 ? JSON_HEADERS : API_HEADERS)
      return sendJson(reply, 400, INVALID_HOST)
    }
    request.baseUrl = base
    done()
  })

  app.decorate('responseCache', { getter: () => served.current.cache })
  app.decorate('lifecycle', lifecycle)
  probeRoutes(app, lifecycle)
  if (metrics !== undefined) metricsRoutes(app, metrics)
  statusRoutes(app, guards)
  objectTypeRoutes(app, guards, config)
  schemaRoutes(app, guards, config)
  return app
}
