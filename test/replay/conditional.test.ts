import t, { type Test } from 'tap'
import type { Replays } from '../../lib/replay/replays.ts'
import { API_HEADERS, build, DEFAULT_PROFILE, type BuildOptions } from '../helpers/build.ts'
import { fetch, type Reply } from '../helpers/http.ts'

// ETags, 304s and Cache-Control over real sockets, through the front: each on Fastify's answer and
// on its replay.

const TAG = /^"[0-9a-f]{16}"$/
const NOT_MODIFIED_HEADERS = { vary: 'Accept', allow: 'GET, HEAD, OPTIONS', 'cache-control': 'no-cache' }
const HOST = { host: 'inventory.test' }

/** Fastify's answer, then (the cache keeps a page the second time) the front's replay of it, checked to be one. */
async function firstAndReplay (t: Test, port: number, replays: Replays, path: string, method = 'GET', headers: Record<string, string> = {}): Promise<[Reply, Reply]> {
  const first = await fetch(port, path, { method, headers: { ...HOST, ...headers } })
  await fetch(port, path, { method, headers: { ...HOST, ...headers } })
  const hits = replays.stats.hits
  const replay = await fetch(port, path, { method, headers: { ...HOST, ...headers } })
  t.equal(replays.stats.hits, hits + 1, `${method} ${path}: the third answer is a replay`)
  return [first, replay]
}

async function listening (t: Test, options: BuildOptions = {}) {
  const { port, replays } = await build(t, { ...options, listen: true })
  return { port, replays: replays! }
}

t.test('every 200 to GET and HEAD carries a strong ETag of its bytes and Cache-Control: no-cache, replayed alike', async (t) => {
  const { port, replays } = await listening(t)
  const tags = new Map<string, string>()
  for (const url of ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/?limit=2', '/api/extras/object-types/7/']) {
    const [first, replay] = await firstAndReplay(t, port, replays, url)
    const [head, headReplay] = await firstAndReplay(t, port, replays, `${url}${url.includes('?') ? '&' : '?'}head`, 'HEAD')
    t.match(first.headers, { ...API_HEADERS, 'cache-control': 'no-cache', etag: TAG }, url)
    t.same([replay.headers.etag, replay.headers['cache-control'], replay.body], [first.headers.etag, 'no-cache', first.body], `${url}: the replay, the same tag`)
    t.same([head.body, headReplay.body, headReplay.headers.etag], ['', '', head.headers.etag], `${url}: HEAD and its replay`)
    tags.set(String(first.headers.etag), url)
  }
  t.equal(tags.size, 4, 'other bytes, another tag')
  const [elsewhere] = await firstAndReplay(t, port, replays, '/api/extras/object-types/7/', 'GET', { host: 'other.test' })
  t.not(elsewhere.headers.etag, [...tags.keys()][3], 'another Host, another tag: the urls in the body differ')
  const [withQuery] = await firstAndReplay(t, port, replays, '/api/status/?x=1')
  t.not(withQuery.headers.etag, [...tags.keys()][0], 'a tag names what the answer depends on (profile, sizes, base URL, request URL), not only its bytes')
})

t.test('If-None-Match naming the tag gets 304 with no body, from Fastify and from a replay; anything else the 200', async (t) => {
  const { port, replays } = await listening(t)
  const url = '/api/extras/object-types/?limit=2&offset=4'
  const [page] = await firstAndReplay(t, port, replays, url)
  const tag = String(page.headers.etag)
  for (const ifNoneMatch of [tag, `W/${tag}`, `"other", ${tag}`, `"a",W/${tag} , "b"`, '*']) {
    for (const method of ['GET', 'HEAD']) {
      // The page is kept: this is the front's 304. A query Fastify has not answered before gets Fastify's.
      const replayed = await fetch(port, url, { method, headers: { ...HOST, 'if-none-match': ifNoneMatch } })
      const fresh = `${url}&n=${encodeURIComponent(ifNoneMatch)}${method}`
      const fastify = await fetch(port, fresh, { method, headers: { ...HOST, 'if-none-match': (await fetch(port, fresh, { headers: HOST })).headers.etag as string } })
      for (const [who, res] of [['replay', replayed], ['Fastify', fastify]] as const) {
        t.same([res.status, res.body, 'content-type' in res.headers], [304, '', false], `${who}: ${method} If-None-Match: ${ifNoneMatch}`)
        t.match(res.headers, NOT_MODIFIED_HEADERS)
      }
      t.equal(replayed.headers.etag, tag)
    }
  }
  for (const ifNoneMatch of ['"other"', tag.slice(0, -1), `${tag.slice(1, -1)}`, '']) {
    const res = await fetch(port, url, { headers: { ...HOST, 'if-none-match': ifNoneMatch } })
    t.same([res.status, res.body], [200, page.body], `If-None-Match: ${ifNoneMatch}`)
  }
})

t.test('an answer that is never kept is tagged and revalidated all the same', async (t) => {
  const { port, replays } = await listening(t, { env: { TRUST_PROXY: '127.0.0.1' } })
  const headers = { ...HOST, 'x-forwarded-host': 'public.test', 'x-forwarded-proto': 'https' }
  const page = await fetch(port, '/api/extras/object-types/?limit=1', { headers })
  t.match(page.body, '"next":"https://public.test/api/extras/object-types/?limit=1&offset=1"')
  const again = await fetch(port, '/api/extras/object-types/?limit=1', { headers: { ...headers, 'if-none-match': String(page.headers.etag) } })
  t.same([again.status, again.body], [304, ''])
  t.equal(replays.bytes, 0, 'forwarded headers: nothing kept')
  // Without forwarded headers, the same answer is kept (the second time), and replayed with its tag.
  const [first, replay] = await firstAndReplay(t, port, replays, '/api/extras/object-types/?limit=1')
  t.equal(replay.headers.etag, first.headers.etag)
})

t.test('replicas on the same profile give the same tag; another profile or page size another', async (t) => {
  const tagOf = async (options: BuildOptions) => {
    const { port, replays } = await listening(t, options)
    const [first, replay] = await firstAndReplay(t, port, replays, '/api/extras/object-types/?offset=5')
    t.equal(replay.headers.etag, first.headers.etag)
    return first.headers.etag
  }
  const first = await tagOf({})
  t.equal(await tagOf({}), first, 'a second process, the same tag: a client may revalidate on any replica')
  t.not(await tagOf({ profile: { ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'runtime-version': '3.13.0' } } }), first)
  t.not(await tagOf({ env: { PAGINATE_COUNT: '20' } }), first)
})
