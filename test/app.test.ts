import type { FastifyPluginCallback } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import t from 'tap'
import { Detail } from '../schemas/api.ts'
import { build } from './helpers/build.ts'
import { ROUTES } from './helpers/contract.ts'
import { exchange, parseAnswer } from './helpers/http.ts'

/** Every GET route of the API as Fastify registered it, as a concrete path (`:id` 7, `:format` json). */
const PATHS = ROUTES.filter((route) => route.methods.includes('GET') && route.url.startsWith('/api/')).map((route) => route.url.replace(':id', '7').replace(':format', 'json'))
const GET = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n${headers}\r\n`

t.test('a plugin\'s onSend headers are on the first answer and on every replay of every endpoint, 304s and HEADs included', async (t) => {
  let seen = 0
  const stamp: FastifyPluginCallback = fastifyPlugin((app, _options, done) => {
    app.addHook('onSend', (_request, reply, payload, next) => {
      seen++
      reply.header('x-stamp', 'on every answer')
      reply.header('x-stamps', ['one', 'two'])
      next(null, payload)
    })
    done()
  })
  const { port, replays } = await build(t, { listen: true, plugins: [stamp] })
  for (const path of PATHS) {
    const made = seen
    // The first two are Fastify's (the second is kept: see cache.ts), the third a replay.
    const [first, second, replayed] = await exchange(port, [GET(path), GET(path), GET(path)])
    t.equal(seen, made + 2, `${path}: the third was not Fastify's`)
    t.equal(replayed, second, `${path}: the replay is Fastify's answer, byte for byte (but Date and X-Request-ID)`)
    t.equal(first, second)
    const answer = parseAnswer(replayed!)
    t.same([answer.status, answer.headers['x-stamp']], [200, 'on every answer'], path)
    t.same(replayed!.match(/\r\nx-stamps: [^\r]*/g), ['\r\nx-stamps: one', '\r\nx-stamps: two'], `${path}: a header of two lines, two lines`)
    const [notModified, head] = await exchange(port, [GET(path, `If-None-Match: ${answer.headers.etag}\r\n`), GET(path).replace('GET', 'HEAD')])
    t.equal(seen, made + 2, `${path}: the 304 and the HEAD replayed too`)
    t.match(notModified, /^HTTP\/1\.1 304 Not Modified\r\n[^]*\r\nx-stamp: on every answer\r\n/)
    t.equal(head, replayed!.slice(0, replayed!.indexOf('\r\n\r\n') + 4).replace('\r\n\r\n', '\r\n\r\n'), `${path}: HEAD, the GET's head`)
  }
  t.equal(replays!.stats.hits, PATHS.length * 3, 'each path: one replay of each kind')
})

t.test('a plugin that keeps its routes from being replayed has its onRequest hook see every request', async (t) => {
  const tenants = (replay: boolean): FastifyPluginCallback => fastifyPlugin((app, _options, done) => {
    // Its routes' answers depend on a header that is not part of the cache key: none is replayed.
    if (!replay) app.addHook('onRoute', (route) => { route.config = { ...route.config, replay: false } })
    app.addHook('onRequest', (request, reply, next) => {
      if (request.headers['x-tenant'] === 'known') return next()
      reply.code(403).send(Buffer.from('{"detail":"Unknown tenant."}'))
    })
    done()
  })
  const path = '/api/extras/object-types/?limit=2'
  for (const replay of [false, true]) {
    const { port, replays } = await build(t, { listen: true, plugins: [tenants(replay)] })
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) {
      const [known, unknown] = await exchange(port, [GET(path, 'X-Tenant: known\r\n'), GET(path)])
      statuses.push(parseAnswer(known!).status, parseAnswer(unknown!).status)
      if (!replay) t.match(unknown, /^HTTP\/1\.1 403 Forbidden\r\n[^]*\r\n\r\n\{"detail":"Unknown tenant\."\}$/, `request ${i + 1} without the header: refused`)
    }
    if (!replay) {
      t.same(statuses, Array.from({ length: 10 }, () => [200, 403]).flat(), 'every request without the header refused, the tenth as the first')
      t.same([replays!.stats.admissions, replays!.stats.hits], [0, 0], 'nothing kept, nothing replayed')
    } else {
      // What replay: false is for: a replay runs no hook (docs/architecture.md).
      t.same(statuses.slice(0, 4), [200, 403, 200, 200], 'without it, the page kept after the second request is replayed to a request the hook would refuse')
    }
  }
})

t.test('a plugin\'s route is answered by Fastify each time, an object as JSON (by the service\'s serializer); one that strips the request id has it stripped from replays too', async (t) => {
  const plugin: FastifyPluginCallback = fastifyPlugin((app, _options, done) => {
    app.get('/api/greeting/', { schema: { hide: true, response: { 200: Detail } } }, () => ({ detail: 'hello' }))
    app.addHook('onSend', (request, reply, payload, next) => {
      if (request.url === '/api/status/') reply.removeHeader('x-request-id')
      next(null, payload)
    })
    done()
  })
  const { app, port, replays } = await build(t, { listen: true, plugins: [plugin] })
  for (let i = 0; i < 3; i++) {
    const greeting = await app.inject({ url: '/api/greeting/', headers: { host: 'inventory.test' } })
    t.same([greeting.body, greeting.headers['content-type']], ['{"detail":"hello"}', 'application/json'])
  }
  t.equal(replays!.stats.admissions, 0, 'never kept: a route that renders no generation')
  const [, second, replayed] = await exchange(port, [GET('/api/status/'), GET('/api/status/'), GET('/api/status/')])
  t.equal(replays!.stats.hits, 1)
  t.equal(replayed, second)
  t.notMatch(replayed, /x-request-id/i)
})
