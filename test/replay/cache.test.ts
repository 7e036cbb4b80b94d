import type { IncomingMessage } from 'node:http'
import t from 'tap'
import { ENTRY_OVERHEAD_BYTES, ResponseCache, type Kept } from '../../lib/replay/cache.ts'
import { cacheKey, type CacheKey } from '../../lib/replay/cache-key.ts'
import { build, get } from '../helpers/build.ts'

const KEY = cacheKey('inventory.test', '/api/extras/object-types/?limit=50&offset=50')
/** A key of this URL and no Host: what the cache counts of it is the URL's length. */
const k = (url: string) => cacheKey('', url)

/** A kept answer of this body and tag. */
const keptOf = (body: Buffer, etag: string): Kept => ({ route: '/', body, etag, headers: [], notModified: [], idAt: -1, notModifiedIdAt: -1 })

/** Offers an answer for a key get() did not find, as the replays do. */
function offer (cache: ResponseCache, key: CacheKey, kept: Kept): void {
  const size = key.host.length + key.url.length + kept.body.length + ENTRY_OVERHEAD_BYTES
  if (cache.admits(key, size)) cache.add(key, kept, size)
}

/** A URL missed twice (the second time only if the first did not keep it): past the doorkeeper. */
function admit (cache: ResponseCache, url: string, kept: Kept): void {
  const { admissions } = cache.stats
  offer(cache, k(url), kept)
  if (cache.stats.admissions === admissions) offer(cache, k(url), kept)
}

t.test('a page is kept the second time it is asked for, as one Buffer of its own', async (t) => {
  const { app, replays } = await build(t)
  const first = await get(app, '/api/extras/object-types/?limit=50&offset=50')
  t.equal(replays!.bytes, 0, 'asked for once: not kept')
  t.equal((await get(app, '/api/extras/object-types/?limit=50&offset=50')).body, first.body)
  const bytes = replays!.bytes
  t.equal(bytes, KEY.host.length + KEY.url.length + first.rawPayload.length + ENTRY_OVERHEAD_BYTES, 'asked for again: kept (Host, URL, body, overhead)')
  // Through Fastify (inject): made again, and not kept twice.
  const again = await get(app, '/api/extras/object-types/?limit=50&offset=50')
  t.equal(again.body, first.body)
  t.equal(replays!.bytes, bytes, 'kept once')
  t.same(replays!.stats, { hits: 0, misses: 3, admissions: 1, evictions: 0 })
  const { body } = replays!.find(again.raw.req)!
  t.same([body.byteOffset, body.buffer.byteLength], [0, first.rawPayload.length], 'a Buffer of its own, the size of the page')
  t.equal(body.toString(), first.body)
  const otherHost = await get(app, '/api/extras/object-types/?limit=50&offset=50', { host: 'other.test' })
  t.equal(JSON.parse(otherHost.body).next, 'http://other.test/api/extras/object-types/?limit=50&offset=100', 'keyed by base URL too')
})

t.test('an answer is kept under its own request\'s key, also when another request was looked up since', async (t) => {
  const { service, replays } = await build(t)
  const request = (url: string) => ({ url, rawHeaders: ['Host', 'inventory.test'], httpVersion: '1.1' }) as IncomingMessage
  const [first, second] = [request('/api/status/?n=1'), request('/api/status/?n=2')]
  const answer = (raw: IncomingMessage, body: string) => {
    // Past the doorkeeper: a key is kept at its second miss.
    for (let miss = 0; miss < 2; miss++) replays!.keep(raw, service.served.current, '/api/status/', () => ({ etag: `"${body}"` }), Buffer.from(body))
  }
  t.equal(replays!.find(first), undefined)
  t.equal(replays!.find(second), undefined)
  // The first is answered last, as an answer that waits for a promise is.
  answer(second, 'second')
  answer(first, 'first')
  t.equal(replays!.find(first)?.body.toString(), 'first')
  t.equal(replays!.find(second)?.body.toString(), 'second')
})

t.test('URLs asked for once cost the cache nothing', async (t) => {
  const { app, replays } = await build(t)
  for (let i = 0; i < 500; i++) {
    const res = await get(app, `/api/extras/object-types/?limit=50&n=${i}`)
    if (i % 100 === 0) t.equal(JSON.parse(res.body).results.length, 50, `request ${i} is answered in full`)
  }
  t.equal(replays!.bytes, 0)
  t.same(replays!.stats, { hits: 0, misses: 500, admissions: 0, evictions: 0 })
})

