import type { OutgoingHttpHeaders } from 'node:http'
import { API_HEADERS } from './http.ts'

/** A 200 of the API as it goes on the wire. */
export interface CachedAnswer {
  readonly body: Buffer
  readonly headers: Readonly<OutgoingHttpHeaders>
}

/**
 * What an entry costs beyond its key and body: the Map slot, the answer and headers objects
 * and the Buffer object, measured at about 640 bytes with Node 20. Without it, a cache of
 * small answers (an empty page, one item) would hold six times the memory it counts.
 */
const ENTRY_OVERHEAD_BYTES = 640

/**
 * Rendered 200 answers by cache key (see fast-path.ts), bounded in bytes whatever clients
 * send: when full, the oldest entries go first. A hit costs one Map lookup.
 */
export class ResponseCache {
  readonly #entries = new Map<string, CachedAnswer>()
  #bytes = 0

  constructor (readonly maxBytes: number) {}

  /** Memory held: keys (ASCII: Node refuses other bytes in a URL), bodies and the overhead of each entry. */
  get bytes (): number {
    return this.#bytes
  }

  get (key: string): CachedAnswer | undefined {
    return this.#entries.get(key)
  }

  set (key: string, body: Buffer): void {
    // Called on a miss only, within the same synchronous turn: the key is new.
    this.#entries.set(key, { body, headers: { ...API_HEADERS, 'content-length': body.length } })
    this.#bytes += key.length + body.length + ENTRY_OVERHEAD_BYTES
    for (const [oldKey, old] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break
      this.#entries.delete(oldKey)
      this.#bytes -= oldKey.length + old.body.length + ENTRY_OVERHEAD_BYTES
    }
  }
}
