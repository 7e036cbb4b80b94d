import type { OutgoingHttpHeaders } from 'node:http'
import { API_HEADERS } from './http.ts'

/** A 200 of the API as it goes on the wire. */
export interface CachedAnswer {
  readonly body: Buffer
  readonly headers: Readonly<OutgoingHttpHeaders>
}

/**
 * Rendered 200 answers by cache key (see fast-path.ts), bounded in bytes whatever clients
 * send: when full, the oldest entries go first. A hit costs one Map lookup.
 */
export class ResponseCache {
  readonly #entries = new Map<string, CachedAnswer>()
  #bytes = 0

  constructor (readonly maxBytes: number) {}

  /** Keys and bodies held, counted as bytes (keys are ASCII: Node refuses other bytes in a URL). */
  get bytes (): number {
    return this.#bytes
  }

  get (key: string): CachedAnswer | undefined {
    return this.#entries.get(key)
  }

  set (key: string, body: Buffer): void {
    // Called on a miss only, within the same synchronous turn: the key is new.
    this.#entries.set(key, { body, headers: { ...API_HEADERS, 'content-length': body.length } })
    this.#bytes += key.length + body.length
    for (const [oldKey, old] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break
      this.#entries.delete(oldKey)
      this.#bytes -= oldKey.length + old.body.length
    }
  }
}
