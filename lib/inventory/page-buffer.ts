/** The most a page may take of the buffer: a longer one gets memory of its own. */
const PAGE_BUFFER_BYTES = 64 * 1024

/**
 * The memory long pages are written into (items-json.ts), lent to one answer at a time and lent
 * again only once Node has written that answer whole to its connection when its send returns.
 * An answer Node still holds (a client slow to read, a pipelined answer waiting its turn, a
 * fault that delays it) keeps the buffer, and the next page gets a new one. One buffer, which
 * stays in the CPU's caches, costs less than fresh memory for each page (docs/performance.md).
 */
export class PageBuffer {
  #buffer: Buffer | undefined
  #lent = false

  /** Memory for a page of `bytes`: this buffer's, unless it is lent or too small. */
  take (bytes: number): Buffer {
    if (this.#lent || bytes > PAGE_BUFFER_BYTES) return Buffer.allocUnsafe(bytes)
    this.#buffer ??= Buffer.allocUnsafeSlow(PAGE_BUFFER_BYTES)
    this.#lent = true
    return this.#buffer.subarray(0, bytes)
  }

  /**
   * Takes back what `take` lent for `body` once `response` has ended with nothing of it left to
   * write (Node has handed it all to the system), or else leaves the buffer to Node.
   */
  handBack (body: Buffer | string, response: { readonly writableEnded: boolean, readonly writableLength: number }): void {
    if (!this.#lent || typeof body === 'string' || body.buffer !== this.#buffer!.buffer) return
    this.#lent = false
    if (!response.writableEnded || response.writableLength !== 0) this.#buffer = undefined
  }
}
