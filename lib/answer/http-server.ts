import type { Server } from 'node:http'
import type { FastifyServerFactory } from 'fastify'
import { http } from '../builtins.ts'
import type { Config } from '../config.ts'
import type { Lifecycle } from '../process/lifecycle.ts'
import { refuseConnect, refuseExpectation } from '../api/errors.ts'
import type { FastPath } from './fast-path.ts'

type Limits = Pick<Config, 'keepAliveTimeoutMs' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'maxHeaderSize'>

/**
 * The node:http server under Fastify: the configured limits, cache hits answered before
 * Fastify (when there is a fast path), and `Connection: close` on every answer while the
 * process is closing, so that keep-alive clients leave after their next response. Fastify makes
 * one per address it listens on (two for localhost); each is one of the Lifecycle's listeners.
 */
export function httpServerFactory (limits: Limits, lifecycle: Lifecycle, fastPath?: FastPath): FastifyServerFactory {
  return (fastify) => {
    const server: Server = http.createServer({
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      maxHeaderSize: limits.maxHeaderSize,
      // Node checks both timeouts on this interval (30 s by default), so a slow client is
      // cut off at most a second after its time is up.
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    }, (request, response) => {
      if (lifecycle.closing) response.setHeader('connection', 'close')
      if (fastPath?.answered(request, response) !== true) fastify(request, response)
    })
    server.keepAliveTimeout = limits.keepAliveTimeoutMs
    lifecycle.listeners.push(server)
    // Every answer is JSON, also for what Node would otherwise answer, or drop, by itself.
    server.on('connect', refuseConnect)
    server.on('checkExpectation', refuseExpectation)
    return server
  }
}
