import t, { type Test } from 'tap'
import { needs } from '../helpers/programs.ts'
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pino } from 'pino'
import { FAULT_PATHS } from '../../lib/paths.ts'
import { checkFaults } from '../../lib/faults/rules.ts'
import { build, DEFAULT_PROFILE } from '../helpers/build.ts'
import { askAlone, exchange, parseAnswer } from '../helpers/http.ts'
import { DEADLINE_MS } from '../helpers/wait.ts'
import { start } from '../helpers/process.ts'

/** A faults file in the test's folder. */
function faultsFile (t: Test, faults: unknown): string {
  const file = join(t.testdir(), 'faults.json')
  writeFileSync(file, JSON.stringify(faults))
  return file
}

/** The service, in this process, with a faults file, on a socket. */
async function withFaults (t: Test, faults: unknown, env: NodeJS.ProcessEnv = {}) {
  return build(t, { listen: true, env: { FAULTS: faultsFile(t, faults), METRICS: 'true', ...env } })
}

const STATUS_BODY = DEFAULT_PROFILE.status

t.test('the file as the issue writes it: every status is a 503 with Retry-After and the reference\'s body; Envoy\'s headers are honoured', async (t) => {
  const { port } = await withFaults(t, { seed: 1, headers: true, rules: [{ path: '/api/status/', abort: { status: 503, percent: 100 } }] })
  for (const path of ['/api/status/', '/api/status/?x=1', '/api/status/?format=json', '/api/status/']) {
    const seen = await askAlone(port, path)
    t.same([seen.status, seen.headers['retry-after'], seen.headers['content-type'], seen.body],
      [503, '5', 'application/json', '{"detail":"Service temporarily unavailable, try again later."}'], path)
    t.equal(seen.headers['x-request-id']?.length, 36, `${path}: the API's headers, as on every answer`)
  }
  const other = await askAlone(port, '/api/extras/object-types/1/')
  t.same([other.status, JSON.parse(other.body).id], [200, 1], 'no rule names the item: it is answered')
  const asked = await askAlone(port, '/api/extras/object-types/1/', { 'x-envoy-fault-abort-request': '429' })
  t.same([asked.status, asked.headers['retry-after'], asked.body], [429, '5', '{"detail":"Request was throttled. Expected available in 5 seconds."}'])
})

t.test('a delay is at least its figure, fixed, uniform or lognormal; the answer after it is the plain one', async (t) => {
  const { port } = await withFaults(t, {
    rules: [
      { path: '/api/status/', delay: { ms: 300 } },
      { path: '/api/extras/object-types/', delay: { min: 200, max: 250 } },
      { path: '/api/extras/object-types/{id}/', delay: { median: 150, p99: 150 } },
    ],
  })
  for (const [path, least] of [['/api/status/', 300], ['/api/extras/object-types/?limit=1', 200], ['/api/extras/object-types/7/', 150]] as const) {
    for (let i = 0; i < 3; i++) {
      const seen = await askAlone(port, path)
      t.equal(seen.status, 200, path)
      t.ok(seen.ms >= least, `${path}: ${seen.ms.toFixed(1)} ms, at least ${least}`)
    }
  }
  const plain = await askAlone(port, '/api/status/')
  t.same(JSON.parse(plain.body)['service-version'], STATUS_BODY['service-version'])
})

t.test('an abort\'s status and body: the reference\'s 500 with its versions, the proxy\'s 502 page, a 429 with its Retry-After', async (t) => {
  const rules = [
    { path: '/api/status/', abort: { status: 500 } },
    { path: '/api/extras/object-types/', abort: { status: 502 } },
    { path: '/api/extras/object-types/{id}/', abort: { status: 429, retryAfter: 1 } },
  ]
  const neutral = await withFaults(t, { rules })
  const error = await askAlone(neutral.port, '/api/status/')
  t.same([error.status, error.headers['content-type'], error.body], [500, 'application/json',
    `{"error": "fault injected (rule 1)", "exception": "InjectedFault", "service_version": "${STATUS_BODY['service-version']}", "runtime_version": "${STATUS_BODY['runtime-version']}"}`])
  const gateway = await askAlone(neutral.port, '/api/extras/object-types/')
  t.same([gateway.status, gateway.headers['content-type']], [502, 'text/html'])
  t.equal(gateway.body, '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n')
  const throttled = await askAlone(neutral.port, '/api/extras/object-types/3/')
  t.same([throttled.status, throttled.headers['retry-after'], throttled.body], [429, '1', '{"detail":"Request was throttled. Expected available in 1 second."}'])
  const head = await askAlone(neutral.port, '/api/status/', {}, 'HEAD')
  t.same([head.status, head.body], [500, ''], 'HEAD: the status, no body')

  const reference = await withFaults(t, { rules }, { STATUS_KEYS: 'reference' })
  t.equal((await askAlone(reference.port, '/api/status/')).body,
    '{"error": "fault injected (rule 1)", "exception": "InjectedFault", "netbox_version": "4.3.7", "python_version": "3.12.3"}',
    'STATUS_KEYS=reference: the keys the reference\'s 500 carries, and its full version (the default profile gives none: the version)')
})

