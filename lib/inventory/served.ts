import type { Catalog } from './catalog.ts'

/** One profile as served: its precomputed catalog. */
export interface Generation {
  /** 1 for the profile loaded at start-up, then one more per reload. */
  readonly number: number
  readonly catalog: Catalog
}

/**
 * What the service serves, replaced whole when the profile is reloaded. A request reads
 * `current` once and answers from that generation alone, so no answer mixes two profiles; a new
 * generation is a new object, by which the answers kept from the old one are known (replay/).
 */
export class Served {
  #current: Generation
  /** The live count of RQ workers, once Redis has told it: it overrides every profile's. */
  #workerCount: number | undefined

  constructor (catalog: Catalog) {
    this.#current = { number: 1, catalog }
  }

  get current (): Generation {
    return this.#current
  }

  /** Serves another profile's catalog from the next request on. */
  swap (catalog: Catalog): Generation {
    const live = this.#workerCount === undefined ? catalog : catalog.withWorkerCount(this.#workerCount)
    this.#current = { number: this.#current.number + 1, catalog: live }
    return this.#current
  }

  /** Serves the status with this many RQ workers from the next request on (the same profile generation). */
  setWorkerCount (count: number): void {
    this.#workerCount = count
    const { number, catalog } = this.#current
    this.#current = { number, catalog: catalog.withWorkerCount(count) }
  }
}
