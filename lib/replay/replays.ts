import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { Faults } from '../faults/faults.ts'
import type { Generation, Served } from '../inventory/served.ts'
import { CacheStats, ENTRY_OVERHEAD_BYTES, ResponseCache, type Kept } from './cache.ts'
import { cacheKeyOf, type CacheKey } from './cache-key.ts'
import { ifNoneMatches, REQUEST_ID, requestId } from '../http/headers.ts'

/**
 * Headers that belong to one connection or one moment, which Node writes itself for each answer,
 * and the length, which Fastify sets after the hooks: the kept body's is added.
 */
const NOT_KEPT = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length'])

/**
 * The answers Fastify made to cacheable requests (a 200 to GET or HEAD, by Host and URL; see
 * cache-key.ts), kept in a bounded cache of the generation they were made from: a new profile
 * or worker count starts an empty one.
 */
export class Replays {
  readonly stats = new CacheStats()
  readonly maxBytes: number
  readonly #served: Served
  readonly #trustsProxies: boolean
  readonly #faults: Faults | undefined
  #generation: Generation
  #cache: ResponseCache
  /** The request find() looked up last, and its key: Fastify's 200 to it, kept in the same turn, reuses the key. */
  #looked: IncomingMessage | undefined
  #lookedKey: CacheKey | undefined

  /** `faults`: a request a fault may apply to is never replayed (the fault is drawn by Fastify). */
  constructor (served: Served, maxBytes: number, trustsProxies: boolean, faults?: Faults) {
    this.#served = served
    this.maxBytes = maxBytes
    this.#trustsProxies = trustsProxies
    this.#faults = faults
    this.#generation = served.current
    this.#cache = new ResponseCache(maxBytes, this.stats)
  }

  /** Memory the current generation's answers hold. */
  get bytes (): number {
    return this.#current().bytes
  }

  /** The kept answer to replay to this request, if any. */
  find (request: IncomingMessage): Kept | undefined {
    const key = cacheKeyOf(request, this.#trustsProxies)
    this.#looked = request
    this.#lookedKey = key
    const kept = key === undefined ? undefined : this.#current().get(key)
    if (kept === undefined || this.#faults?.mayApply(kept.route, request) === true) return undefined
    this.stats.hits++
    return kept
  }

  /**
   * Offers Fastify's 200 to a request, made from `generation`: kept if the request is cacheable,
   * the generation still served, and the cache admits it (see cache.ts). `headers` are read only then.
   */
  keep (request: IncomingMessage, generation: Generation, route: string, headers: () => OutgoingHttpHeaders, payload: Buffer | string): void {
    const key = request === this.#looked ? this.#lookedKey : cacheKeyOf(request, this.#trustsProxies)
    if (key === undefined || generation !== this.#served.current) return
    const cache = this.#current()
    const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length
    const size = key.host.length + key.url.length + length + ENTRY_OVERHEAD_BYTES
    if (!cache.admits(key, size)) return
    cache.add(key, kept(route, headers(), ownCopy(payload, length)), size)
  }

  #current (): ResponseCache {
    const generation = this.#served.current
    if (generation !== this.#generation) {
      this.#generation = generation
      this.#cache = new ResponseCache(this.maxBytes, this.stats)
    }
    return this.#cache
  }
}

/**
 * Answers a request with a kept answer: the same status, headers and bytes, with a request id
 * of its own, or its 304 when If-None-Match names its tag. Node sends no body for HEAD.
 */
export function replay (request: IncomingMessage, response: ServerResponse, kept: Kept): 200 | 304 {
  if (ifNoneMatches(request, kept.etag)) {
    response.writeHead(304, withId(kept.notModified, kept.notModifiedIdAt)).end()
    return 304
  }
  response.writeHead(200, withId(kept.headers, kept.idAt)).end(kept.body)
  return 200
}

/** A copy of a header list with a fresh request id; a copy is all a replay allocates. */
function withId (headers: readonly string[], at: number): string[] {
  const copy = headers.slice()
  if (at !== -1) copy[at] = requestId()
  return copy
}

function kept (route: string, given: OutgoingHttpHeaders, body: Buffer): Kept {
  const headers: string[] = []
  const notModified: string[] = []
  for (const [name, value] of Object.entries(given)) {
    if (NOT_KEPT.has(name)) continue
    for (const text of Array.isArray(value) ? value : [String(value)]) {
      headers.push(name, text)
      // A 304 has no body to describe (its length is not kept either, see NOT_KEPT).
      if (name !== 'content-type') notModified.push(name, text)
    }
  }
  headers.push('content-length', String(body.length))
  return {
    route,
    body,
    // Every endpoint's 200 has one; were a plugin to remove it, the tag is none a client can name.
    etag: String(given.etag),
    headers,
    notModified,
    idAt: headers.indexOf(REQUEST_ID) + 1 || -1,
    notModifiedIdAt: notModified.indexOf(REQUEST_ID) + 1 || -1,
  }
}

/**
 * The payload in memory of its own, so that the cache holds exactly the bytes it counts and no
 * view keeps a catalog's rendering (or Node's 8 KiB pool slab) alive.
 */
function ownCopy (payload: Buffer | string, length: number): Buffer {
  const body = Buffer.allocUnsafeSlow(length)
  if (typeof payload === 'string') body.write(payload)
  else payload.copy(body)
  return body
}
