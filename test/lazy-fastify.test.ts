import t, { type Test } from 'tap'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { pino } from 'pino'
import { loadConfig } from '../lib/config.ts'
import { Catalog } from '../lib/inventory/catalog.ts'
import { DEFAULT_PROFILE_FILE, loadProfile } from '../lib/inventory/profile.ts'
import { Served } from '../lib/inventory/served.ts'
import { Service } from '../lib/service.ts'
import { exchange, raw } from './http.ts'

/** Whether Fastify is loaded in this process: it is CommonJS, in require's cache once imported. */
const fastifyLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('/node_modules/fastify/'))
const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`

/** A service of the default profile listening on a port of 127.0.0.1, closed when the test ends. */
async function listening (t: Test): Promise<number> {
  const config = loadConfig({})
  const served = new Served(new Catalog(loadProfile(DEFAULT_PROFILE_FILE)), config.cacheBytes)
  const service = new Service({ config, served, logger: pino({ level: 'silent' }) })
  t.teardown(() => service.close())
  await service.listen(0, '127.0.0.1')
  return (service.server.address() as AddressInfo).port
}

t.test('200s and probes are served without loading Fastify; the first request that needs it loads it, and those that come meanwhile wait for it', async (t) => {
  t.notOk(fastifyLoaded(), 'importing the service does not load it')
  const port = await listening(t)
  const answers = await exchange(port, [GET('/api/status/'), GET('/api/extras/object-types/?limit=2'), GET('/api/extras/object-types/?limit=2'),
    GET('/api/extras/object-types/7/'), 'HEAD /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n', GET('/healthz'), GET('/readyz')])
  t.same(answers.map((answer) => answer.slice(0, answer.indexOf('\r\n'))), Array(answers.length).fill('HTTP/1.1 200 OK'))
  t.notOk(fastifyLoaded(), 'not loaded by rendering, caching and probing')
  // Three connections at once, each with a request only Fastify answers: the first loads it, all wait for it.
  const [[missing], [options], [unslashed]] = await Promise.all([
    exchange(port, [GET('/api/nothing/')]),
    exchange(port, ['OPTIONS /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n']),
    exchange(port, [GET('/api/status')]),
  ])
  t.match(missing, /^HTTP\/1\.1 404 Not Found\r\n[^]*\r\n\r\n\{"detail":"Not found\."\}$/)
  t.match(options, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"name":"Status","description":"A lightweight read-only endpoint/)
  t.match(unslashed, /^HTTP\/1\.1 301 Moved Permanently\r\nlocation: http:\/\/inventory\.test\/api\/status\/\r\n[^]*\{"detail":"Moved permanently\."\}$/)
  t.ok(fastifyLoaded(), 'loaded now')
  const [again] = await exchange(port, [GET('/api/nothing/')])
  t.equal(again, missing, 'and answering through it from then on (exchange() reads every request id as <v4>)')
})

t.test('a client that half-closes after its request gets the answer that waited for Fastify to be built', async (t) => {
  const port = await listening(t)
  const answer = await raw(port, 'GET /api/nothing/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n')
  t.match(answer, /^HTTP\/1\.1 404 Not Found\r\n[^]*\r\n\r\n\{"detail":"Not found\."\}$/)
  const old = await raw(port, 'GET /api/status HTTP/1.0\r\n\r\n')
  t.match(old, /^HTTP\/1\.1 301 Moved Permanently\r\n[^]*\{"detail":"Moved permanently\."\}$/, 'HTTP/1.0, Fastify built')
})
