import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino'

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
