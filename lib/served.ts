import type { Catalog } from './catalog.ts'
import { ResponseCache } from './response-cache.ts'

/** Holds some thousands of pages; distinct hosts and queries cannot grow it past this. */
export const RESPONSE_CACHE_BYTES = 32 * 1024 * 1024

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

  constructor (catalog: Catalog) {
    this.#current = { number: 1, catalog, cache: new ResponseCache(RESPONSE_CACHE_BYTES) }
  }

  get current (): Generation {
    return this.#current
  }

  /** Serves another catalog from the next request on; the old answers go with the old catalog. */
  swap (catalog: Catalog): Generation {
    this.#current = { number: this.#current.number + 1, catalog, cache: new ResponseCache(RESPONSE_CACHE_BYTES) }
    return this.#current
  }
}
