import type { PageBuffer } from './page-buffer.ts'

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
 * URL and `format` make of an item's url), as text in list order joined by commas, and that
 * text's UTF-8 bytes. An item is a slice of the text, and a page its head, the runs of items that
 * lie side by side (most orders and filters leave a page's items in one run) and its tail: text
 * joined without copying while Node writes it from its stack, else those runs' bytes copied into
 * memory of the PageBuffer's.
 */
export class ItemsJson {
  readonly #text: string
  /** Item i (by RenderedItem.index) is #text[#starts[i], #starts[i + 1] - 1), followed by its comma but for the last. */
  readonly #starts: Uint32Array
  readonly #bytes: Buffer
  /** The same in #bytes. */
  readonly #byteStarts: Uint32Array

  constructor (items: readonly RenderedItem[], urlPrefix: string, itemTail: string) {
    const texts = items.map((item) => item.head + urlPrefix + item.id + itemTail + item.tail)
    this.#text = texts.join(',')
    this.#bytes = Buffer.from(this.#text)
    this.#starts = new Uint32Array(items.length + 1)
    this.#byteStarts = new Uint32Array(items.length + 1)
    texts.forEach((text, i) => {
      this.#starts[i + 1] = this.#starts[i]! + text.length + 1
      this.#byteStarts[i + 1] = this.#byteStarts[i]! + Buffer.byteLength(text) + 1
    })
  }

  /** One item's JSON. */
  item (item: RenderedItem): string {
    return this.#text.slice(this.#starts[item.index], this.#starts[item.index + 1]! - 1)
  }

  /** `head`, then items[start] to items[end - 1] (in that order) joined by commas, then `tail`; bytes in `buffer`'s memory. */
  page (head: string, items: readonly RenderedItem[], start: number, end: number, tail: string, buffer: PageBuffer): Buffer | string {
    const runs = runsOf(items, start, end)
    // Each item's length in `starts` counts the comma after it: the last one has none.
    const joined = runs.length === 0 ? 0 : -1
    const starts = this.#starts
    let length = head.length + tail.length + joined
    for (let i = 0; i < runs.length; i += 2) length += starts[runs[i + 1]! + 1]! - starts[runs[i]!]!
    if (length <= STACK_WRITE_CHARS) {
      let page = head
      for (let i = 0; i < runs.length; i += 2) {
        const last = runs[i + 1]!
        // Between runs, the run's own comma where it has one (every item but the catalog's last).
        const more = i + 2 < runs.length
        const ownComma = more && last + 2 < starts.length
        page += this.#text.slice(starts[runs[i]!], starts[last + 1]! - (ownComma ? 0 : 1))
        if (more && !ownComma) page += ','
      }
      return page + tail
    }
    const byteStarts = this.#byteStarts
    let bytes = Buffer.byteLength(head) + Buffer.byteLength(tail) + joined
    for (let i = 0; i < runs.length; i += 2) bytes += byteStarts[runs[i + 1]! + 1]! - byteStarts[runs[i]!]!
    const page = buffer.take(bytes)
    let at = page.write(head)
    for (let i = 0; i < runs.length; i += 2) {
      if (i > 0) page[at++] = COMMA
      at += this.#bytes.copy(page, at, byteStarts[runs[i]!], byteStarts[runs[i + 1]! + 1]! - 1)
    }
    page.write(tail, at)
    return page
  }
}

const COMMA = 0x2c

/**
 * Node writes a body string of up to this many characters from its stack. A longer one it first
 * copies into a buffer of three bytes a character (UTF-8's most), and Node before 26.10 also keeps
 * the string itself in the heap until the client has taken it all: a longer page is bytes, which
 * hold their own length, outside the heap (docs/performance.md, Misses).
 */
const STACK_WRITE_CHARS = 16 * 1024 / 3

/**
 * The runs of items[start] to items[end - 1] that lie side by side in the list's order, as the
 * index of each run's first item and of its last.
 */
function runsOf (items: readonly RenderedItem[], start: number, end: number): number[] {
  const runs: number[] = []
  for (let i = start; i < end;) {
    const first = items[i]!.index
    let last = first
    for (i++; i < end && items[i]!.index === last + 1; i++) last++
    runs.push(first, last)
  }
  return runs
}