t.test('the cache stays under CACHE_MAX_MB whatever hosts, queries and ids clients send', async (t) => {
  const { app, replays } = await build(t, { env: { CACHE_MAX_MB: '4' } })
  const cap = 4 * 1024 * 1024
  t.equal(replays!.maxBytes, cap)
  // Each full list is about 28 KB, each asked for twice: 1000 distinct ones would be about 28 MB without the cap.
  for (let i = 0; i < 1000; i++) {
    for (let twice = 0; twice < 2; twice++) {
      const res = await get(app, `/api/extras/object-types/?limit=0&probe=${i}`, { host: `h${i % 7}.test` })
      if (i % 250 === 0) t.equal(JSON.parse(res.body).results.length, 163, `request ${i} is answered in full`)
    }
    if (replays!.bytes > cap) t.fail(`over the cap after ${i}`)
  }
  // Once full, a query is kept at its eighth miss, in place of others.
  for (let id = 0; id < 300; id++) {
    for (let miss = 0; miss < 8; miss++) await get(app, `/api/extras/object-types/${id % 200}/?n=${id}`)
  }
  t.ok(replays!.bytes <= cap, `${replays!.bytes} bytes held, cap ${cap}`)
  t.ok(replays!.bytes > cap / 2, 'and it is used')
  t.ok(replays!.stats.evictions > 0)
  const page = JSON.parse((await get(app, '/api/extras/object-types/?limit=0&probe=0', { host: 'h0.test' })).body)
  t.equal(page.results[0].url, 'http://h0.test/api/extras/object-types/23/', 'an evicted answer is rendered again')
})

t.test('the default budget is a share of the V8 heap limit, at most 4 MiB', async (t) => {
  const { replays } = await build(t)
  t.equal(replays!.maxBytes, 4 * 1024 * 1024, 'this test process has a heap of gigabytes')
})

t.test('scan resistance: 100 000 new queries do not push out 20 pages asked for all the time', async (t) => {
  // 2 MiB of 10 KB pages: some 180 entries. Each hot page comes back every 100 requests.
  const body = Buffer.alloc(10 * 1024, 'x')
  const page = keptOf(body, '"tag"')
  const hot = Array.from({ length: 20 }, (_, i) => `/api/extras/object-types/?limit=50&offset=${i * 50}`)
  // Load generators whose threads each count from 1 send every new query several times.
  for (const copies of [1, 2, 4]) {
    const cache = new ResponseCache(2 * 1024 * 1024)
    let hotRequests = 0
    let hotHits = 0
    let hits = 0
    const ask = (url: string) => {
      const key = cacheKey('inventory.test', url)
      const found = cache.get(key) !== undefined
      if (found) hits++
      else offer(cache, key, page)
      return found
    }
    for (let i = 0; i < 100_000; i++) {
      for (let copy = 0; copy < copies; copy++) ask(`/api/extras/object-types/?limit=50&n=${i}`)
      if (i % 5 === 4) {
        hotRequests++
        if (ask(hot[(i - 4) / 5 % hot.length]!)) hotHits++
      }
    }
    const ratio = hotHits / hotRequests
    // With FIFO eviction in place of SIEVE: 62 % (twice) and 38 % (four times).
    t.ok(ratio >= 0.95, `each new query sent ${copies === 1 ? 'once' : `${copies} times`}: hot set hit ratio ${(ratio * 100).toFixed(2)} %`)
    t.ok(cache.bytes <= cache.maxBytes)
    t.ok(hits >= hotHits, 'hits: the hot set\'s, and repeated new queries that got in')
    t.equal(cache.stats.misses, 100_000 * copies + hotRequests - hits)
    if (copies === 1) t.equal(cache.stats.admissions, 20, 'of the misses, only the hot pages were kept, once each')
    else {
      // The first pages past the doorkeeper fill the cache; after that only a page missed eight
      // times gets in, and no new query is sent that often. An entry's key is at most 64 bytes.
      const entry = 64 + body.length + ENTRY_OVERHEAD_BYTES
      t.ok(cache.bytes > cache.maxBytes - entry, 'full')
      t.ok(cache.stats.evictions <= hot.length, `${cache.stats.evictions} evicted: only for hot pages, each kept once`)
    }
  }
})

t.test('once full, the cache keeps no newcomer missed fewer than eight times, and always has room for the first', async (t) => {
  const page = keptOf(Buffer.alloc(1000), '"a"')
  // 100 entries of a 5-byte key and a 1000-byte body.
  const entry = 5 + 1000 + ENTRY_OVERHEAD_BYTES
  const cache = new ResponseCache(100 * entry)
  for (let i = 0; i < 100; i++) admit(cache, `k${String(i).padStart(4, '0')}`, page)
  t.same([cache.bytes, cache.stats.admissions, cache.stats.evictions], [100 * entry, 100, 0], 'filled, nothing evicted')
  for (let i = 0; i < 1000; i++) {
    for (let miss = 1; miss < 8; miss++) offer(cache, k(`n${i.toString(36).padStart(4, '0')}`), page)
  }
  t.same([cache.stats.admissions, cache.stats.evictions, cache.stats.misses], [100, 0, 200 + 7000], '1000 newcomers, each missed seven times: none kept, none evicted')
  t.ok(cache.get(k('k0000')) !== undefined && cache.get(k('k0099')) !== undefined, 'the first ones stay')
})

