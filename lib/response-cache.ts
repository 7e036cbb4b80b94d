/**
 * Rendered 200 bodies by base URL and request URL, bounded in bytes whatever clients
 * send: when full, the oldest entries go first. A hit costs one Map lookup.
 */
export class ResponseCache {
  readonly #entries = new Map<string, Buffer>()
  #bytes = 0

  constructor (readonly maxBytes: number) {}

  /** Keys and bodies held, counted as bytes (keys are ASCII: Node refuses other bytes in a URL). */
  get bytes (): number {
    return this.#bytes
  }

  get (key: string): Buffer | undefined {
    return this.#entries.get(key)
  }

  set (key: string, body: Buffer): void {
    // Called on a miss only, within the same synchronous turn: the key is new.
    this.#entries.set(key, body)
    this.#bytes += key.length + body.length
    for (const [oldKey, oldBody] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break
      this.#entries.delete(oldKey)
      this.#bytes -= oldKey.length + oldBody.length
    }
  }
}
