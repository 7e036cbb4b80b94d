import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ApiAccess } from '../api/routes.ts'
import type { Metrics } from '../ops/metrics.ts'
import { answer } from './answer.ts'
import { cacheKeyOf } from './cache-key.ts'

/**
 * Answers GET and HEAD from the response cache before Fastify sees the request: the
 * bare-Node speed of the service. Only a representation that Fastify's handler rendered for
 * the same key is ever in the cache, so a hit has already passed every check that depends
 * on the key (Host, `format`, method, the path); the token is not in the key and is checked
 * here. The answer is written by the same function as Fastify's handler uses.
 *
 * What a hit skips is Fastify itself: routing, request and reply objects, and every hook
 * (onRequest, preHandler, onSend, onResponse). That is what makes it as fast as bare Node,
 * and why nothing an answer needs may live in a hook alone: its headers are in the
 * representation, its metrics are counted below, and with ACCESS_LOG (a hook) there is no
 * fast path at all.
 */
export class FastPath {
  readonly #access: ApiAccess
  readonly #metrics: Metrics | undefined

  constructor (access: ApiAccess, metrics?: Metrics) {
    this.#access = access
    this.#metrics = metrics
  }

  /** True when the request was answered from the cache. */
  answered (request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false
    const started = this.#metrics === undefined ? 0n : process.hrtime.bigint()
    const { served, trustsProxies, tokens } = this.#access
    const key = cacheKeyOf(request, trustsProxies)
    const representation = key === undefined ? undefined : served.current.cache.get(key)
    if (representation === undefined) return false
    // A refused token goes to Fastify, which answers the 403.
    if (tokens !== undefined && tokens.refusal(request) !== undefined) return false
    const status = answer(request, response, representation)
    this.#metrics?.answered(representation.route, request.method, status, Number(process.hrtime.bigint() - started) / 1e9)
    return true
  }
}
