import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions, LogFn, Logger } from 'pino'
import type { Config } from './config.ts'
import type { ApiTokens } from './tokens.ts'

/**
 * Fastify's logging options: per-request logs only with ACCESS_LOG (they cost about half the
 * throughput), with any known token masked in the URLs they write. Without them Fastify is given
 * no logger (given one, it listens for the end of every answer to log it): each request's logger
 * is then made from the app's by the factory, when the request first logs.
 */
export function loggingOptions (config: Pick<Config, 'accessLog'>, appLogger: FastifyBaseLogger): FastifyServerOptions {
  return {
    logController: new LogController({ disableRequestLogging: !config.accessLog }),
    ...(config.accessLog
      ? { loggerInstance: appLogger }
      : { childLoggerFactory: (_none, bindings, options) => new RequestLogger(appLogger, bindings, options) as unknown as FastifyBaseLogger }),
  }
}

/** The app's logger: the service's, with Fastify's fields of a request and an answer. */
export function appLoggerOf (config: Pick<Config, 'accessLog'>, logger: Logger, tokens: ApiTokens): FastifyBaseLogger {
  return logger.child({}, {
    serializers: {
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: tokens.redact(request.url),
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket.remotePort,
      }),
      res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
    },
    // Access logs are info: with ACCESS_LOG they are written whatever LOG_LEVEL says of the rest.
    ...(config.accessLog && !logger.isLevelEnabled('info') && { level: 'info' }),
  }) as FastifyBaseLogger
}

/**
 * A request's logger, made into pino's child of the app's logger (which binds the request id)
 * when the request first logs. Without ACCESS_LOG most requests never do, and a child made for
 * each cost more than any other part of Fastify's work for a request (docs/performance.md, Misses).
 */
export class RequestLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  /** The route's own log level and serializers, if it has them. */
  readonly #options: ChildLoggerOptions
  #child: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get level (): string {
    return this.#options.level ?? this.#parent.level
  }

  #logger (): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options)
    return this.#child
  }

  fatal (...args: Parameters<LogFn>): void { this.#logger().fatal(...args) }
  error (...args: Parameters<LogFn>): void { this.#logger().error(...args) }
  warn (...args: Parameters<LogFn>): void { this.#logger().warn(...args) }
  info (...args: Parameters<LogFn>): void { this.#logger().info(...args) }
  debug (...args: Parameters<LogFn>): void { this.#logger().debug(...args) }
  trace (...args: Parameters<LogFn>): void { this.#logger().trace(...args) }
  silent (): void {}
  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger { return this.#logger().child(bindings, options) }
}
