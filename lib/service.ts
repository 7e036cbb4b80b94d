import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyPluginCallback } from 'fastify'
import type { Logger } from 'pino'
import type { Profile } from '../schemas/profile.ts'
import { timers } from './builtins.ts'
import serviceApp from './app.ts'
import type { Config } from './config.ts'
import type { Faults } from './faults/faults.ts'
import { Lifecycle } from './front/lifecycle.ts'
import { listen } from './front/listen.ts'
import { createHttpServer } from './front/server.ts'
import { requestId } from './http/headers.ts'
import { queryText } from './http/target.ts'
import { Catalog } from './inventory/catalog.ts'
import { loadProfile } from './inventory/profile.ts'
import { Served } from './inventory/served.ts'
import { appLoggerOf, loggingOptions } from './logging.ts'
import type { Metrics } from './metrics.ts'
import { FAULT_PATHS } from './paths.ts'
import { badUrlHandler, clientErrorHandler } from './plugins/errors.ts'
import { parseQuery } from './reference/query.ts'
import { replay, Replays } from './replay/replays.ts'
import { SCHEMA_CONTROLLER } from './schema-controller.ts'
import { ApiTokens } from './tokens.ts'

/** What a configuration names, read and checked: the profile's catalog, the tokens, the faults. */
export interface Loaded {
  catalog: Catalog
  tokens: ApiTokens
  faults: Faults | undefined
  /** How long reading them took. */
  seconds: number
}

/**
 * Reads what the configuration names; anything wrong throws here (ProfileError, TokensError,
 * FaultsError), before a port is opened. `profile` stands in for the configured file (tests).
 */
export async function load (config: Config, profile?: Profile): Promise<Loaded> {
  const started = process.hrtime.bigint()
  const catalog = new Catalog(profile ?? loadProfile(config.profile))
  const tokens = new ApiTokens(config.apiTokensFile, config.loginRequired)
  // The faults' rules and generator are loaded only when asked for.
  const faults = config.faults === undefined ? undefined : new (await import('./faults/faults.ts')).Faults(config.faults, FAULT_PATHS)
  return { catalog, tokens, faults, seconds: Number(process.hrtime.bigint() - started) / 1e9 }
}

/**
 * The composition root: the service for a configuration and what it names. The `serve` command and
 * the tests both build it here. prom-client, the faults plugin and ioredis are loaded only when
 * configured: they cost start-up time and memory.
 */
export async function createService (config: Config, { catalog, tokens, faults, seconds }: Loaded, logger: Logger, plugins: readonly FastifyPluginCallback[] = []): Promise<Service> {
  const served = new Served(catalog)
  const lifecycle = new Lifecycle()
  // With per-request logs on, every request goes through Fastify to be logged: nothing is replayed.
  const replays = config.accessLog ? undefined : new Replays(served, config.cacheBytes, config.trustProxy !== undefined, faults)
  const metrics = config.metrics ? new (await import('./metrics.ts')).Metrics(served, replays, lifecycle) : undefined
  metrics?.profileLoaded(seconds)
  const faultsPlugin = faults === undefined ? [] : [(await import('./plugins/faults.ts')).faultsPlugin({ faults, metrics, statusKeys: config.statusKeys })]
  const service = new Service({ config, served, tokens, faults, metrics, replays, lifecycle, logger, plugins: [...plugins, ...faultsPlugin] })
  if (config.redisUrl !== undefined) {
    const { pollRqWorkers } = await import('./inventory/rq-workers.ts')
    const poll = pollRqWorkers(config.redisUrl, config.rqPollIntervalMs, logger, {
      changed: (count) => served.setWorkerCount(count),
      ...(metrics !== undefined && { polled: metrics.redisPoll() }),
    })
    service.onClose(poll.close)
  }
  return service
}

interface ServiceParts {
  config: Config
  /** What is served; swapping its catalog is reloading the profile. */
  served: Served
  /** The known API tokens (config.apiTokensFile) and whether one is required. */
  tokens: ApiTokens
  /** Set with FAULTS. */
  faults: Faults | undefined
  /** Set with METRICS. */
  metrics: Metrics | undefined
  /** Where Fastify's 200s are kept and replayed from; none with ACCESS_LOG, which logs every request. */
  replays: Replays | undefined
  /** Where the process is on its way out. */
  lifecycle: Lifecycle
  logger: Logger
  /** Fastify plugins, registered before the routes (app.ts). */
  plugins: readonly FastifyPluginCallback[]
}

