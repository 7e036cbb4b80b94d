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

/**
 * Every item of a catalog rendered for one url prefix and item tail (what a request's base
 * URL and `format` make of an item's url), as text in list order joined by commas. An item is a
 * slice of that text, and a page its head, the runs of items that lie side by side (most orders
 * and filters leave a page's items in one run) and its tail, joined: V8 slices and joins strings
 * without copying them, and Node writes a short string to the socket from its stack, so a short
 * page allocates no body (a long one is sent as a Buffer: routes/endpoint.ts; docs/performance.md,
 * Misses).
 */
export class ItemsJson {
  readonly #text: string
  /** Item i (by RenderedItem.index) is #text[#starts[i], #starts[i + 1] - 1), followed by its comma but for the last. */
  readonly #starts: Uint32Array

  constructor (items: readonly RenderedItem[], urlPrefix: string, itemTail: string) {
    const texts = items.map((item) => item.head + urlPrefix + item.id + itemTail + item.tail)
    this.#text = texts.join(',')
    this.#starts = new Uint32Array(items.length + 1)
    let start = 0
    texts.forEach((text, i) => {
      start += text.length + 1
      this.#starts[i + 1] = start
    })
  }

  /** One item's JSON. */
  item (item: RenderedItem): string {
    return this.#text.slice(this.#starts[item.index], this.#starts[item.index + 1]! - 1)
  }

  /** `head`, then items[start] to items[end - 1] (in that order) joined by commas, then `tail`. */
  page (head: string, items: readonly RenderedItem[], start: number, end: number, tail: string): string {
    const starts = this.#starts
    let page = head
    for (let i = start; i < end;) {
      // The run of items that lie side by side here: one slice.
      const first = items[i]!.index
      let last = first
      for (i++; i < end && items[i]!.index === last + 1; i++) last++
      const more = i < end
      // The run's own comma separates it from the next run, if any; the catalog's last item has none.
      const withComma = more && last + 2 < starts.length
      page += this.#text.slice(starts[first], starts[last + 1]! - (withComma ? 0 : 1))
      if (more && !withComma) page += ','
    }
    return page + tail
  }
}
