import type { Representation } from './answer.ts'

/**
 * What an entry costs beyond its key and body: the Map slot, the representation, its two headers
 * objects, the tag and the Buffer object, measured at about 1 KB with Node 20. Without it, a
 * cache of small answers (an empty page, one item) would hold ten times the memory it counts.
 */
const ENTRY_OVERHEAD_BYTES = 1024

/**
 * Rendered 200s by cache key (see cache-key.ts), bounded in bytes whatever clients
 * send: when full, the oldest entries go first. A hit costs one Map lookup.
 */
export class ResponseCache {
  readonly #entries = new Map<string, Representation>()
  #bytes = 0

  constructor (readonly maxBytes: number) {}

  /** Memory held: keys (ASCII: Node refuses other bytes in a URL), bodies and the overhead of each entry. */
  get bytes (): number {
    return this.#bytes
  }

  get (key: string): Representation | undefined {
    return this.#entries.get(key)
  }

  set (key: string, representation: Representation): void {
    // Called on a miss only, within the same synchronous turn: the key is new.
    this.#entries.set(key, representation)
    this.#bytes += key.length + representation.body.length + ENTRY_OVERHEAD_BYTES
    for (const [oldKey, old] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break
      this.#entries.delete(oldKey)
      this.#bytes -= oldKey.length + old.body.length + ENTRY_OVERHEAD_BYTES
    }
  }
}
