/** What an item's JSON is made of besides its url: the url sits between head and tail. */
export interface RenderedItem {
  /** Its place in the list's default order. */
  readonly index: number
  readonly id: number
  /** `{"id":7,"url":"` : the url follows. */
  readonly head: string
  /** `","display":…,"app_label":…,"model":…}` */
  readonly tail: string
}

const COMMA = Buffer.from(',')

/**
 * Every item of a catalog rendered for one url prefix and item tail (what a request's base
 * URL and `format` make of an item's url), as bytes in list order joined by commas. An item is
 * a view of its byte range here, and a page the runs of items that lie side by side (most
 * orders and filters leave a page's items in one run) copied once into the page's own Buffer.
 */
export class ItemsJson {
  readonly #bytes: Buffer
  /** Item i (by RenderedItem.index) is #bytes[#starts[i], #starts[i + 1] - 1), followed by its comma but for the last. */
  readonly #starts: Uint32Array

  constructor (items: readonly RenderedItem[], urlPrefix: string, itemTail: string) {
    const texts = items.map((item) => item.head + urlPrefix + item.id + itemTail + item.tail)
    this.#bytes = Buffer.from(texts.join(','))
    this.#starts = new Uint32Array(items.length + 1)
    let start = 0
    texts.forEach((text, i) => {
      start += Buffer.byteLength(text) + 1
      this.#starts[i + 1] = start
    })
  }

  /** One item's JSON: a view of the catalog's bytes. */
  item (item: RenderedItem): Buffer {
    return this.#bytes.subarray(this.#starts[item.index], this.#starts[item.index + 1]! - 1)
  }

  /**
   * `head`, then items[start] to items[end - 1] (in that order) joined by commas, then `tail`,
   * in a Buffer of its own (not from Node's shared pool, so that a kept page holds only itself).
   */
  page (head: string, items: readonly RenderedItem[], start: number, end: number, tail: Buffer): Buffer {
    const starts = this.#starts
    const pieces: Buffer[] = []
    let length = Buffer.byteLength(head) + tail.length
    for (let i = start; i < end;) {
      // The run of items that lie side by side here: one view.
      const first = items[i]!.index
      let last = first
      for (i++; i < end && items[i]!.index === last + 1; i++) last++
      const more = i < end
      // The run's own comma separates it from the next run, if any; the catalog's last item has none.
      const withComma = more && last + 2 < starts.length
      const run = this.#bytes.subarray(starts[first], starts[last + 1]! - (withComma ? 0 : 1))
      pieces.push(run)
      length += run.length
      if (more && !withComma) {
        pieces.push(COMMA)
        length++
      }
    }
    const page = Buffer.allocUnsafeSlow(length)
    let at = page.write(head)
    for (const piece of pieces) at += piece.copy(page, at)
    tail.copy(page, at)
    return page
  }
}
