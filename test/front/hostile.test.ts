import t from 'tap'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { ObjectTypePage } from '../../schemas/api.ts'
import { LIST, assertSchema, build, get, inject } from '../helpers/build.ts'
import { ROUTES } from '../helpers/contract.ts'
import { method, path, query } from '../helpers/requests.ts'

// Property-based: thousands of generated requests, each checked against what must always hold.
interface Item { id: number, url: string, display: string, app_label: string, model: string }

/** The API's routes as Fastify registered them: every answer of theirs has an Allow header. */
const ENDPOINT_PATHS = ROUTES.filter((route) => route.url.startsWith('/api/')).map((route) => route.pattern)
/** A path with malformed percent-encoding is refused before routing, as no endpoint's. */
const wellEncoded = (path: string) => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

async function fullList (app: FastifyInstance): Promise<Item[]> {
  return JSON.parse((await get(app, '/api/extras/object-types/?limit=0')).body).results
}

t.test('any path, query and method: never a 5xx, always JSON with the headers every answer carries', async (t) => {
  const { app } = await build(t)
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(method, path, fc.option(query), async (method, path, query) => {
    const url = query === null ? path : `${path}?${query}`
    const res = await inject(app, { method, url, headers: { host: 'inventory.test' } })
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    const where = `${method} ${url} -> ${res.statusCode}`
    if (res.statusCode >= 500) throw new Error(where)
    if (res.headers['content-type'] !== 'application/json' || res.headers.vary !== 'Accept') throw new Error(`headers of ${where}`)
    if (ENDPOINT_PATHS.some((pattern) => pattern.test(path)) && wellEncoded(path) && res.headers.allow !== 'GET, HEAD, OPTIONS') throw new Error(`no Allow on ${where}`)
    if (method !== 'HEAD') JSON.parse(res.body)
  }), { numRuns: 3000 })
  t.pass(`answers by status: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
})

// The reference's reading of limit/offset, for the values generated below.
const effectiveLimit = (text: string | null) => {
  const n = text !== null && /^-?[0-9]+$/.test(text) ? Number(text) : -1
  return n < 0 ? 50 : n === 0 || n > 1000 ? 1000 : n
}
const effectiveOffset = (text: string | null) => text !== null && /^[0-9]+$/.test(text) ? Number(text) : 0

t.test('every valid page is exactly the slice of the full order that its limit and offset select', async (t) => {
  const { app } = await build(t)
  const all = await fullList(app)
  const filters = fc.option(fc.oneof(
    fc.constantFrom('dcim', 'IP', 'an', 'zzz', 'ser', 'Virtual').map((q) => ({
      param: `q=${q}`,
      keep: (item: Item) => item.app_label.toUpperCase().includes(q.toUpperCase()) || item.model.toUpperCase().includes(q.toUpperCase()),
    })),
    fc.constantFrom('dcim', 'ipam', 'users', 'nope').map((label) => ({ param: `app_label=${label}`, keep: (item: Item) => item.app_label === label }))
  ))
  const limit = fc.option(fc.oneof(fc.integer({ min: -3, max: 1200 }).map(String), fc.constantFrom('', 'abc', '1.5', '-')))
  const offset = fc.option(fc.oneof(fc.integer({ min: -3, max: 400 }).map(String), fc.constantFrom('', 'x', '1.0')))
  await fc.assert(fc.asyncProperty(limit, offset, filters, fc.boolean(), async (limit, offset, filter, extra) => {
    const params = [
      ...(limit === null ? [] : [`limit=${limit}`]),
      ...(offset === null ? [] : [`offset=${offset}`]),
      ...(filter === null ? [] : [filter.param]),
      ...(extra ? ['utm_source=probe'] : []),
    ]
    const res = await get(app, `${LIST}?${params.join('&')}`.replace(LIST.slice(0, 'http://inventory.test'.length), ''))
    const page = res.json()
    const expected = filter === null ? all : all.filter(filter.keep)
    const start = effectiveOffset(offset)
    const want = expected.slice(start, start + effectiveLimit(limit)).map((item) => item.id)
    const got = page.results.map((item: Item) => item.id)
    if (res.statusCode !== 200 || page.count !== expected.length || JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(`?${params.join('&')}: ${res.statusCode}, count ${page.count} (want ${expected.length}), results ${got} (want ${want})`)
    }
  }), { numRuns: 1500 })
  assertSchema(t, ObjectTypePage, (await get(app, '/api/extras/object-types/?limit=3&q=dcim')).json())
})

t.test('following next from the first page visits every item once, in order', async (t) => {
  const { app } = await build(t)
  const all = await fullList(app)
  const filter = fc.option(fc.constantFrom('q=dcim', 'app_label=ipam', 'q=an', 'format=api', 'utm_source=x'))
  await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 170 }), filter, async (limit, filter) => {
    const seen: number[] = []
    let next: string | null = `/api/extras/object-types/?limit=${limit}${filter === null ? '' : `&${filter}`}`
    let pages = 0
    while (next !== null) {
      const page: { next: string | null, results: Item[] } = (await get(app, next)).json()
      seen.push(...page.results.map((item) => item.id))
      next = page.next === null ? null : page.next.slice('http://inventory.test'.length)
      if (++pages > 200) throw new Error('no end')
    }
    const label = filter?.split('=')[1]
    const expected = all.filter((item) => filter === null || !/^(q|app_label)=/.test(filter) ||
      (filter.startsWith('app_label') ? item.app_label === label : item.app_label.toUpperCase().includes(label!.toUpperCase()) || item.model.toUpperCase().includes(label!.toUpperCase())))
    if (JSON.stringify(seen) !== JSON.stringify(expected.map((item) => item.id))) throw new Error(`limit=${limit} ${filter}: ${seen}`)
    if (pages !== Math.max(1, Math.ceil(expected.length / limit))) throw new Error(`limit=${limit} ${filter}: ${pages} pages`)
  }), { numRuns: 300 })
  t.pass()
})

t.test('a forged Host never appears in a link under ALLOWED_HOSTS or PUBLIC_URL', async (t) => {
  const host = fc.oneof(
    fc.constantFrom('evil.test', 'inventory.test.evil.test', 'evil.test:80', 'inventory.test@evil.test', 'evil.test#inventory.test',
      '[::1]', 'INVENTORY.TEST', 'inventory.test:8080', '', 'inventory.test/evil', 'évil.test'),
    fc.string({ unit: 'grapheme-ascii', maxLength: 24 })
  )
  const forwarded = fc.option(fc.constantFrom('evil.test', 'inventory.test', 'https'))
  for (const [env, base] of [
    [{ ALLOWED_HOSTS: 'inventory.test' }, /^http:\/\/inventory\.test(:[0-9]+)?\//i],
    [{ PUBLIC_URL: 'https://public.example/inv' }, /^https:\/\/public\.example\/inv\//],
    [{ PUBLIC_URL: 'https://public.example', ALLOWED_HOSTS: 'inventory.test' }, /^https:\/\/public\.example\//],
  ] as const) {
    const { app } = await build(t, { env })
    await fc.assert(fc.asyncProperty(host, forwarded, fc.constantFrom('/api/extras/object-types/?limit=2&offset=2', '/api/extras/object-types/7/', '/api/status'),
      async (host, forwarded, url) => {
        const res = await inject(app, { url, headers: { host, ...(forwarded !== null && { 'x-forwarded-host': forwarded, 'x-forwarded-proto': forwarded }) } })
        if (res.statusCode >= 500) throw new Error(`${host}: ${res.statusCode}`)
        const links = [...res.body.matchAll(/"(?:url|next|previous)":"([^"]*)"/g)].map((match) => match[1]!)
        if (res.headers.location !== undefined) links.push(String(res.headers.location))
        for (const link of links) if (!base.test(link)) throw new Error(`Host ${JSON.stringify(host)}: ${link}`)
      }), { numRuns: 1000 })
    t.pass(JSON.stringify(env))
  }
})