t.test('connection faults: a reset, a close with no answer, a body cut short', async (t) => {
  const { port, metrics } = await withFaults(t, {
    rules: [
      { path: '/api/status/', connection: { fault: 'reset' } },
      { path: '/api/extras/object-types/', connection: { fault: 'close' } },
      { path: '/api/extras/object-types/{id}/', connection: { fault: 'cut' } },
    ],
  })
  const reset = await askAlone(port, '/api/status/')
  t.same([reset.failure, reset.body], ['ECONNRESET', ''], 'a TCP reset, no answer')
  const closed = await askAlone(port, '/api/extras/object-types/')
  t.same([closed.failure, closed.status], ['closed', 0], 'the connection closed with nothing written')
  const cut = await askAlone(port, '/api/extras/object-types/7/')
  const length = Number(cut.headers['content-length'])
  t.equal(cut.status, 200)
  t.ok(length > 100, 'the whole body\'s length is announced')
  t.equal(Buffer.byteLength(cut.body), Math.floor(length / 2), 'half of it arrives, then the connection ends')
  t.throws(() => JSON.parse(cut.body))
  const scrape = await metrics!.scrape()
  for (const [route, kind] of [['/api/status/', 'reset'], ['/api/extras/object-types/', 'close'], ['/api/extras/object-types/{id}/', 'cut']]) {
    t.match(scrape, `inventory_faults_injected_total{route="${route}",kind="${kind}"} 1\n`, `${kind} counted`)
  }
})

t.test('a slow body arrives at its rate, in pieces, whole', async (t) => {
  const { port } = await withFaults(t, { rules: [{ path: '/api/status/', header: { 'x-slow': 'yes' }, slowBody: { bytesPerSecond: 400 } }] })
  const plain = await askAlone(port, '/api/status/')
  t.equal(plain.arrivals.length, 1, 'a plain answer comes at once')
  const seen = await askAlone(port, '/api/status/', { 'x-slow': 'yes' })
  const size = Buffer.byteLength(seen.body)
  t.equal(size, Number(seen.headers['content-length']), 'the whole body')
  t.same(JSON.parse(seen.body), JSON.parse(plain.body))
  // The first piece (a twentieth of a second's worth) goes at once, the rest at the rate.
  const least = ((size - 20) / 400) * 1000
  t.ok(seen.ms >= least, `${size} bytes in ${seen.ms.toFixed(0)} ms: at most 400 bytes a second (at least ${least.toFixed(0)} ms)`)
  t.ok(seen.arrivals.length >= 5, `in ${seen.arrivals.length} pieces`)
})

