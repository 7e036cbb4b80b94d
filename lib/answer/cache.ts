import type { Representation } from './answer.ts'

/**
 * What an entry costs beyond its key and body: the Map slot, the entry, the representation,
 * its two header lists, the tag and the Buffer object, measured at about 1 KB with Node 20.
 * Without it, a cache of small answers (an empty page, one item) would hold ten times the
 * memory it counts.
 */
const ENTRY_OVERHEAD_BYTES = 1024

/** What the caches of every generation have done, for /metrics: it outlives a reload. */
export class CacheStats {
  hits = 0
  /** Representations rendered for a key the cache did not hold. */
  misses = 0
  evictions = 0
}

interface Entry {
  readonly key: string
  readonly representation: Representation
  readonly size: number
  /** Asked for since the hand last passed: SIEVE keeps it once more. */
  visited: boolean
  newer: Entry | undefined
  older: Entry | undefined
}

/**
 * Rendered 200s by cache key (see cache-key.ts), bounded in bytes whatever clients send.
 * Eviction is SIEVE (Zhang et al., NSDI '24): entries queue up newest first; a hit only sets
 * a bit; to make room, a hand walks from the oldest toward the newest, clearing bits, and
 * evicts the first entry whose bit is clear. A stream of URLs asked for once (a scan, a
 * cache-busting load) passes through without pushing out the pages asked for again and again,
 * which FIFO and LRU both let it do. A hit costs one Map lookup and one write.
 *
 * Written here rather than taken from a package: the one maintained SIEVE package bounds
 * entries by count, and these vary from 200 bytes to megabytes.
 */
export class ResponseCache {
  readonly #entries = new Map<string, Entry>()
  #newest: Entry | undefined
  #oldest: Entry | undefined
  /** Where the next eviction starts looking; undefined: at the oldest. */
  #hand: Entry | undefined
  #bytes = 0

  constructor (readonly maxBytes: number, readonly stats: CacheStats = new CacheStats()) {}

  /** Memory held: keys (ASCII: Node refuses other bytes in a URL), bodies and the overhead of each entry. */
  get bytes (): number {
    return this.#bytes
  }

  get (key: string): Representation | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    entry.visited = true
    this.stats.hits++
    return entry.representation
  }

  set (key: string, representation: Representation): void {
    this.stats.misses++
    const size = key.length + representation.body.length + ENTRY_OVERHEAD_BYTES
    // Larger than the whole cache: keeping it would evict everything else.
    if (size > this.maxBytes) return
    // Called on a miss only, within the same synchronous turn: the key is new.
    const entry: Entry = { key, representation, size, visited: false, newer: undefined, older: this.#newest }
    if (this.#newest === undefined) this.#oldest = entry
    else this.#newest.newer = entry
    this.#newest = entry
    this.#entries.set(key, entry)
    this.#bytes += size
    while (this.#bytes > this.maxBytes) this.#evict()
  }

  #evict (): void {
    let hand = this.#hand ?? this.#oldest!
    // An eviction follows an insertion, and the entry inserted is the newest and not visited:
    // the walk stops there at the latest, so it never has to wrap around.
    while (hand.visited) {
      hand.visited = false
      hand = hand.newer!
    }
    this.#hand = hand.newer
    if (hand.older === undefined) this.#oldest = hand.newer
    else hand.older.newer = hand.newer
    if (hand.newer === undefined) this.#newest = hand.older
    else hand.newer.older = hand.older
    this.#entries.delete(hand.key)
    this.#bytes -= hand.size
    this.stats.evictions++
  }
}
