import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyPluginCallback } from 'fastify'
import type { Logger } from 'pino'
import type { ApiTokens } from './tokens.ts'
import { buildApp } from './app.ts'
import type { Config } from './config.ts'
import { createHttpServer } from './front/server.ts'
import type { Served } from './inventory/served.ts'
import type { Metrics } from './metrics.ts'
import { listen } from './front/listen.ts'
import { Lifecycle } from './front/lifecycle.ts'
import { replay, type Replays } from './replay/replays.ts'

export interface ServiceOptions {
  config: Config
  /** What to serve; swapping its catalog is reloading the profile. */
  served: Served
  /** Where Fastify's 200s are kept and replayed from; none with ACCESS_LOG, which logs every request. */
  replays?: Replays
  /** The known API tokens (config.apiTokensFile) and whether one is required. */
  tokens: ApiTokens
  /** Required when METRICS is set. */
  metrics?: Metrics
  logger: Logger
  /** Fastify plugins, registered before the routes (app.ts): the faults plugin with FAULTS. */
  plugins?: readonly FastifyPluginCallback[]
}

/**
 * The service: one node:http server, on every listening socket, in front of the Fastify app
 * (app.ts), which makes every answer. What the front does itself is replay: a request that
 * Fastify answered with a 200 before (same Host and URL, see replay/) gets that answer again,
 * once its token passes the same check as Fastify's, without Fastify's routing, hooks and
 * reply: that is the bare-Node speed of the service (docs/architecture.md).
 */
export class Service {
  readonly config: Config
  readonly served: Served
  readonly logger: Logger
  readonly lifecycle = new Lifecycle()
  readonly app: FastifyInstance
  readonly server: Server
  #listening: Promise<void> | undefined
  readonly #onClose: Array<() => Promise<void>> = []

  constructor ({ config, served, replays, tokens, metrics, logger, plugins }: ServiceOptions) {
    this.config = config
    this.served = served
    this.logger = logger
    let fastify!: RequestListener
    this.server = createHttpServer(config, logger, (request, response) => {
      if (this.lifecycle.closing) response.setHeader('connection', 'close')
      if (replays === undefined || !replayed(request, response, replays, tokens, metrics)) fastify(request, response)
    })
    ;[this.app, fastify] = buildApp({ config, served, tokens, metrics, replays, readiness: this.lifecycle, logger, server: this.server, plugins })
  }

  /** Listens on `host:port` (listen.ts), once the app is ready. */
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
   * Fastify and what onClose added. See shutdown.ts for the order that drops nothing before this.
   */
  async close (): Promise<void> {
    // A socket still being bound is closed once bound, so that none outlives the service.
    await this.#listening?.catch(() => {})
    await this.lifecycle.stopAccepting()
    this.lifecycle.closing = true
    // node:http's close: the idle connections now, the others after their answer (Connection: close).
    this.server.close()
    await this.lifecycle.drained()
    await this.app.close()
    for (const hook of this.#onClose) await hook()
  }
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
