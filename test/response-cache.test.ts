import t from 'tap'
import { represent } from '../lib/answer/answer.ts'
import { ResponseCache } from '../lib/answer/cache.ts'
import { build, get } from './helper.ts'

const NO_HEADERS = { endpoint: [], notModified: [] }

t.test('repeated requests are answered from the cache, byte for byte', async (t) => {
  const { app } = await build(t)
  const first = await get(app, '/api/extras/object-types/?limit=50&offset=50')
  const bytes = app.served.current.cache.bytes
  t.ok(bytes > first.rawPayload.length, 'the page is held')
  const again = await get(app, '/api/extras/object-types/?limit=50&offset=50')
  t.equal(again.body, first.body)
  t.equal(app.served.current.cache.bytes, bytes, 'a hit adds nothing')
  const otherHost = await get(app, '/api/extras/object-types/?limit=50&offset=50', { host: 'other.test' })
  t.equal(JSON.parse(otherHost.body).next, 'http://other.test/api/extras/object-types/?limit=50&offset=100', 'keyed by base URL too')
})

t.test('the cache stays under CACHE_MAX_MB whatever hosts, queries and ids clients send', async (t) => {
  const { app } = await build(t, { env: { CACHE_MAX_MB: '4' } })
  const cap = 4 * 1024 * 1024
  t.equal(app.served.cacheBytes, cap)
  // Each full list is about 28 KB: 1000 distinct ones would be about 28 MB without the cap.
  for (let i = 0; i < 1000; i++) {
    const res = await get(app, `/api/extras/object-types/?limit=0&probe=${i}`, { host: `h${i % 7}.test` })
    if (i % 250 === 0) t.equal(JSON.parse(res.body).results.length, 163, `request ${i} is answered in full`)
    if (app.served.current.cache.bytes > cap) t.fail(`over the cap after ${i}`)
  }
  for (let id = 0; id < 1000; id++) await get(app, `/api/extras/object-types/${id % 200}/?n=${id}`)
  t.ok(app.served.current.cache.bytes <= cap, `${app.served.current.cache.bytes} bytes held, cap ${cap}`)
  t.ok(app.served.current.cache.bytes > cap / 2, 'and it is used')
  const page = JSON.parse((await get(app, '/api/extras/object-types/?limit=0&probe=0', { host: 'h0.test' })).body)
  t.equal(page.results[0].url, 'http://h0.test/api/extras/object-types/23/', 'an evicted answer is rendered again')
})

t.test('the default budget is a share of the V8 heap limit, at most 32 MiB', async (t) => {
  const { app } = await build(t)
  t.equal(app.served.cacheBytes, 32 * 1024 * 1024, 'this test process has a heap of gigabytes')
})

t.test('scan resistance: 100 000 unique queries do not push out 20 pages asked for all the time', async (t) => {
  // 2 MiB of 10 KB pages: about 185 entries. Each hot page comes back every 100 requests.
  const cache = new ResponseCache(2 * 1024 * 1024)
  const body = Buffer.alloc(10 * 1024, 'x')
  const page = represent('/api/extras/object-types/', body, '"tag"', NO_HEADERS)
  const hot = Array.from({ length: 20 }, (_, i) => `inventory.test /api/extras/object-types/?limit=50&offset=${i * 50}`)
  let hotRequests = 0
  let hotHits = 0
  const ask = (key: string) => {
    const found = cache.get(key) !== undefined
    if (!found) cache.set(key, page)
    return found
  }
  for (let i = 0; i < 100_000; i++) {
    ask(`inventory.test /api/extras/object-types/?limit=50&n=${i}`)
    if (i % 5 === 4) {
      hotRequests++
      if (ask(hot[(i - 4) / 5 % hot.length]!)) hotHits++
    }
  }
  const ratio = hotHits / hotRequests
  t.ok(ratio >= 0.95, `hot set hit ratio ${(ratio * 100).toFixed(2)} % (FIFO or a short-lived admission would give about half)`)
  t.ok(cache.bytes <= cache.maxBytes)
  t.equal(cache.stats.hits, hotHits)
  t.equal(cache.stats.misses, 100_000 + hotRequests - hotHits)
  t.equal(cache.stats.evictions, cache.stats.misses - Math.round(cache.bytes / (body.length + 1024 + 60)), 'every miss past the budget evicted one')
})

t.test('when every older entry was asked for again, the newest one goes', async (t) => {
  const page = represent('/', Buffer.alloc(1000), '"a"', NO_HEADERS)
  // Three entries of 1 + 1000 + 1024 bytes (key, body, overhead).
  const cache = new ResponseCache(3 * 2025)
  for (const key of ['a', 'b', 'c']) cache.set(key, page)
  for (const key of ['a', 'b', 'c']) cache.get(key)
  cache.set('d', page)
  cache.set('e', page)
  t.same(['a', 'b', 'c', 'd', 'e'].map((key) => cache.get(key) !== undefined), [false, true, true, false, true],
    'd went (the hand cleared a, b and c on its way), then a, no longer marked')
  t.equal(cache.stats.evictions, 2)
})

t.test('an answer larger than the whole cache is not kept', async (t) => {
  const cache = new ResponseCache(64 * 1024)
  cache.set('small', represent('/', Buffer.alloc(1000), '"a"', NO_HEADERS))
  cache.set('huge', represent('/', Buffer.alloc(100 * 1024), '"b"', NO_HEADERS))
  t.equal(cache.get('huge'), undefined)
  t.ok(cache.get('small') !== undefined, 'and nothing is evicted for it')
})
