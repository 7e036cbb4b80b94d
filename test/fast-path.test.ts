import t from 'tap'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { build } from './helper.ts'

/** Sends requests on one keep-alive connection and resolves with the raw answers, Date lines removed. */
function exchange (port: number, requests: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const answers: string[] = []
    let buffer = ''
    const sendNext = () => socket.write(requests[answers.length]!)
    socket.on('connect', sendNext)
    socket.on('data', (chunk) => {
      buffer += chunk
      const headerEnd = buffer.indexOf('\r\n\r\n')
      if (headerEnd === -1) return
      const length = Number(/content-length: (\d+)/i.exec(buffer.slice(0, headerEnd))?.[1] ?? 0)
      const isHead = requests[answers.length]!.startsWith('HEAD')
      const end = headerEnd + 4 + (isHead ? 0 : length)
      if (buffer.length < end) return
      answers.push(buffer.slice(0, end).replace(/\r\nDate: [^\r]*/, ''))
      buffer = buffer.slice(end)
      if (answers.length === requests.length) {
        socket.end()
        resolve(answers)
      } else {
        sendNext()
      }
    })
    socket.on('error', reject)
  })
}

const GET = (path: string, host = 'inventory.test', extra = '') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`

t.test('a cache hit is answered before Fastify, byte for byte as Fastify answered it', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  for (const path of ['/api/extras/object-types/?limit=50&offset=50', '/api/status/?format=api', '/api/extras/object-types/7/']) {
    const [rendered = '', cached] = await exchange(port, [GET(path), GET(path)])
    t.match(rendered, /^HTTP\/1\.1 200 OK\r\ncontent-type: application\/json\r\nvary: Accept\r\nallow: GET, HEAD, OPTIONS\r\ncache-control: no-cache\r\netag: "[\w-]{27}"\r\ncontent-length: \d+\r\n/, path)
    t.equal(cached, rendered, path)
    const [head] = await exchange(port, [`HEAD ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`])
    t.equal(head, rendered.slice(0, rendered.indexOf('\r\n\r\n') + 4), `HEAD ${path}`)
  }
})

t.test('only what Fastify would answer the same way is served from the cache', async (t) => {
  const app = await build(t, { ALLOWED_HOSTS: 'inventory.test', TRUST_PROXY: '127.0.0.1' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const path = '/api/extras/object-types/?limit=1'
  await exchange(port, [GET(path)])
  const held = app.responseCache.bytes
  const [refused] = await exchange(port, [GET(path, 'evil.test')])
  t.match(refused, /^HTTP\/1\.1 400 Bad Request\r\n[^]*\{"detail":"Invalid Host header\."\}$/, 'another Host is checked again')
  const forwarded = GET(path, 'inventory.test', 'X-Forwarded-Host: inventory.test\r\nX-Forwarded-Proto: https\r\n')
  const [first, second] = await exchange(port, [forwarded, forwarded])
  t.match(first, '"next":"https://inventory.test/api/extras/object-types/?limit=1&offset=1"')
  t.equal(second, first)
  t.equal(app.responseCache.bytes, held, 'answers shaped by forwarded headers of a trusted proxy are not cached')
  const [emptyHost] = await exchange(port, [GET(path, '')])
  t.match(emptyHost, /^HTTP\/1\.1 400 /, 'an empty Host is refused when hosts are restricted')
  t.equal(app.responseCache.bytes, held)
  const [posted] = await exchange(port, [`POST ${path} HTTP/1.1\r\nHost: inventory.test\r\nContent-Length: 0\r\n\r\n`])
  t.match(posted, /^HTTP\/1\.1 405 /, 'other methods go to Fastify')
})

t.test('an empty Host is answered for the address reached, never from the cache', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const [first, second] = await exchange(port, [GET('/api/extras/object-types/23/', ''), GET('/api/extras/object-types/23/', '')])
  t.match(first, `"url":"http://127.0.0.1:${port}/api/extras/object-types/23/"`)
  t.equal(second, first)
  t.equal(app.responseCache.bytes, 0)
})

t.test('a 304 from the cache is the 304 Fastify sends, byte for byte', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const [page = ''] = await exchange(port, [GET('/api/status/?format=json')])
  const tag = /\r\netag: ("[^"]+")\r\n/.exec(page)![1]!
  const conditional = GET('/api/extras/object-types/?limit=3', 'inventory.test', 'If-None-Match: *\r\n')
  const [fromFastify, fromCache] = await exchange(port, [conditional, conditional])
  t.equal(fromFastify, fromCache)
  t.match(fromCache, /^HTTP\/1\.1 304 Not Modified\r\nvary: Accept\r\nallow: GET, HEAD, OPTIONS\r\ncache-control: no-cache\r\netag: "[\w-]{27}"\r\n/)
  t.ok(fromCache!.endsWith('\r\n\r\n'), 'no body')
  const [again] = await exchange(port, [GET('/api/status/?format=json', 'inventory.test', `If-None-Match: ${tag}\r\n`)])
  t.match(again, /^HTTP\/1\.1 304 Not Modified\r\n/)
})
