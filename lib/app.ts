import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { FastPath } from './answer/fast-path.ts'
import { httpServerFactory } from './answer/http-server.ts'
import { badUrlHandler, clientErrorHandler, installErrorAnswers } from './api/errors.ts'
import { installHeaders } from './api/headers.ts'
import { baseUrlOf, installHostCheck } from './api/hosts.ts'
import { OtherMethods } from './api/other-methods.ts'
import { Renderings } from './api/renderings.ts'
import { lacksSlash, registerEndpoints, ROUTED_METHODS } from './api/routes.ts'
import type { ApiTokens } from './api/tokens.ts'
import type { Config } from './config.ts'
import type { Served } from './inventory/served.ts'
import type { Metrics } from './ops/metrics.ts'
import { probeRoutes } from './ops/probes.ts'
import { Lifecycle } from './process/lifecycle.ts'
import { parseQuery } from './reference/query.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** What is served: the profile's catalog and the answers cached from it. */
    served: Served
    lifecycle: Lifecycle
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
  logger: Logger
}

/** Fastify's router and OtherMethods' read a query the reference's way; the fragment is never part of it. */
const ROUTER_OPTIONS = { querystringParser: (query: string) => parseQuery(query.split('#', 1)[0]!) as never }

/**
 * Fastify compiles route schemas with ajv and fast-json-stringify, which it loads when it is
 * built unless it is given compilers of its own. The service gives it no schema (every body is
 * pre-rendered bytes; the handlers check their own input, and the table's schemas serve the
 * OpenAPI document and the tests), so these compilers refuse: a schema added to a route stops
 * start-up instead of being checked by nobody. Not loading the two saves memory, and lets the
 * bundle leave them out (docs/performance.md).
 */
function noSchemaCompiler (): never {
  throw new Error('Fastify compiles no schemas in this service: a route checks its own input and sends pre-rendered bytes (lib/app.ts)')
}
const SCHEMA_CONTROLLER = { compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler } }

/** The service as a Fastify app on its own node:http server (see answer/http-server.ts). */
export async function buildApp ({ config, served, tokens, metrics, logger }: AppOptions): Promise<FastifyInstance> {
  const access = { served, trustsProxies: config.trustProxy !== undefined, ...(tokens !== undefined && { tokens }) }
  const baseUrl = baseUrlOf(config)
  const renderings = new Renderings(served, config, baseUrl, ROUTER_OPTIONS)
  // 200s skip Fastify; with per-request logs on, every request goes through it to be logged.
  const fastPath = config.accessLog ? undefined : new FastPath(access, renderings, metrics)
  const lifecycle = new Lifecycle()
  const app = Fastify({
    serverFactory: httpServerFactory(config, lifecycle, fastPath),
    // A closing server keeps answering the connections it has (see process/shutdown.ts).
    return503OnClosing: false,
    // Access logs are info: with ACCESS_LOG they are written whatever LOG_LEVEL says of the rest.
    loggerInstance: (config.accessLog && !logger.isLevelEnabled('info') ? logger.child({}, { level: 'info' }) : logger) as FastifyBaseLogger,
    // Per-request logs cost about half the throughput, so they are opt-in.
    logController: new LogController({ disableRequestLogging: !config.accessLog }),
    trustProxy: config.trustProxy ?? false,
    clientErrorHandler,
    frameworkErrors: badUrlHandler,
    routerOptions: ROUTER_OPTIONS,
    schemaController: SCHEMA_CONTROLLER,
  })
  // The API is read-only and never reads a body: declaring every method bodyless keeps
  // Fastify from parsing one (so a body cannot turn a 405 into a 400 or 415).
  for (const method of ROUTED_METHODS) app.addHttpMethod(method, { hasBody: false, overrideExisting: true })
  app.decorate('served', served)
  app.decorate('lifecycle', lifecycle)
  app.decorate('otherMethods', new OtherMethods(ROUTER_OPTIONS))
  installHeaders(app)
  installHostCheck(app, baseUrl)
  installErrorAnswers(app, lacksSlash)
  probeRoutes(app, lifecycle)
  metrics?.install(app)
  registerEndpoints(app, access, renderings)
  return app
}
