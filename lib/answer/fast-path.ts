import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Renderings } from '../api/renderings.ts'
import type { ApiAccess } from '../api/routes.ts'
import type { Metrics } from '../ops/metrics.ts'
import type { Probes } from '../ops/probes.ts'
import { answer } from './answer.ts'
import { cacheKeyOf } from './cache-key.ts'

/**
 * Answers GET and HEAD of the endpoints and the probes before Fastify sees the request: the
 * bare-Node speed of the service, and a service that serves and is probed without ever
 * building Fastify (service.ts). A request whose answer is a 200 is answered here, from the
 * cache or rendered and offered to it, through the same pipeline as Fastify's handlers
 * (renderings.ts); everything else (an error, a redirect, a request the cache cannot key,
 * another method or path) goes on to Fastify, which answers it with every check in its place.
 *
 * What the fast path skips is Fastify itself: routing, request and reply objects, and every
 * hook (onRequest, preHandler, onSend, onResponse). That is what makes it as fast as bare
 * Node, and why nothing a 200 needs may live in a hook alone: its headers are in the
 * representation, the Host check is the same function as the hook's, its metrics are
 * counted below, and with ACCESS_LOG (a hook) there is no fast path at all.
 */
export class FastPath {
  readonly #access: ApiAccess
  readonly #renderings: Renderings
  readonly #probes: Probes
  readonly #metrics: Metrics | undefined

  constructor (access: ApiAccess, renderings: Renderings, probes: Probes, metrics?: Metrics) {
    this.#access = access
    this.#renderings = renderings
    this.#probes = probes
    this.#metrics = metrics
  }

  /** True when the request was answered here. */
  answered (request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false
    const started = this.#metrics === undefined ? 0n : process.hrtime.bigint()
    const { served, trustsProxies, tokens } = this.#access
    // Every endpoint is under /api/; a probe needs no Host (a load balancer's may have none) and no token.
    if (!request.url!.startsWith('/api/')) return this.#probed(request, response, started)
    const key = cacheKeyOf(request, trustsProxies)
    if (key === undefined) return false
    // A refused token goes to Fastify, which answers the 403.
    if (tokens !== undefined && tokens.refusal(request) !== undefined) return false
    const representation = served.current.cache.get(key) ?? this.#renderings.miss(request, key)
    if (representation === undefined) return false
    const status = answer(request, response, representation)
    this.#metrics?.answered(representation.route, request.method, status, Number(process.hrtime.bigint() - started) / 1e9)
    return true
  }

  #probed (request: IncomingMessage, response: ServerResponse, started: bigint): boolean {
    const status = this.#probes.answer(request.url!, response)
    if (status === undefined) return false
    this.#metrics?.answered(request.url!, request.method!, status, Number(process.hrtime.bigint() - started) / 1e9)
    return true
  }
}