t.test('Envoy\'s headers: a delay, an abort with its percentage, a response rate; never on a probe; ignored unless the file says so', async (t) => {
  const { port } = await withFaults(t, { headers: true, seed: 3 })
  const delayed = await askAlone(port, '/api/', { 'x-envoy-fault-delay-request': '250' })
  t.ok(delayed.status === 200 && delayed.ms >= 250, `delayed ${delayed.ms.toFixed(0)} ms`)
  const statuses = []
  for (let i = 0; i < 40; i++) statuses.push((await askAlone(port, '/api/', { 'x-envoy-fault-abort-request': '503', 'x-envoy-fault-abort-request-percentage': '50' })).status)
  t.same(new Set(statuses), new Set([200, 503]), 'half aborted, half answered')
  t.same((await askAlone(port, '/api/', { 'x-envoy-fault-abort-request': '0' })).status, 200, 'a status Envoy would not take asks for nothing')
  t.same((await askAlone(port, '/api/', { 'x-envoy-fault-abort-request': '404' })).body, '{"detail":"Not Found."}', 'another status: its reason')
  t.same((await askAlone(port, '/api/', { 'x-envoy-fault-abort-request': '599' })).body, '{"detail":"Error."}', 'a status without a reason')
  const slow = await askAlone(port, '/api/extras/object-types/?limit=20', { 'x-envoy-fault-throughput-response': '1' })
  const size = Buffer.byteLength(slow.body)
  t.ok(size > 2048 && slow.ms >= ((size - 52) / 1024) * 1000, `${size} bytes at 1 KiB/s: ${slow.ms.toFixed(0)} ms`)
  for (const probe of ['/healthz', '/readyz']) {
    t.equal((await askAlone(port, probe, { 'x-envoy-fault-abort-request': '503' })).status, 200, `${probe}: never faulted by a header`)
  }

  const ignored = await withFaults(t, { rules: [] })
  t.equal((await askAlone(ignored.port, '/api/', { 'x-envoy-fault-abort-request': '503' })).status, 200, 'without "headers": true')
  const none = await build(t, { listen: true })
  t.equal((await askAlone(none.port, '/api/', { 'x-envoy-fault-abort-request': '503' })).status, 200, 'without a faults file')
})

t.test('a probe is faulted only when a rule names it', async (t) => {
  const { port } = await withFaults(t, { rules: [{ path: '/readyz', abort: { status: 503 } }] })
  t.equal((await askAlone(port, '/healthz')).status, 200)
  t.same([(await askAlone(port, '/readyz')).status, (await askAlone(port, '/readyz')).headers['retry-after']], [503, '5'])
})

t.test('a schedule switches a rule on and off: from-to, and for N seconds every M', async (t) => {
  const { port } = await withFaults(t, {
    rules: [
      { path: '/api/status/', abort: { status: 503 }, schedule: { every: 1.2, for: 0.6 } },
      { path: '/api/', abort: { status: 500 }, schedule: { from: 0, to: 0.5 } },
    ],
  })
  const seen: number[] = []
  const flips = () => seen.filter((status, i) => i > 0 && status !== seen[i - 1]).length
  const started = performance.now()
  // On, off, on again (or off, on, off): a client polling sees the status flip, then flip back.
  while (flips() < 3) {
    if (performance.now() - started > DEADLINE_MS) throw new Error(`no three flips in ${DEADLINE_MS} ms: ${seen.join(' ')}`)
    seen.push((await askAlone(port, '/api/status/')).status)
  }
  t.same(new Set(seen), new Set([200, 503]))
  // The window of the other rule has passed for good.
  if (performance.now() - started < 500) await new Promise((resolve) => setTimeout(resolve, 500))
  t.equal((await askAlone(port, '/api/')).status, 200, 'after its `to`, the rule never applies again')
})

t.test('the seed repeats a run: the same requests draw the same faults', async (t) => {
  const rules = [{ path: '/api/status/', abort: { status: 503, percent: 30 }, delay: { min: 0, max: 1, percent: 50 } }]
  const run = async (seed: number) => {
    const { port } = await withFaults(t, { seed, rules })
    const statuses = []
    for (let i = 0; i < 30; i++) statuses.push((await askAlone(port, '/api/status/')).status === 503 ? 'x' : '.')
    return statuses.join('')
  }
  const first = await run(42)
  t.equal(await run(42), first, `seed 42: ${first}, twice`)
  t.not(await run(7), first, 'another seed, another run')
  t.match(first, /x/)
  t.match(first, /\./)
})

