import type { Body } from '../answer/answer.ts'
import type { CatalogItem } from './catalog.ts'

const COMMA = Buffer.from(',')

/**
 * Past this many pieces (an order or a filter that scatters a page's items), a page is copied
 * into one Buffer: Node's write costs more per piece than a copy does. Measured side by side
 * against copying every page: 50 pieces as fast, 165 a fifth fewer requests a second.
 */
const MAX_PIECES = 32

/**
 * Every item of a catalog rendered for one url prefix and item tail (what a request's base
 * URL and `format` make of an item's url), as bytes in list order joined by commas. A page
 * is then views of byte ranges here, written as they are: the default order and most
 * filters leave a page's items side by side, so a whole page is usually one view.
 *
 * Views, not copies: a page asked for once (most of a cache-busting load) then allocates
 * no body at all. A new Buffer per page was freed only by a later garbage collection, and
 * under load those dead bodies made up most of the service's memory (docs/performance.md).
 */
export class ItemsJson {
  readonly #bytes: Buffer
  /** Item i (by CatalogItem.index) is #bytes[#starts[i], #starts[i + 1] - 1), followed by its comma but for the last. */
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

  /** One item's JSON. */
  item (item: CatalogItem): Buffer {
    return this.#bytes.subarray(this.#starts[item.index], this.#starts[item.index + 1]! - 1)
  }

  /** `head`, then items[start] to items[end - 1] (in that order) joined by commas, then `tail`: the pieces to write in order. */
  page (head: string, items: readonly CatalogItem[], start: number, end: number, tail: Buffer): Body {
    const starts = this.#starts
    const pieces: Buffer[] = []
    for (let i = start; i < end;) {
      // The run of items that lie side by side here: one view.
      const first = items[i]!.index
      let last = first
      for (i++; i < end && items[i]!.index === last + 1; i++) last++
      const more = i < end
      // The run's own comma separates it from the next run, if any; the catalog's last item has none.
      const withComma = more && last + 2 < starts.length
      pieces.push(this.#bytes.subarray(starts[first], starts[last + 1]! - (withComma ? 0 : 1)))
      if (more && !withComma) pieces.push(COMMA)
    }
    pieces.push(tail)
    return pieces.length > MAX_PIECES ? [Buffer.concat([Buffer.from(head), ...pieces])] : [head, ...pieces]
  }
}
