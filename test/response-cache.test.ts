import t from 'tap'
import { RESPONSE_CACHE_BYTES } from '../lib/inventory/served.ts'
import { build, get } from './helper.ts'

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

t.test('the cache stays under its cap whatever hosts, queries and ids clients send', async (t) => {
  const { app } = await build(t)
  // Each full list is about 28 KB: 3000 distinct ones would be about 84 MB without the cap.
  for (let i = 0; i < 3000; i++) {
    const res = await get(app, `/api/extras/object-types/?limit=0&probe=${i}`, { host: `h${i % 7}.test` })
    if (i % 500 === 0) t.equal(JSON.parse(res.body).results.length, 163, `request ${i} is answered in full`)
    t.ok(app.served.current.cache.bytes <= RESPONSE_CACHE_BYTES || t.fail(`over the cap after ${i}`))
  }
  for (let id = 0; id < 3000; id++) await get(app, `/api/extras/object-types/${id % 200}/?n=${id}`)
  t.ok(app.served.current.cache.bytes <= RESPONSE_CACHE_BYTES, `${app.served.current.cache.bytes} bytes held, cap ${RESPONSE_CACHE_BYTES}`)
  t.ok(app.served.current.cache.bytes > RESPONSE_CACHE_BYTES / 2, 'and it is used')
  const page = JSON.parse((await get(app, '/api/extras/object-types/?limit=0&probe=0', { host: 'h0.test' })).body)
  t.equal(page.results[0].url, 'http://h0.test/api/extras/object-types/23/', 'an evicted answer is rendered again')
})
