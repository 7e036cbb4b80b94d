import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { FastPath } from './answer/fast-path.ts'
import { createHttpServer, type Listener } from './answer/http-server.ts'
import { baseUrlOf, type BaseUrlOf } from './api/hosts.ts'
import { Renderings } from './api/renderings.ts'
import type { ApiAccess } from './api/routes.ts'
import type { ApiTokens } from './api/tokens.ts'
import type { Config } from './config.ts'
import type { Served } from './inventory/served.ts'
import type { Metrics } from './ops/metrics.ts'
import { Probes } from './ops/probes.ts'
import { listen } from './process/listen.ts'
import { Lifecycle } from './process/lifecycle.ts'
import { parseQuery } from './reference/query.ts'

export interface ServiceOptions {
  config: Config
  /** What to serve; swapping its catalog is reloading the profile. */
  served: Served
  /** Required when LOGIN_REQUIRED (config.apiTokensFile) is set. */
  tokens?: ApiTokens
  /** Required when METRICS is set. */
  metrics?: Metrics
  logger: Logger
}

/** Fastify's router and ours read a query the reference's way; the fragment is never part of it. */
export const ROUTER_OPTIONS = {
  querystringParser: (query: string) => {
    const fragment = query.indexOf('#')
    return parseQuery(fragment === -1 ? query : query.slice(0, fragment)) as never
  },
}

/**
 * The service: one node:http server, on every listening socket, whose listener answers the
 * endpoints' 200s and the probes itself (fast-path.ts) and hands the rest to the Fastify app
 * (app.ts). That app is built when the first request needs it, an error, a redirect, OPTIONS,
 * `/metrics`: a replica starts, is probed and serves without loading Fastify, which was some
 * 50 ms of its start-up and 7 MiB of its memory (docs/performance.md). Requests that arrive
 * while it is being built wait for it.
 */
export class Service {
  readonly config: Config
  readonly served: Served
  readonly metrics: Metrics | undefined
  readonly logger: Logger
  readonly lifecycle = new Lifecycle()
  readonly access: ApiAccess
  readonly baseUrl: BaseUrlOf
  readonly renderings: Renderings
  readonly probes: Probes
  readonly server: Server
  #app: Promise<[FastifyInstance, Listener]> | undefined
  /** Fastify's request handler, once its app is ready. */
  #fastify: Listener | undefined
  #listening: Promise<void> | undefined
  readonly #onClose: Array<() => Promise<void>> = []

  constructor ({ config, served, tokens, metrics, logger }: ServiceOptions) {
    this.config = config
    this.served = served
    this.metrics = metrics
    this.logger = logger
    this.access = { served, trustsProxies: config.trustProxy !== undefined, ...(tokens !== undefined && { tokens }) }
    this.baseUrl = baseUrlOf(config)
    this.renderings = new Renderings(served, config, this.baseUrl, ROUTER_OPTIONS.querystringParser)
    this.probes = new Probes(this.lifecycle)
    // With per-request logs on, every request goes through Fastify to be logged.
    const fastPath = config.accessLog ? undefined : new FastPath(this.access, this.renderings, this.probes, metrics)
    this.server = createHttpServer(config, logger, (request, response) => {
      if (this.lifecycle.closing) response.setHeader('connection', 'close')
      if (fastPath?.answered(request, response) === true) return
      if (this.#fastify !== undefined) return this.#fastify(request, response)
      // A build that fails (a module missing from a broken install) is an unhandled rejection:
      // the process logs it and stops, as on any uncaught error (shutdown.ts).
      this.#whenReady(request, response)
    })
  }

  /** The Fastify app, built on first use; not ready until it first answers (hooks may still be added). */
  async app (): Promise<FastifyInstance> {
    return (await this.#built())[0]
  }

  #built (): Promise<[FastifyInstance, Listener]> {
    this.#app ??= import('./app.ts').then(({ buildApp }) => buildApp(this))
    return this.#app
  }

  async #whenReady (request: IncomingMessage, response: ServerResponse): Promise<void> {
    const [app, handler] = await this.#built()
    await app.ready()
    this.#fastify = handler
    handler(request, response)
  }

  /** Listens on `host:port` (listen.ts). */
  listen (port: number, host: string): Promise<void> {
    this.#listening = listen(this, port, host)
    return this.#listening
  }

  /** Runs once the service is closed: what it started beside serving (the Redis poll). */
  onClose (hook: () => Promise<void>): void {
    this.#onClose.push(hook)
  }

  /**
   * Stops accepting, closes the idle connections and waits for the others to end, then closes
   * Fastify (if it was built) and what onClose added. See shutdown.ts for the order that drops
   * nothing before this.
   */
  async close (): Promise<void> {
    // A socket still being bound is closed once bound, so that none outlives the service.
    await this.#listening?.catch(() => {})
    this.lifecycle.stopAccepting()
    this.lifecycle.closing = true
    // node:http's close: the idle connections now, the others after their answer (Connection: close).
    this.server.close()
    await this.lifecycle.drained()
    if (this.#app !== undefined) await (await this.#app)[0].close()
    for (const hook of this.#onClose) await hook()
  }
}
