import type { CacheKey } from './cache-key.ts'

/**
 * A 200 that Fastify answered, kept to be replayed: its headers as Fastify wrote them (every
 * hook's and plugin's included), its body, and what a replay changes: the request id and, for
 * a conditional request that names its tag, the status.
 */
export interface Kept {
  /** The template of the route that answered it, for metrics. */
  readonly route: string
  readonly body: Buffer
  readonly etag: string
  /** Name, value, name, value…: Node writes a flat list as it is, the fastest form. */
  readonly headers: readonly string[]
  /** The same without Content-Type and Content-Length: a 304 has no body to describe. */
  readonly notModified: readonly string[]
  /** Where the request id's value is in each list; -1 when the answer carries none. */
  readonly idAt: number
  readonly notModifiedIdAt: number
}

/**
 * What an entry costs beyond its Host, URL and body: the Map slot, the entry, its key, the kept
 * answer, its two header lists, the tag and the Buffer object (`npm run bench:cache`, figures in
 * docs/performance.md). Without it, a cache of small answers (an empty page, one item) would
 * hold ten times the memory it counts.
 */
export const ENTRY_OVERHEAD_BYTES = 1536

/**
 * The doorkeeper remembers up to 2^16 recently asked-for keys (fewer where two share a slot),
 * and how many times each was missed, in two arrays of that many slots.
 */
const DOORKEEPER_BITS = 16

/**
 * Misses after which a key is kept when the cache is full: a page asked for again and again
 * gets in, while new queries that load generators send a few times over (their threads each
 * count from 1) do not, and turn no entry over (docs/performance.md).
 */
const MISSES_OF_A_HOT_PAGE = 8

/**
 * Once full, the cache takes in at most its own size per this span: a load generator that repeats
 * its list of new queries sends each past the eighth miss, and every one kept would push out
 * another and leave its body dead until a full collection (docs/performance.md).
 */
const INTAKE_SPAN_MS = 60_000

/** What the caches of every generation have done, for /metrics: it outlives a reload. */
export class CacheStats {
  /** Answers replayed (counted by the replays: one found may be declined). */
  hits = 0
  /** Answers offered for a key the cache did not hold. */
  misses = 0
  /** Misses kept (see ResponseCache). */
  admissions = 0
  evictions = 0
}

interface Entry {
  readonly key: CacheKey
  readonly kept: Kept
  readonly size: number
  /** Asked for since the hand last passed: SIEVE keeps it once more. */
  visited: boolean
  newer: Entry | undefined
  older: Entry | undefined
}

/**
 * Kept answers by cache key (see cache-key.ts), bounded in bytes whatever clients send.
 *
 * Admission: a miss is kept only when its key was asked for before, as a doorkeeper (a
 * table of recent keys' hashes and misses) remembers, and, once the cache is full, only on
 * its eighth miss and while the cache has taken in less than its own size in the last minute.
 * A URL asked for once, or a few times (a scan, a cache-busting load, a client paging through
 * the list), then costs the cache nothing, and a list of them sent over and over, little:
 * no entry pushed out, no body copied, none of the dead bodies that only a garbage collection
 * gives back. That turnover, more than the budget, was what a cache-busting load cost in memory
 * (docs/performance.md).
 *
 * Eviction is SIEVE (Zhang et al., NSDI '24): entries queue up newest first; a hit only sets
 * a bit; to make room, a hand walks from the oldest toward the newest, clearing bits, and
 * evicts the first entry whose bit is clear, so pages asked for again and again stay while
 * others pass through, which FIFO and LRU do not allow. A hit costs the key's hash, one Map
 * lookup, two comparisons and one write.
 *
 * Written here rather than taken from a package: the one maintained SIEVE package bounds
 * entries by count, and these vary from 200 bytes to megabytes.
 */
