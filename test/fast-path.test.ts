import t, { type Test } from 'tap'
import fc from 'fast-check'
import { writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pino } from 'pino'
import { PROBE_PATHS } from '../lib/ops/probes.ts'
import { build } from './helper.ts'
import { exchange } from './http.ts'
import { method, path, query } from './requests.ts'

/** What the reference's middleware adds to every answer under /api/, as the answers list it. */
const MIDDLEWARE = 'api-version: 4\\.3\r\nx-content-type-options: nosniff\r\nreferrer-policy: same-origin\r\n' +
  'cross-origin-opener-policy: same-origin\r\nx-frame-options: SAMEORIGIN\r\n'
const GET = (path: string, host = 'inventory.test', extra = '') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`

/** The service listening on a real socket, with a count of the requests that entered Fastify. */
async function countingFastify (t: Test, env: NodeJS.ProcessEnv = {}): Promise<{ port: number, entered: () => number }> {
  const { app, service } = await build(t, { env })
  let entered = 0
  app.addHook('onRequest', (_request, _reply, done) => { entered++; done() })
  await service.listen(0, '127.0.0.1')
  return { port: (service.server.address() as AddressInfo).port, entered: () => entered }
}

t.test('a GET or HEAD answered with a 200 never enters Fastify, the first time or after; anything else does', async (t) => {
  const { port: listening, entered } = await countingFastify(t)
  const path = '/api/extras/object-types/?limit=3&offset=7'
  const [first, second, third, head] = await exchange(listening, [GET(path), GET(path), GET(path), `HEAD ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`])
  t.match(first, /^HTTP\/1\.1 200 OK\r\n[^]*"next":"http:\/\/inventory\.test\/api\/extras\/object-types\/\?limit=3&offset=10"/)
  t.equal(second, first)
  t.equal(third, first, 'the hit is the miss, byte for byte')
  t.equal(head, first!.slice(0, first!.indexOf('\r\n\r\n') + 4), 'HEAD: the same headers, no body')
  await exchange(listening, [GET(path, 'other.test'), GET('/api/extras/object-types/7.json'), GET('/api/status/?format=api')])
  t.equal(entered(), 0, 'Fastify saw none of these 200s')
  const [options] = await exchange(listening, [`OPTIONS ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`])
  t.match(options, /^HTTP\/1\.1 200 OK\r\n/)
  t.equal(entered(), 1, 'only GET and HEAD are answered before Fastify')
  const [unknownFormat, filterError, noSuchItem, unslashed] = await exchange(listening, [GET(`${path}&format=xml`), GET(`${path}&id=x`), GET('/api/extras/object-types/999999/'), GET('/api/status')])
  t.match(unknownFormat, /^HTTP\/1\.1 404 Not Found\r\n[^]*\{"detail":"Not found\."\}$/)
  t.match(filterError, /^HTTP\/1\.1 400 Bad Request\r\n[^]*\{"id":\["Enter a number\."\]\}$/)
  t.match(noSuchItem, /^HTTP\/1\.1 404 Not Found\r\n[^]*\{"detail":"No ObjectType matches the given query\."\}$/)
  t.match(unslashed, /^HTTP\/1\.1 301 Moved Permanently\r\n/)
  t.equal(entered(), 5, 'errors and redirects are answered by Fastify')
})

t.test('the probes are answered before Fastify, whatever the Host, none, and the tokens say; with a query by Fastify, the same', async (t) => {
  const tokens = join(t.testdir(), 'tokens')
  writeFileSync(tokens, 'the-token\n')
  const { port, entered } = await countingFastify(t, { ALLOWED_HOSTS: 'inventory.test', LOGIN_REQUIRED: 'true', API_TOKENS_FILE: tokens })
  const [alive, ready, head, noHost] = await exchange(port, [GET('/healthz', '10.1.2.3:8080'), GET('/readyz', 'evil.test'),
    'HEAD /readyz HTTP/1.1\r\nHost: 10.1.2.3\r\n\r\n', 'GET /readyz HTTP/1.0\r\n\r\n'])
  const PROBE = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nvary: Accept\r\ncontent-length: '
  const KEPT = 'Connection: keep-alive\r\nKeep-Alive: timeout=72\r\n\r\n'
  t.equal(alive, `${PROBE}15\r\n${KEPT}{"status":"ok"}`)
  t.equal(ready, `${PROBE}18\r\n${KEPT}{"status":"ready"}`)
  t.equal(head, `${PROBE}18\r\n${KEPT}`, 'HEAD: the same headers, no body')
  t.equal(noHost, `${PROBE}18\r\nConnection: close\r\n\r\n{"status":"ready"}`, 'without Host (HTTP/1.0)')
  t.equal(entered(), 0, 'Fastify saw none of them')
  const [queried] = await exchange(port, [GET('/readyz?from=lb', '10.1.2.3')])
  t.equal(queried, ready, 'what only the router reads as the probe\'s path: the same answer, from Fastify')
  t.equal(entered(), 1)
})

t.test('a 200 rendered before Fastify is the one Fastify renders, byte for byte', async (t) => {
  const { port: fast, entered } = await countingFastify(t)
  // ACCESS_LOG sends every request through Fastify (its log is a hook): no fast path.
  const { port: throughFastify } = await build(t, { env: { ACCESS_LOG: 'true' }, logger: pino({ level: 'info' }, { write () {} }), listen: true })
  const hosts = fc.constantFrom('inventory.test', 'INVENTORY.test:8080', '[::1]:80', '127.0.0.1')
  const paths = fc.constantFrom('/api/', '/api/extras/', '/api/status/', '/api/schema/', '/api/extras/object-types/', '/api/extras/object-types.json',
    '/api/extras/object-types.json/', '/api/extras/object-types/7/', '/api/extras/object-types/7.json', '/api/extras/object-types/+7/')
  let fastRendered = 0
  await fc.assert(fc.asyncProperty(fc.constantFrom('GET', 'HEAD'), fc.oneof(path, paths), fc.option(query), hosts, async (method, path, query, host) => {
    const url = (query === null ? path : `${path}?${query}`).replace(/[^\x21-\x7e]/gu, encodeURIComponent)
    const request = `${method} ${url} HTTP/1.1\r\nHost: ${host}\r\n\r\n`
    const before = entered()
    const [[ours], [theirs]] = await Promise.all([exchange(fast, [request]), exchange(throughFastify, [request])])
    if (ours !== theirs) throw new Error(`${JSON.stringify(request)}:\n${ours}\n---\n${theirs}`)
    // Every 200 of a plain path under /api/ is an endpoint's, answered before Fastify, as is a
    // probe's exact path; an escaped path is left to Fastify's router (plain-routes.ts).
    const plain = url.startsWith('/api/') && !url.split('?')[0]!.includes('%')
    if (!ours!.startsWith('HTTP/1.1 200 ') || !(plain || PROBE_PATHS.includes(url as never))) return
    if (entered() !== before) throw new Error(`${JSON.stringify(request)}: a 200 that went through Fastify`)
    fastRendered++
  }), { numRuns: 600 })
  t.ok(fastRendered > 200, `${fastRendered} of them were 200s, rendered before Fastify on the one side`)
})

t.test('a cache hit is answered byte for byte as Fastify answered it', async (t) => {
  const { port } = await build(t, { listen: true })
  for (const path of ['/api/extras/object-types/?limit=50&offset=50', '/api/status/?format=api', '/api/extras/object-types/7/']) {
    const [rendered = '', , cached] = await exchange(port, [GET(path), GET(path), GET(path)])
    t.match(rendered, new RegExp(`^HTTP/1\\.1 200 OK\r\ncontent-type: application/json\r\nvary: Accept\r\n${MIDDLEWARE}allow: GET, HEAD, OPTIONS\r\ncache-control: no-cache\r\netag: "[\\w-]{27}"\r\ncontent-length: \\d+\r\nx-request-id: <v4>\r\n`), path)
    t.equal(cached, rendered, path)
    const [head] = await exchange(port, [`HEAD ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`])
    t.equal(head, rendered.slice(0, rendered.indexOf('\r\n\r\n') + 4), `HEAD ${path}`)
  }
})

t.test('only what Fastify would answer the same way is served from the cache', async (t) => {
  const { app, port } = await build(t, { env: { ALLOWED_HOSTS: 'inventory.test', TRUST_PROXY: '127.0.0.1' }, listen: true })
  const path = '/api/extras/object-types/?limit=1'
  await exchange(port, [GET(path), GET(path)])
  const held = app.served.current.cache.bytes
  t.ok(held > 0)
  const [refused] = await exchange(port, [GET(path, 'evil.test')])
  t.match(refused, /^HTTP\/1\.1 400 Bad Request\r\n[^]*\{"detail":"Invalid Host header\."\}$/, 'another Host is checked again')
  const forwarded = GET(path, 'inventory.test', 'X-Forwarded-Host: inventory.test\r\nX-Forwarded-Proto: https\r\n')
  const [first, second, third] = await exchange(port, [forwarded, forwarded, forwarded])
  t.match(first, '"next":"https://inventory.test/api/extras/object-types/?limit=1&offset=1"')
  t.equal(second, first)
  t.equal(third, first)
  t.equal(app.served.current.cache.bytes, held, 'answers shaped by forwarded headers of a trusted proxy are not cached')
  const [emptyHost] = await exchange(port, [GET(path, '')])
  t.match(emptyHost, /^HTTP\/1\.1 400 /, 'an empty Host is refused when hosts are restricted')
  t.equal(app.served.current.cache.bytes, held)
  const [posted] = await exchange(port, [`POST ${path} HTTP/1.1\r\nHost: inventory.test\r\nContent-Length: 0\r\n\r\n`])
  t.match(posted, /^HTTP\/1\.1 405 /, 'other methods go to Fastify')
})

t.test('an empty Host is answered for the address reached, and cached as that address', async (t) => {
  const { app, port } = await build(t, { listen: true })
  // The cache keeps an answer missed twice.
  const [first, second] = await exchange(port, Array(2).fill(GET('/api/extras/object-types/23/', '')))
  const held = app.served.current.cache.bytes
  const [named] = await exchange(port, [GET('/api/extras/object-types/23/', `127.0.0.1:${port}`)])
  t.match(first, `"url":"http://127.0.0.1:${port}/api/extras/object-types/23/"`)
  t.equal(second, first)
  t.equal(named, first, 'the same answer as to a Host that names the address')
  t.ok(held > 0 && app.served.current.cache.bytes === held, 'one answer cached for the three')
})

t.test('a 304 from the cache is the 304 Fastify sends, byte for byte', async (t) => {
  const { port } = await build(t, { listen: true })
  const [page = ''] = await exchange(port, [GET('/api/status/?format=json')])
  const tag = /\r\netag: ("[^"]+")\r\n/.exec(page)![1]!
  const conditional = GET('/api/extras/object-types/?limit=3', 'inventory.test', 'If-None-Match: *\r\n')
  const [fromFastify, , fromCache] = await exchange(port, [conditional, conditional, conditional])
  t.equal(fromFastify, fromCache)
  t.match(fromCache, new RegExp(`^HTTP/1\\.1 304 Not Modified\r\nvary: Accept\r\n${MIDDLEWARE}allow: GET, HEAD, OPTIONS\r\ncache-control: no-cache\r\netag: "[\\w-]{27}"\r\nx-request-id: <v4>\r\n`))
  t.ok(fromCache!.endsWith('\r\n\r\n'), 'no body')
  const [again] = await exchange(port, [GET('/api/status/?format=json', 'inventory.test', `If-None-Match: ${tag}\r\n`)])
  t.match(again, /^HTTP\/1\.1 304 Not Modified\r\n/)
})

t.test('any request sent three times over a real socket: the answers are the same, whatever path each took', async (t) => {
  const { app, port } = await build(t, { listen: true })
  const conditional = fc.option(fc.constantFrom('If-None-Match: *\r\n', 'If-None-Match: "nope"\r\n'))
  let cached = 0
  const cacheable = fc.constantFrom('/api/status/', '/api/extras/object-types/', '/api/extras/object-types/7/', '/api/schema/')
  await fc.assert(fc.asyncProperty(fc.oneof(method, fc.constantFrom('GET', 'HEAD')), fc.oneof(path, cacheable), fc.option(query), conditional, async (method, path, query, conditional) => {
    // Encoded as a client would: raw bytes outside printable ASCII are refused by Node (see server.test.ts).
    const url = (query === null ? path : `${path}?${query}`).replace(/[^\x21-\x7e]/gu, encodeURIComponent)
    const request = `${method} ${url} HTTP/1.1\r\nHost: inventory.test\r\n${conditional ?? ''}${method === 'GET' || method === 'HEAD' ? '' : 'Content-Length: 0\r\n'}\r\n`
    const before = app.served.current.cache.bytes
    const [first, ...repeats] = await exchange(port, [request, request, request])
    for (const repeat of repeats) if (repeat !== first) throw new Error(`${JSON.stringify(request)}:\n${first}\n---\n${repeat}`)
    if (app.served.current.cache.bytes > before) cached++
  }), { numRuns: 1500 })
  t.ok(cached > 150, `${cached} of the requests were answered from the cache the third time`)
})
