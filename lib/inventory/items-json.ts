import type { CatalogItem } from './catalog.ts'

const COMMA = 0x2c

/**
 * Every item of a catalog rendered for one url prefix and item tail (what a request's base
 * URL and `format` make of an item's url), as bytes in list order joined by commas. A page
 * is then copies of byte ranges: the default order and most filters leave its items side by
 * side here, so a whole page is usually one copy. Building a page as a string instead (some
 * 250 pieces) and encoding it cost more than the rest of rendering: flattening the string,
 * then UTF-8, then the garbage of both.
 */
export class ItemsJson {
  readonly #bytes: Buffer
  /** Item i (by CatalogItem.index) is #bytes[#starts[i], #starts[i + 1] - 1): the comma after it left out. */
  readonly #starts: Uint32Array

  constructor (items: readonly CatalogItem[], urlPrefix: string, itemTail: string) {
    const texts = items.map((item) => item.head + urlPrefix + item.id + itemTail + item.tail)
    this.#bytes = Buffer.from(texts.join(','))
    this.#starts = new Uint32Array(items.length + 1)
    let start = 0
    texts.forEach((text, i) => {
      start += Buffer.byteLength(text) + 1
      this.#starts[i + 1] = start
    })
  }

  /** `head`, then items[start] to items[end - 1] (in that order) joined by commas, then `tail`: a new Buffer of its own. */
  join (head: Buffer, items: readonly CatalogItem[], start: number, end: number, tail: Buffer): Buffer {
    const starts = this.#starts
    let length = head.length + tail.length + Math.max(0, end - start - 1)
    for (let i = start; i < end; i++) length += starts[items[i]!.index + 1]! - 1 - starts[items[i]!.index]!
    // Not from Node's shared pool: a cached body must not keep a pool slab alive.
    const body = Buffer.allocUnsafeSlow(length)
    let at = head.copy(body, 0)
    for (let i = start; i < end;) {
      // The run of items that lie side by side here, copied at once.
      const first = items[i]!.index
      let last = first
      for (i++; i < end && items[i]!.index === last + 1; i++) last++
      if (at > head.length) body[at++] = COMMA
      at += this.#bytes.copy(body, at, starts[first], starts[last + 1]! - 1)
    }
    tail.copy(body, at)
    return body
  }
}
