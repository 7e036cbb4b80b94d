import type { Server } from 'node:http'
import type { Logger } from 'pino'
import { http } from '../builtins.ts'
import type { Config } from '../config.ts'
import { answerClientError, refuseConnect, refuseExpectation } from '../api/errors.ts'
import type { Listener } from '../service.ts'

type Limits = Pick<Config, 'keepAliveTimeoutMs' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'maxHeaderSize'>

/**
 * The service's one node:http server, with the configured limits. Every answer is JSON, also
 * for what Node would otherwise answer, or drop, by itself; those are answered here, so that
 * they need no Fastify.
 */
export function createHttpServer (limits: Limits, logger: Logger, listener: Listener): Server {
  const server = http.createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    maxHeaderSize: limits.maxHeaderSize,
    // Node checks both timeouts on this interval (30 s by default), so a slow client is
    // cut off at most a second after its time is up.
    connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
  }, listener)
  server.keepAliveTimeout = limits.keepAliveTimeoutMs
  // A client that half-closes after its request (an HTTP/1.0 probe, a script) gets its answer
  // also when it is not written at once (the request that has Fastify built, service.ts), and
  // then the connection closes; node:http would otherwise drop the answer. Node's own switch,
  // set on the server as Node's tests do: it is not an option of createServer.
  ;(server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => answerClientError(logger, error, socket))
  server.on('connect', refuseConnect)
  server.on('checkExpectation', refuseExpectation)
  return server
}
