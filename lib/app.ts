import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify'
import { badUrlHandler, installErrorAnswers } from './api/errors.ts'
import { installHeaders } from './api/headers.ts'
import { installHostCheck } from './api/hosts.ts'
import { OtherMethods } from './api/other-methods.ts'
import { lacksSlash, registerEndpoints, ROUTED_METHODS } from './api/routes.ts'
import type { ApiTokens } from './api/tokens.ts'
import type { Served } from './inventory/served.ts'
import { requestId } from './answer/answer.ts'
import type { Listener } from './answer/http-server.ts'
import { ROUTER_OPTIONS, type Service } from './service.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** What is served: the profile's catalog and the answers cached from it. */
    served: Served
  }
}

/**
 * Fastify compiles route schemas with ajv and fast-json-stringify, which it loads when it is
 * built unless it is given compilers of its own. The service gives it no schema (every body is
 * pre-rendered bytes; the handlers check their own input, and the table's schemas serve the
 * OpenAPI document and the tests), so these compilers refuse: a schema added to a route fails
 * the app's build, which every test makes, instead of being checked by nobody. Not loading the
 * two saves memory, and lets the bundle leave them out (docs/performance.md).
 */
function noSchemaCompiler (): never {
  throw new Error('Fastify compiles no schemas in this service: a route checks its own input and sends pre-rendered bytes (lib/app.ts)')
}
const SCHEMA_CONTROLLER = { compilersFactory: { buildValidator: noSchemaCompiler, buildSerializer: noSchemaCompiler } }

/** What a log line says of a request: Fastify's fields, with any known token in its URL masked. */
function loggedRequest (tokens: ApiTokens | undefined) {
  return (request: FastifyRequest) => ({
    method: request.method,
    url: tokens === undefined ? request.url : tokens.redact(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort,
  })
}

/**
 * What the service answers through Fastify: every request its fast path leaves (errors,
 * redirects, OPTIONS, other methods, `/metrics`), and with ACCESS_LOG every request. Fastify
 * answers on the service's server and never listens itself; it gets its requests from the
 * service (service.ts), through the handler returned beside it.
 */
export function buildApp ({ config, served, metrics, logger, access, baseUrl, renderings, probes, server }: Service): [FastifyInstance, Listener] {
  let handler!: Listener
  const app = Fastify({
    serverFactory: (fastify) => {
      handler = fastify
      return server
    },
    // A closing server keeps answering the connections it has (see process/shutdown.ts).
    return503OnClosing: false,
    // Access logs are info: with ACCESS_LOG they are written whatever LOG_LEVEL says of the rest.
    loggerInstance: logger.child({}, {
      serializers: { req: loggedRequest(access.tokens) },
      ...(config.accessLog && !logger.isLevelEnabled('info') && { level: 'info' }),
    }) as FastifyBaseLogger,
    // Per-request logs cost about half the throughput, so they are opt-in.
    logController: new LogController({ disableRequestLogging: !config.accessLog }),
    trustProxy: config.trustProxy ?? false,
    // The id a request is logged with is the X-Request-ID its answer carries.
    genReqId: () => requestId(),
    // The server answers what Node cannot parse itself (http-server.ts), Fastify or not.
    clientErrorHandler: () => {},
    frameworkErrors: badUrlHandler,
    routerOptions: ROUTER_OPTIONS,
    schemaController: SCHEMA_CONTROLLER,
  })
  // The API is read-only and never reads a body: declaring every method bodyless keeps
  // Fastify from parsing one (so a body cannot turn a 405 into a 400 or 415).
  for (const method of ROUTED_METHODS) app.addHttpMethod(method, { hasBody: false, overrideExisting: true })
  app.decorate('served', served)
  app.decorate('otherMethods', new OtherMethods(ROUTER_OPTIONS))
  installHeaders(app)
  installHostCheck(app, baseUrl, access.trustsProxies)
  installErrorAnswers(app, lacksSlash)
  probes.install(app)
  metrics?.install(app)
  registerEndpoints(app, access, renderings)
  return [app, handler]
}
