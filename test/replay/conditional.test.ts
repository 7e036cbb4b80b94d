import t from 'tap'
import { API_HEADERS, build, DEFAULT_PROFILE, get, inject } from '../helper.ts'

const TAG = /^"[\w-]{27}"$/
const NOT_MODIFIED_HEADERS = { vary: 'Accept', allow: 'GET, HEAD, OPTIONS', 'cache-control': 'no-cache' }

t.test('every 200 to GET and HEAD carries a strong ETag of its bytes and Cache-Control: no-cache', async (t) => {
  const { app } = await build(t)
  const tags = new Map<string, string>()
  for (const url of ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/?limit=2', '/api/extras/object-types/7/']) {
    const first = await get(app, url)
    const again = await get(app, url)
    const head = await inject(app, { method: 'HEAD', url, headers: { host: 'inventory.test' } })
    t.match(first.headers, { ...API_HEADERS, 'cache-control': 'no-cache', etag: TAG }, url)
    t.equal(again.headers.etag, first.headers.etag, 'the same bytes, the same tag')
    t.equal(head.headers.etag, first.headers.etag, 'HEAD too')
    tags.set(String(first.headers.etag), url)
  }
  t.equal(tags.size, 4, 'other bytes, another tag')
  t.not((await get(app, '/api/extras/object-types/7/', { host: 'other.test' })).headers.etag,
    (await get(app, '/api/extras/object-types/7/')).headers.etag, 'another Host, another tag: the urls in the body differ')
  t.not((await get(app, '/api/status/?x=1')).headers.etag, (await get(app, '/api/status/')).headers.etag,
    'a tag names what the answer depends on (profile, sizes, base URL, request URL), not only its bytes')
})

t.test('If-None-Match naming the tag gets 304 with no body; anything else the 200', async (t) => {
  const { app } = await build(t)
  const url = '/api/extras/object-types/?limit=2&offset=4'
  const page = await get(app, url)
  const tag = String(page.headers.etag)
  for (const ifNoneMatch of [tag, `W/${tag}`, `"other", ${tag}`, `"a",W/${tag} , "b"`, '*']) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await inject(app, { method, url, headers: { host: 'inventory.test', 'if-none-match': ifNoneMatch } })
      t.equal(res.statusCode, 304, `${method} If-None-Match: ${ifNoneMatch}`)
      t.equal(res.body, '')
      t.match(res.headers, { ...NOT_MODIFIED_HEADERS, etag: tag })
      t.notOk('content-type' in res.headers)
    }
  }
  for (const ifNoneMatch of ['"other"', tag.slice(0, -1), `${tag.slice(1, -1)}`, '']) {
    const res = await get(app, url, { 'if-none-match': ifNoneMatch })
    t.same([res.statusCode, res.body], [200, page.body], `If-None-Match: ${ifNoneMatch}`)
  }
})

t.test('an answer that is never cached is tagged and revalidated all the same', async (t) => {
  const { app, replays } = await build(t, { env: { TRUST_PROXY: '127.0.0.1' } })
  const headers = { 'x-forwarded-host': 'public.test', 'x-forwarded-proto': 'https' }
  const page = await get(app, '/api/extras/object-types/?limit=1', headers)
  t.match(page.body, '"next":"https://public.test/api/extras/object-types/?limit=1&offset=1"')
  const again = await get(app, '/api/extras/object-types/?limit=1', { ...headers, 'if-none-match': String(page.headers.etag) })
  t.equal(again.statusCode, 304)
  t.equal(replays!.bytes, 0)
  // Without forwarded headers, the same answer is kept (the second time), to be replayed.
  for (let i = 0; i < 2; i++) await get(app, '/api/extras/object-types/?limit=1')
  t.ok(replays!.bytes > 0)
})

t.test('replicas on the same profile give the same tag; another profile or page size another', async (t) => {
  const tagOf = async (options: Parameters<typeof build>[1]) => (await get((await build(t, options)).app, '/api/extras/object-types/?offset=5')).headers.etag
  const first = await tagOf({})
  t.equal(await tagOf({}), first, 'a second process, the same tag: a client may revalidate on any replica')
  t.not(await tagOf({ profile: { ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'runtime-version': '3.13.0' } } }), first)
  t.not(await tagOf({ env: { PAGINATE_COUNT: '20' } }), first)
})
