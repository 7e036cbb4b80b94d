import t from 'tap'
import { Agent } from 'node:http'
import { Catalog } from '../lib/inventory/catalog.ts'
import type { Profile } from '../schemas/profile.ts'
import { build, DEFAULT_PROFILE, get } from './helper.ts'
import { fetch as send } from './http.ts'

const OTHER: Profile = {
  status: { ...DEFAULT_PROFILE.status, 'service-version': '9.9.9', plugins: {} },
  objectTypes: [
    { id: 1, app_label: 'dcim', model: 'site', display: 'DCIM | site' },
    { id: 2, app_label: 'dcim', model: 'rack', display: 'DCIM | rack' },
    { id: 7, app_label: 'ipam', model: 'prefix', display: 'IPAM | prefix' },
  ],
}
const URLS = ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/?limit=2&offset=1',
  '/api/extras/object-types/?q=dcim', '/api/extras/object-types/7/', '/api/extras/object-types/?format=api&limit=1']

t.test('a reload under concurrent requests: every answer is wholly the old profile or wholly the new', async (t) => {
  // What each profile alone answers, byte for byte.
  const expected = new Map<string, Set<string>>(URLS.map((url) => [url, new Set()]))
  const otherAnswers = new Map<string, string>()
  for (const profile of [DEFAULT_PROFILE, OTHER]) {
    const { app: alone } = await build(t, { profile })
    for (const url of URLS) {
      const body = (await get(alone, url)).body
      expected.get(url)!.add(body)
      if (profile === OTHER) otherAnswers.set(url, body)
    }
  }

  const { app, port } = await build(t, { listen: true })
  const served = app.served
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  t.teardown(() => agent.destroy())

  const fetch = async (url: string) => (await send(port, url, { agent, headers: { host: 'inventory.test' } })).body
  // Swap back and forth every 25 answers, while the other clients' requests are in flight.
  const catalogs = [new Catalog(OTHER), new Catalog(DEFAULT_PROFILE)]
  let answers = 0
  const mixed: string[] = []
  const seen = new Map<string, Set<string>>(URLS.map((url) => [url, new Set()]))
  const client = async (offset: number) => {
    for (let i = offset; i < offset + 100; i++) {
      const url = URLS[i % URLS.length]!
      const body = await fetch(url)
      if (!expected.get(url)!.has(body)) mixed.push(`${url}: ${body}`)
      seen.get(url)!.add(body)
      if (++answers % 25 === 0) served.swap(catalogs[(answers / 25) % 2]!)
    }
  }
  await Promise.all(Array.from({ length: 16 }, (_, i) => client(i)))
  t.same(mixed, [], 'no answer mixes the two profiles')
  for (const url of URLS) t.equal(seen.get(url)!.size, 2, `${url}: answered from both profiles`)
  t.equal(served.current.number, 1 + 1600 / 25)
  // The last swap served the other profile: nothing cached before it may answer now.
  for (const url of URLS) t.equal(await fetch(url), otherAnswers.get(url), `${url} after the last swap`)
})

t.test('after a reload, a tag of the old profile no longer matches', async (t) => {
  const { app } = await build(t)
  const old = await get(app, '/api/status/')
  t.equal((await get(app, '/api/status/', { 'if-none-match': String(old.headers.etag) })).statusCode, 304)
  app.served.swap(new Catalog(OTHER))
  const fresh = await get(app, '/api/status/', { 'if-none-match': String(old.headers.etag) })
  t.equal(fresh.statusCode, 200)
  t.match(fresh.body, '"service-version":"9.9.9"')
  t.not(fresh.headers.etag, old.headers.etag)
})