/**
 * The service: one node:http server, the front, on every listening socket, in front of Fastify
 * and the app (app.ts), which makes every answer. What the front does itself is replay: a request
 * that Fastify answered with a 200 before (same Host and URL, see replay/) gets that answer again,
 * once its token passes the same check as Fastify's, without Fastify's routing, hooks and
 * reply: that is the bare-Node speed of the service (docs/architecture.md).
 */
export class Service {
  readonly config: Config
  readonly served: Served
  readonly tokens: ApiTokens
  readonly faults: Faults | undefined
  readonly metrics: Metrics | undefined
  readonly replays: Replays | undefined
  readonly logger: Logger
  readonly lifecycle: Lifecycle
  readonly app: FastifyInstance
  readonly server: Server
  #listening: Promise<void> | undefined
  readonly #onClose: Array<() => Promise<void>> = []

  constructor ({ config, served, tokens, faults, metrics, replays, lifecycle, logger, plugins }: ServiceParts) {
    this.config = config
    this.served = served
    this.tokens = tokens
    this.faults = faults
    this.metrics = metrics
    this.replays = replays
    this.lifecycle = lifecycle
    this.logger = logger
    this.server = createHttpServer(config, (request, response) => {
      if (this.lifecycle.closing) response.setHeader('connection', 'close')
      if (replays === undefined || !replayed(request, response, replays, tokens, metrics)) this.app.routing(request, response)
    })
    this.app = createFastify(config, tokens, logger, this.server)
    this.app.register(serviceApp, { config, served, tokens, metrics, replays, readiness: this.lifecycle, plugins })
  }

  /** Listens on `host:port` (front/listen.ts), once the app is ready. */
  listen (port: number, host: string): Promise<void> {
    this.#listening = (async () => {
      await this.app.ready()
      await listen(this, port, host)
    })()
    return this.#listening
  }

  /** Runs once the service is closed: what it started beside serving (the Redis poll). */
  onClose (hook: () => Promise<void>): void {
    this.#onClose.push(hook)
  }

  /**
   * Stops accepting, closes the idle connections and waits for the others to end, then closes
   * Fastify and what onClose added. See process/shutdown.ts for the order that drops nothing before this.
   */
  async close (): Promise<void> {
    // A socket still being bound is closed once bound, so that none outlives the service.
    await this.#listening?.catch(() => {})
    await this.lifecycle.stopAccepting()
    this.lifecycle.closing = true
    // A request whose bytes have arrived is read before its connection is judged idle: on a busy
    // machine a timer can run before the reads that were due, and closing a connection with a
    // request unread in it resets it.
    await timers.setImmediate()
    // node:http's close: the idle connections now, the others after their answer (Connection: close).
    this.server.close()
    await this.lifecycle.drained()
    await this.app.close()
    for (const hook of this.#onClose) await hook()
  }
}

/** Fastify, answering on the front's server through `app.routing` (it never listens itself). */
function createFastify (config: Config, tokens: ApiTokens, logger: Logger, server: Server): FastifyInstance {
  const log = appLoggerOf(config, logger, tokens)
  const fastify = Fastify({
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
  // Fastify given no logger has, as its `log`, one that writes nothing: plugins log with the app's.
  if (!config.accessLog) fastify.log = log
  return fastify
}

/** Replays the kept answer to a GET or HEAD, if there is one and the request's token passes; true when it did. */
function replayed (request: IncomingMessage, response: ServerResponse, replays: Replays, tokens: ApiTokens, metrics: Metrics | undefined): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false
  const started = metrics === undefined ? 0n : process.hrtime.bigint()
  // A refused token goes to Fastify, which answers the 403.
  if (tokens.refusal(request) !== undefined) return false
  const kept = replays.find(request)
  if (kept === undefined) return false
  const status = replay(request, response, kept)
  metrics?.answered(kept.route, request.method, status, Number(process.hrtime.bigint() - started) / 1e9)
  return true
}
