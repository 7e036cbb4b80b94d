import { CacheStats, ResponseCache } from '../answer/cache.ts'
import type { Catalog } from './catalog.ts'

/** One profile as served: its precomputed catalog and the answers rendered from it. */
export interface Generation {
  /** 1 for the profile loaded at start-up, then one more per reload. */
  readonly number: number
  readonly catalog: Catalog
  readonly cache: ResponseCache
}

/**
 * What the service serves, replaced whole when the profile is reloaded. A request reads
 * `current` once and answers from that generation alone; answering is synchronous, so a
 * swap never falls inside one, and no answer mixes two profiles.
 */
export class Served {
  #current: Generation
  /** The live count of RQ workers, once Redis has told it: it overrides every profile's. */
  #workerCount: number | undefined
  /** Every generation's cache counts here, so the figures survive a reload. */
  readonly cacheStats = new CacheStats()

  readonly cacheBytes: number

  constructor (catalog: Catalog, cacheBytes: number) {
    this.cacheBytes = cacheBytes
    this.#current = { number: 1, catalog, cache: this.#newCache() }
  }

  get current (): Generation {
    return this.#current
  }

  /** Serves another profile's catalog from the next request on; the old answers go with the old catalog. */
  swap (catalog: Catalog): Generation {
    const live = this.#workerCount === undefined ? catalog : catalog.withWorkerCount(this.#workerCount)
    this.#current = { number: this.#current.number + 1, catalog: live, cache: this.#newCache() }
    return this.#current
  }

  /** Serves the status with this many RQ workers from the next request on (the same profile generation). */
  setWorkerCount (count: number): void {
    this.#workerCount = count
    const { number, catalog } = this.#current
    this.#current = { number, catalog: catalog.withWorkerCount(count), cache: this.#newCache() }
  }

  #newCache (): ResponseCache {
    return new ResponseCache(this.cacheBytes, this.cacheStats)
  }
}