export class ResponseCache {
  /** By the top 30 bits of the key's hash (a number V8 keeps unboxed): of two keys that share them, one is kept. */
  readonly #entries = new Map<number, Entry>()
  /** The doorkeeper: by the high bits of a key's hash, the hash of the last key seen there. */
  readonly #seen = new Uint32Array(2 ** DOORKEEPER_BITS)
  /** By the same slot, how many times that key was missed (up to 255). */
  readonly #missed = new Uint8Array(2 ** DOORKEEPER_BITS)
  #newest: Entry | undefined
  #oldest: Entry | undefined
  /** Where the next eviction starts looking; undefined: at the oldest. */
  #hand: Entry | undefined
  #bytes = 0
  /** Bytes taken in while full since #intakeSince (see INTAKE_SPAN_MS). */
  #intake = 0
  #intakeSince = -Infinity

  readonly maxBytes: number
  readonly stats: CacheStats
  readonly #now: () => number

  /** `now`: a clock in milliseconds, for the intake's span. */
  constructor (maxBytes: number, stats = new CacheStats(), now = () => performance.now()) {
    this.maxBytes = maxBytes
    this.stats = stats
    this.#now = now
  }

  /** Memory held: keys (ASCII: Node refuses other bytes in a URL), bodies and the overhead of each entry. */
  get bytes (): number {
    return this.#bytes
  }

  get (key: CacheKey): Kept | undefined {
    const entry = this.#entries.get(key.hash >>> 2)
    if (entry === undefined || entry.key.url !== key.url || entry.key.host !== key.host) return undefined
    entry.visited = true
    return entry.kept
  }

  /**
   * Whether to keep an answer of `size` bytes (see ENTRY_OVERHEAD_BYTES) for a key that get()
   * did not find: counts the miss, and decides (see the class's comment).
   */
  admits (key: CacheKey, size: number): boolean {
    this.stats.misses++
    const missed = this.#countMiss(key.hash)
    // Larger than the whole cache: keeping it would evict everything else. A slot taken is
    // another key's, or this key's kept since get() (Fastify's hooks may answer later).
    if (size > this.maxBytes || missed === 1 || this.#entries.has(key.hash >>> 2)) return false
    if (this.#bytes + size <= this.maxBytes) return true
    return missed >= MISSES_OF_A_HOT_PAGE && this.#takesIn(size)
  }

  /** Keeps what admits() let in, in the same synchronous turn. */
  add (key: CacheKey, kept: Kept, size: number): void {
    this.stats.admissions++
    const entry: Entry = { key, kept, size, visited: false, newer: undefined, older: this.#newest }
    if (this.#newest === undefined) this.#oldest = entry
    else this.#newest.newer = entry
    this.#newest = entry
    this.#entries.set(key.hash >>> 2, entry)
    this.#bytes += size
    while (this.#bytes > this.maxBytes) this.#evict()
  }

  /** Whether the cache, full, may take in `size` bytes more within the current span; counts them if so. */
  #takesIn (size: number): boolean {
    const now = this.#now()
    if (now - this.#intakeSince >= INTAKE_SPAN_MS) {
      this.#intakeSince = now
      this.#intake = 0
    }
    if (this.#intake + size > this.maxBytes) return false
    this.#intake += size
    return true
  }

  /** How many times the key of this hash was missed since it took its slot in the doorkeeper, this time included. */
  #countMiss (hash: number): number {
    const slot = hash >>> (32 - DOORKEEPER_BITS)
    // Its lowest bit set: 0 is an empty slot.
    const mark = (hash | 1) >>> 0
    if (this.#seen[slot] !== mark) {
      this.#seen[slot] = mark
      this.#missed[slot] = 0
    }
    // Uint8Array: 256 wraps to 0; it stops at 255.
    if (this.#missed[slot]! < 255) this.#missed[slot]!++
    return this.#missed[slot]!
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
    this.#entries.delete(hand.key.hash >>> 2)
    this.#bytes -= hand.size
    this.stats.evictions++
  }
}