t.test('once full, the cache keeps a page missed for the eighth time, in place of another', async (t) => {
  const page = keptOf(Buffer.alloc(1000), '"a"')
  const cache = new ResponseCache(3 * (1 + 1000 + ENTRY_OVERHEAD_BYTES))
  for (const key of ['a', 'b', 'c']) admit(cache, key, page)
  for (let miss = 1; miss < 8; miss++) offer(cache, k('h'), page)
  t.same([cache.get(k('h')), cache.stats.admissions], [undefined, 3], 'missed seven times: not kept')
  offer(cache, k('h'), page)
  t.same([cache.get(k('h')) !== undefined, cache.stats.admissions, cache.stats.evictions], [true, 4, 1], 'the eighth: kept, in place of another')
  t.same(['a', 'b', 'c'].map((key) => cache.get(k(key)) !== undefined), [false, true, true], 'the oldest, never asked for again')
})

t.test('once full, a list of queries asked for over and over takes in at most the cache\'s size a minute', async (t) => {
  const page = keptOf(Buffer.alloc(1000), '"a"')
  // 100 entries of a 5-byte key and a 1000-byte body.
  const entry = 5 + 1000 + ENTRY_OVERHEAD_BYTES
  let now = 0
  const cache = new ResponseCache(100 * entry, undefined, () => now)
  for (let i = 0; i < 100; i++) admit(cache, `k${String(i).padStart(4, '0')}`, page)
  // A load generator that sends its 1000 new queries again and again, each past its eighth miss.
  const round = () => {
    for (let i = 0; i < 1000; i++) offer(cache, k(`n${i.toString(36).padStart(4, '0')}`), page)
  }
  for (let r = 0; r < 20; r++) round()
  t.same([cache.stats.admissions, cache.stats.evictions], [200, 100], 'the first minute: one cache\'s worth taken in, then none')
  t.ok(cache.bytes <= cache.maxBytes)
  now += 59_999
  round()
  t.equal(cache.stats.admissions, 200, 'none until a minute has passed')
  now += 1
  for (let r = 0; r < 5; r++) round()
  t.same([cache.stats.admissions, cache.stats.evictions], [300, 200], 'the next minute: one cache\'s worth again')
})

t.test('when every older entry was asked for again, the newest one goes', async (t) => {
  const page = keptOf(Buffer.alloc(1000), '"a"')
  // Three entries of a 1-byte key and a 1000-byte body.
  const cache = new ResponseCache(3 * (1 + 1000 + ENTRY_OVERHEAD_BYTES))
  for (const key of ['a', 'b', 'c']) admit(cache, key, page)
  for (const key of ['a', 'b', 'c']) cache.get(k(key))
  // Full: a newcomer is kept at its eighth miss.
  for (const key of ['d', 'e']) {
    for (let miss = 0; miss < 8; miss++) offer(cache, k(key), page)
  }
  t.same(['a', 'b', 'c', 'd', 'e'].map((key) => cache.get(k(key)) !== undefined), [false, true, true, false, true],
    'd went (the hand cleared a, b and c on its way), then a, no longer marked')
  t.equal(cache.stats.evictions, 2)
})

t.test('an answer larger than the whole cache is not kept', async (t) => {
  const cache = new ResponseCache(64 * 1024)
  admit(cache, 'small', keptOf(Buffer.alloc(1000), '"a"'))
  admit(cache, 'huge', keptOf(Buffer.alloc(100 * 1024), '"b"'))
  t.equal(cache.get(k('huge')), undefined)
  t.ok(cache.get(k('small')) !== undefined, 'and nothing is evicted for it')
})

t.test('of two keys whose hashes share a slot, each gets its own answer or none', async (t) => {
  // The cache's map is keyed by the top 30 bits of a key's hash: look for two keys that share
  // them, of the same Host and other URLs, and of other Hosts and the same URL.
  const sharingASlot = (keyOf: (n: number) => CacheKey): [CacheKey, CacheKey] => {
    const bySlot = new Map<number, CacheKey>()
    for (let n = 0; ; n++) {
      const key = keyOf(n)
      const other = bySlot.get(key.hash >>> 2)
      if (other !== undefined) return [other, key]
      bySlot.set(key.hash >>> 2, key)
    }
  }
  for (const [first, second] of [
    sharingASlot((n) => cacheKey('inventory.test', `/api/extras/object-types/?n=${n}`)),
    sharingASlot((n) => cacheKey(`h${n}.test`, '/api/extras/object-types/')),
  ]) {
    const cache = new ResponseCache(64 * 1024)
    for (let twice = 0; twice < 2; twice++) offer(cache, first, keptOf(Buffer.from('first'), '"1"'))
    t.equal(cache.get(first)?.etag, '"1"', 'the first is kept')
    t.equal(cache.get(second), undefined, `${second.host} ${second.url} does not get the answer of ${first.host} ${first.url}`)
    for (let twice = 0; twice < 2; twice++) offer(cache, second, keptOf(Buffer.from('second'), '"2"'))
    t.same([cache.get(second), cache.get(first)?.etag, cache.stats.admissions], [undefined, '"1"', 1], 'nor a place of its own: it is rendered each time')
  }
})