t.test('a faulted route is never replayed around its fault; what no rule matches is replayed', async (t) => {
  const { port, replays } = await withFaults(t, {
    headers: true,
    rules: [
      { path: '/api/status/', delay: { ms: 100 } },
      { path: '/api/extras/object-types/', query: { limit: '1' }, abort: { status: 503 } },
      { path: '/api/extras/object-types/', header: { 'X-Tenant': 'slow' }, delay: { ms: 100 } },
    ],
  })
  const GET = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n${headers}\r\n`
  // Each asked three times on one connection: a replay would answer the third at once.
  for (const path of ['/api/status/']) {
    const started = performance.now()
    await exchange(port, [GET(path), GET(path), GET(path)])
    t.ok(performance.now() - started >= 300, `${path}: every answer delayed`)
  }
  const hits = replays!.stats.hits
  const [,, third] = await exchange(port, [GET('/api/extras/object-types/?limit=2'), GET('/api/extras/object-types/?limit=2'), GET('/api/extras/object-types/?limit=2')])
  t.equal(parseAnswer(third!).status, 200)
  t.equal(replays!.stats.hits, hits + 1, 'limit=2 matches no rule: replayed')
  for (const path of ['/api/extras/object-types/', '/api/extras/object-types/?limit=2#limit=1']) await exchange(port, [GET(path), GET(path), GET(path)])
  t.equal(replays!.stats.hits, hits + 3, 'no query, or a fragment (no part of the query): replayed')
  const statuses = []
  for (let i = 0; i < 3; i++) statuses.push((await askAlone(port, '/api/extras/object-types/?limit=1')).status)
  t.same(statuses, [503, 503, 503], 'limit=1: aborted every time')
  const tenant = await askAlone(port, '/api/extras/object-types/?limit=2', { 'x-tenant': 'slow' })
  t.ok(tenant.status === 200 && tenant.ms >= 100, 'a kept URL with the rule\'s header: the rule applies, not a replay')
  const enveloped = await askAlone(port, '/api/extras/object-types/?limit=2', { 'x-envoy-fault-abort-request': '500' })
  t.equal(enveloped.status, 500, 'a kept URL with an Envoy header: faulted, not replayed')
  t.equal(replays!.stats.hits, hits + 3)
})

t.test('each fault is logged at debug with the request\'s id, route and rule', async (t) => {
  const lines: string[] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => { lines.push(line) } })
  await build(t, { listen: true, logger, env: { FAULTS: faultsFile(t, { rules: [{ path: '/api/status/', delay: { ms: 1 }, abort: { status: 502 } }] }) } })
    .then(async ({ port }) => {
      const seen = await askAlone(port, '/api/status/')
      const logged = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'fault injected')
      t.same(logged.map(({ level, reqId, fault, route, by }) => ({ level, reqId, fault, route, by })), [
        { level: 20, reqId: seen.headers['x-request-id'], fault: 'delay', route: '/api/status/', by: 'rule 1' },
        { level: 20, reqId: seen.headers['x-request-id'], fault: 'abort', route: '/api/status/', by: 'rule 1' },
      ])
      t.same(logged.map(({ ms, status }) => [ms, status]), [[1, undefined], [undefined, 502]])
    })
})

t.test('pynetbox gets its RequestError on a 503, with the body\'s detail', { skip: needs('pynetbox') }, async (t) => {
  const server = await start(t, { FAULTS: faultsFile(t, { seed: 1, rules: [{ path: '/api/status/', abort: { status: 503 } }] }) })
  const script = `
import pynetbox
nb = pynetbox.api("http://127.0.0.1:${server.port}")
try:
    nb.status()
    print("no error")
except pynetbox.RequestError as error:
    print(error.req.status_code, error.error)
print(nb.version)
`
  const output = await new Promise<string>((resolve, reject) => {
    execFile('/usr/bin/python3', ['-c', script], { timeout: DEADLINE_MS }, (error, stdout, stderr) => error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)))
  })
  t.equal(output, '503 {"detail":"Service temporarily unavailable, try again later."}\n4.3\n', 'the error, and the rest of the API as ever')
})

t.test('the faults files docs/faults.md shows are served as written', async (t) => {
  const guide = readFileSync(new URL('../../docs/faults.md', import.meta.url), 'utf8')
  const files = [...guide.matchAll(/```json\n([^`]*)```/g)].map((match) => JSON.parse(match[1]!))
  t.equal(files.length, 2)
  for (const file of files) checkFaults(file, 'docs/faults.md', FAULT_PATHS)
  const { port } = await withFaults(t, files[0])
  t.equal((await askAlone(port, '/api/status/')).status, 503)
  const slow = await askAlone(port, '/api/extras/object-types/?limit=1000')
  // Lognormal, median 80 ms and p99 400: below 10 ms one time in 10 000 (and the seed fixes the draw).
  t.ok(slow.status === 200 && slow.ms >= 10, `the narrowed delay: ${slow.ms.toFixed(0)} ms`)
  t.equal((await askAlone(port, '/api/', { 'x-envoy-fault-abort-request': '503' })).status, 503, 'its headers honoured')
  const second = await withFaults(t, files[1])
  t.equal((await askAlone(second.port, '/api/status/')).status, 503, 'the first minute of every five')
})
