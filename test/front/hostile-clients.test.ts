import t, { type Test } from 'tap'
import autocannon from 'autocannon'
import fc from 'fast-check'
import { once } from 'node:events'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer, METHODS } from 'node:http'
import { connect, createConnection, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { MAX_WAITING_ANSWERS, MAX_WAITING_ANSWERS_IN_PROCESS } from '../../lib/front/pipelining.ts'
import { brokenRedis, ENDLESS, HUNDRED_MB, HUNDRED_MB_ERROR } from '../helpers/broken-redis.ts'
import { fetch } from '../helpers/http.ts'
import { readings, urlWith } from '../helpers/token-urls.ts'
import { command, logged, start } from '../helpers/process.ts'
import { cgroupSkip, memoryLimited } from '../helpers/cgroup.ts'
import { answersIn, assertAnswers, converse, DEPLOYMENT, descriptors, GET, holds, LOADED, peakMiB, replica, wellFormed, type Answer } from '../helpers/hostile.ts'
import { DEADLINE_MS, until } from '../helpers/wait.ts'

// Clients that mean harm, over raw sockets, against the service as a process with the heap limit of
// the Kubernetes deployment. One case per finding; each asserts what must hold for any client:
// every answer JSON and no 5xx, never more answers than requests (none to a request that was not
// made), a close where one is due, and the process alive. The file ends with a fuzzing run. The
// crowds of thousands of connections are in test/crowds/ and connection-cap.test.ts.

/** A pipelined request of the mix below, and what its answer must be. */
interface Asked { bytes: string, head: boolean, check: (answer: Answer) => boolean }

/** The ids of the default profile's object types. */
const IDS: number[] = JSON.parse(readFileSync(new URL('../../data/default-inventory.json', import.meta.url), 'utf8')).objectTypes.map((type: { id: number }) => type.id)

/**
 * Requests of every kind a load test mixes: a status answered from the cache, a page never asked
 * before (each its own offset and query), a HEAD, an item, an unknown path (404) and a bad filter (400),
 * each with what its answer must say, so that an answer in another request's place is seen.
 */
function mix (count: number, tag: string): Asked[] {
  const asked: Asked[] = []
  for (let i = 0; i < count; i++) {
    const last = i === count - 1 ? 'Connection: close\r\n' : ''
    const kinds: Asked[] = [
      { bytes: GET('/api/status/', last), head: false, check: (a) => a.status === 200 && JSON.parse(a.body)['service-version'] === '4.3.7' },
      {
        bytes: GET(`/api/extras/object-types/?limit=1&offset=${i % 163}&n=${tag}-${i}`, last),
        head: false,
        check: (a) => a.status === 200 && JSON.parse(a.body).previous === (i % 163 === 0 ? null : `http://inv.example.com/api/extras/object-types/?limit=1&n=${tag}-${i}${i % 163 === 1 ? '' : `&offset=${(i % 163) - 1}`}`),
      },
      { bytes: `HEAD /api/extras/object-types/?limit=2 HTTP/1.1\r\nHost: inv.example.com\r\n${last}\r\n`, head: true, check: (a) => a.status === 200 && a.body === '' && Number(a.headers['content-length']) > 0 },
      { bytes: GET(`/api/extras/object-types/${IDS[i % IDS.length]}/`, last), head: false, check: (a) => a.status === 200 && JSON.parse(a.body).id === IDS[i % IDS.length] },
      { bytes: GET(`/api/nothing-${i}/`, last), head: false, check: (a) => a.status === 404 && a.body === '{"detail":"Not found."}' },
      { bytes: GET(`/api/extras/object-types/?id=x${i}`, last), head: false, check: (a) => a.status === 400 && a.body === '{"id":["Enter a number."]}' },
    ]
    asked.push(kinds[i % kinds.length]!)
  }
  return asked
}

/** Writes the requests at once on one connection, reads as they come, and says which answer is not its request's. */
async function pipeline (port: number, asked: Asked[]): Promise<{ answered: number, wrong: string | undefined, closed: boolean }> {
  const { closed, received } = await converse(port, asked.map((request) => request.bytes).join(''), { keepOpen: DEADLINE_MS })
  const parsed = answersIn(Buffer.from(received, 'latin1'), asked.map((request) => request.head))
  const wrong = parsed.findIndex((answer, i) => !asked[i]!.check(answer))
  return {
    answered: parsed.length,
    wrong: wrong === -1 ? undefined : `answer ${wrong} (${parsed[wrong]!.status} ${parsed[wrong]!.body.slice(0, 60)}) is not the one to ${JSON.stringify(asked[wrong]!.bytes.split('\r\n')[0])}`,
    closed,
  }
}

t.test('a client that pipelines and reads gets every answer, in order, on its connection, at any depth', async (t) => {
  const service = await replica(t)
  for (const depth of [MAX_WAITING_ANSWERS + 2, 18, 100, 1000, 5000]) {
    const result = await pipeline(service.port, mix(depth, `d${depth}`))
    t.same(result, { answered: depth, wrong: undefined, closed: true }, `${depth} requests in one write: ${depth} answers, each its request's, then the close asked for`)
  }
  const crowd = await Promise.all(Array.from({ length: 50 }, (_, c) => pipeline(service.port, mix(200, `c${c}`))))
  t.same(crowd.filter((result) => result.answered !== 200 || result.wrong !== undefined || !result.closed), [], '50 connections at once, 200 requests each: every answer, in order')
  await holds(t, service)
})

t.test('the process-wide bound on waiting answers slows readers down but never cuts them off', async (t) => {
  // The bound slows the reader down; the service's timeouts must not cut it off first, also on a
  // machine so busy that the reader's first request is read 10 s after its connect.
  const service = await replica(t, { SEND_TIMEOUT_MS: '60000', HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '60000' })
  // Clients that never read hold more answers than the process lets wait.
  const hogs = MAX_WAITING_ANSWERS_IN_PROCESS / MAX_WAITING_ANSWERS + 20
  const sockets = Array.from({ length: hogs }, () => {
    const socket = connect(service.port, '127.0.0.1', () => socket.write(GET('/api/schema/').repeat(3000)))
    socket.pause()
    socket.on('error', () => {})
    return socket
  })
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const result = await pipeline(service.port, mix(300, 'beside'))
  t.same(result, { answered: 300, wrong: undefined, closed: true }, 'a reading client beside them gets all 300 answers, in order')
  for (const socket of sockets) socket.destroy()
  await holds(t, service, 96)
})

t.test('clients that pipeline and never read are held by back-pressure, then closed by the send timeout', async (t) => {
  const SEND_TIMEOUT_MS = 2000
  const service = await replica(t, { SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS) }, LOADED)
  const request = GET('/api/schema/')
  const idleDescriptors = descriptors(service.child.pid!)
  // On 10 connections, more answers than the kernel's buffers of both ends take at their largest, so answers wait.
  const largest = (file: string) => Number(readFileSync(`/proc/sys/net/ipv4/${file}`, 'utf8').trim().split(/\s+/)[2])
  const answerBytes = (await fetch(service.port, '/api/schema/', { headers: { host: 'inv.example.com' } })).body.length
  const count = Math.ceil((largest('tcp_rmem') + largest('tcp_wmem')) / answerBytes) + 1
  const sockets = Array.from({ length: 10 }, () => {
    const chunks: Buffer[] = []
    const socket = connect(service.port, '127.0.0.1', () => socket.write(request.repeat(count)))
    socket.pause()
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', () => {})
    return { socket, chunks, closed }
  })
  // Reading nothing, they are served until their buffers are full, then nothing more for the send
  // timeout, and closed (the service's descriptors say so: they read nothing, so see nothing); the
  // service answers others meanwhile.
  t.equal((await fetch(service.port, '/healthz')).status, 200, 'the probe answers meanwhile')
  await until('the service to close the 10 connections', () => descriptors(service.child.pid!) <= idleDescriptors)
  for (const { socket } of sockets) socket.resume()
  await until('the 10 connections to be closed', async () => {
    await Promise.all(sockets.map(({ closed }) => closed))
    return true
  }, DEADLINE_MS)
  const answered = sockets.map(({ chunks }) => answersIn(Buffer.concat(chunks)))
  t.ok(Math.max(...answered.map((answers) => answers.length)) < count, `closed by the service before all ${count} were answered (most: ${Math.max(...answered.map((answers) => answers.length))})`)
  t.same(answered.flat().filter((answer) => answer.status !== 200), [], 'what was written is whole answers, every one a 200')
  await holds(t, service, 96)

  // 1,000 connections of 16 that read only after a while: their answers wait in the kernel's buffers
  // or, on a machine short of them (another test's crowd), in the process, and each gets all 16.
  // Their own replica, whose send timeout is longer than the while.
  const patient = await replica(t, { SEND_TIMEOUT_MS: '60000' }, LOADED)
  const crowd = Array.from({ length: 1000 }, () => {
    const chunks: Buffer[] = []
    const socket = connect(patient.port, '127.0.0.1', () => socket.write(request.repeat(16)))
    socket.pause()
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', () => {})
    return { socket, chunks }
  })
  await new Promise((resolve) => setTimeout(resolve, SEND_TIMEOUT_MS * 2))
  t.equal((await fetch(patient.port, '/healthz')).status, 200, '1,000 x 16: the probe answers meanwhile')
  for (const { socket } of crowd) socket.resume()
  await until('every answer of the 1,000 connections', () => crowd.every(({ chunks }) => answersIn(Buffer.concat(chunks)).length === 16))
  t.pass('1,000 x 16: each gets its 16 answers when it reads')
  for (const { socket } of crowd) socket.destroy()
  await holds(t, patient, 96)
  const pipelined = GET('/api/status/').repeat(MAX_WAITING_ANSWERS * 2) + GET('/api/status/', 'Connection: close\r\n')
  assertAnswers(t, await converse(service.port, pipelined, { keepOpen: DEADLINE_MS }), Array(MAX_WAITING_ANSWERS * 2 + 1).fill(200), true,
    'then a client that pipelines and reads gets every answer')
})

t.test('CONNECT, TRACE and Upgrade behind other requests are answered in their turn', async (t) => {
  const service = await replica(t)
  const request = (method: string, path: string, extra = '') => `${method} ${path} HTTP/1.1\r\nHost: inv.example.com\r\n${extra}\r\n`
  const connect = request('CONNECT', 'inv.example.com:443')
  const statuses = async (bytes: string) => (await converse(service.port, bytes, { keepOpen: DEADLINE_MS })).answers.map((answer) => [answer.status, answer.body.slice(0, 22)])
  const CONNECT_REFUSED = [405, '{"detail":"Method \\"CONNECT\\" not allowed."}'.slice(0, 22)]
  for (const first of ['/api/status/', '/api/schema/', '/metrics', '/api/extras/object-types/?limit=1000']) {
    t.same(await statuses(request('GET', first) + request('GET', '/api/') + request('GET', '/api/extras/') + connect),
      [[first === '/metrics' ? 404 : 200, (await fetch(service.port, first, { headers: { host: 'inv.example.com' } })).body.slice(0, 22)],
        [200, '{"extras":"http://inv.'], [200, '{"object-types":"http:'], CONNECT_REFUSED],
      `GET ${first}, GET, GET, CONNECT: three answers, then the CONNECT's 405 and the close`)
  }
  t.same(await statuses(request('GET', '/api/') + connect + request('GET', '/api/extras/')), [[200, '{"extras":"http://inv.'], CONNECT_REFUSED],
    'what follows a CONNECT is not read: the connection closes after its 405')
  t.same(await statuses(request('GET', '/api/') + request('TRACE', '/api/') + request('GET', '/api/extras/', 'Connection: Upgrade\r\nUpgrade: websocket\r\n') +
    request('OPTIONS', '/api/status/') + request('GET', '/api/status/', 'Connection: close\r\n')),
  [[200, '{"extras":"http://inv.'], [405, '{"detail":"Method \\"TRACE\\" not allowed."}'.slice(0, 22)], [200, '{"object-types":"http:'], [200, '{"name":"Status","desc'], [200, '{"framework-version":"']],
  'TRACE and Upgrade are requests like any other: each answered in its turn, and the requests after them too')
  // At the end of a read, whole or with its body still to come: what comes in the next read is read too.
  for (const [first, second] of [
    [request('GET', '/api/extras/', 'Connection: Upgrade\r\nUpgrade: websocket\r\n'), request('GET', '/api/', 'Connection: close\r\n')],
    [request('GET', '/api/extras/', 'Connection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 5\r\n') + 'ab', 'cde' + request('GET', '/api/', 'Connection: close\r\n')],
  ] as const) {
    const socket = createConnection(service.port, '127.0.0.1', () => socket.write(first))
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
      if (answersIn(Buffer.from(received, 'latin1')).length === 1 && socket.bytesWritten === first.length) socket.write(second)
    })
    await once(socket, 'close')
    t.same(answersIn(Buffer.from(received, 'latin1')).map((answer) => answer.body.slice(0, 22)), ['{"object-types":"http:', '{"extras":"http://inv.'],
      `an Upgrade request at the end of a read${first.endsWith('ab') ? ', its body still to come' : ''}: answered, and the request in the next read too`)
  }
  // Wherever it falls against the bound on waiting answers: before it, on it, after it, twice over.
  for (const before of [MAX_WAITING_ANSWERS - 1, MAX_WAITING_ANSWERS, MAX_WAITING_ANSWERS + 1, MAX_WAITING_ANSWERS * 2, MAX_WAITING_ANSWERS * 2 + 1, 1000]) {
    const { answers, closed } = await converse(service.port, request('GET', '/api/status/').repeat(before) +
      request('GET', '/api/extras/', 'Connection: Upgrade\r\nUpgrade: websocket\r\n') + request('GET', '/api/status/').repeat(100) + request('GET', '/api/', 'Connection: close\r\n'), { keepOpen: DEADLINE_MS })
    t.same([answers.length, answers[before]?.body.slice(0, 22), answers.at(-1)?.body.slice(0, 22), closed], [before + 102, '{"object-types":"http:', '{"extras":"http://inv.', true],
      `an Upgrade after ${before} pipelined requests: answered in its turn, then the 101 requests after it, and the close asked for`)
  }
  await holds(t, service)
})

/** A faults file in the test's folder. */
function faultsFile (t: Test, faults: unknown, name = 'faults.json'): string {
  const file = join(t.testdir(), name)
  writeFileSync(file, typeof faults === 'string' ? faults : JSON.stringify(faults))
  return file
}

t.test('delayed requests whose clients leave are released at once: 10,000 abandoned, then autocannon timing out', async (t) => {
  const service = await replica(t, { FAULTS: faultsFile(t, { headers: true, rules: [{ path: '/api/status/', delay: { ms: 10_000 } }] }) })
  const idleDescriptors = descriptors(service.child.pid!)
  // Half leave with a FIN (their end of the connection), half with a reset; 500 at a time. Each delay
  // held its request, timer and socket for a minute: at the 64 MiB heap, 10,000 of them would not fit.
  for (let batch = 0; batch < 20; batch++) {
    await Promise.all(Array.from({ length: 500 }, (_, i) => new Promise<void>((resolve) => {
      const path = i % 2 === 0 ? '/api/status/' : '/api/extras/'
      const socket = connect(service.port, '127.0.0.1', () => {
        socket.write(GET(path, 'x-envoy-fault-delay-request: 9999999999\r\n'))
        if (batch % 2 === 0) socket.end()
        else setImmediate(() => socket.resetAndDestroy())
      })
      socket.on('error', () => {})
      socket.on('close', () => resolve())
      socket.resume()
    })))
  }
  await until('the service to hold no socket of theirs', () => descriptors(service.child.pid!) <= idleDescriptors + 5)
  t.pass('10,000 requests delayed and abandoned: every socket closed')
  // What stays is the allocator's, as after any flood of connections (docs/architecture.md).
  await holds(t, service, 96)

  // A load tester whose timeout is shorter than the delay: every request abandoned after a second.
  const result = await autocannon({ url: `http://127.0.0.1:${service.port}/api/status/`, connections: 900, timeout: 1, duration: 4, headers: { host: 'inv.example.com' } })
  t.ok(result.timeouts > 0 && result['2xx'] === 0, `autocannon -c 900 -t 1 against a 10 s delay: ${result.timeouts} timed out, none answered`)
  await until('the service to hold no socket of autocannon\'s', () => descriptors(service.child.pid!) <= idleDescriptors + 5)
  t.pass('and every socket of autocannon\'s closed')
  // What stays is the allocator's, as after any flood of connections (docs/architecture.md).
  await holds(t, service, 96)
})

t.test('metric series are bounded whatever the headers ask for: every abort status, every method Node parses, every route', async (t) => {
  const service = await replica(t, { METRICS: 'true', FAULTS: faultsFile(t, { headers: true, rules: [] }) })
  const series = async () => (await fetch(service.port, '/metrics')).body.split('\n').filter((line) => line.startsWith('http_requests_total{'))
  // Every status Envoy's header may ask for, on one route and method.
  for (let status = 200; status < 600; status += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => converse(service.port, GET('/api/status/', `x-envoy-fault-abort-request: ${status + i}\r\nConnection: close\r\n`))))
  }
  const ofStatus = (await series()).filter((line) => line.includes('route="/api/status/",method="GET"'))
  t.ok(ofStatus.length <= 18, `400 statuses asked for on one route: ${ofStatus.length} series (the service's 14 statuses and 4 classes at most)`)
  t.ok(ofStatus.some((line) => line.includes('status="4xx"')) && ofStatus.some((line) => line.includes('status="503"')), 'its own statuses by code, the others by class')
  // Every method Node parses on every route, each with an abort asked for, and once without.
  const methods = METHODS.filter((method) => method !== 'CONNECT')
  const paths = ['/api/', '/api/extras/', '/api/status/', '/api/status.json', '/api/extras/object-types/', '/api/extras/object-types/5/', '/api/extras/object-types/5.json/',
    '/api/extras/object-types.json', '/api/schema/', '/healthz', '/readyz', '/metrics', '/nothing']
  for (const method of methods) {
    for (const abort of ['x-envoy-fault-abort-request: 599\r\n', '']) {
      await Promise.all(paths.map((path) => converse(service.port, `${method} ${path} HTTP/1.1\r\nHost: inv.example.com\r\n${abort}Connection: close\r\n\r\n`)))
    }
  }
  const all = await series()
  const labels = (name: string) => new Set(all.map((line) => new RegExp(`${name}="([^"]*)"`).exec(line)![1]))
  t.same([...labels('method')].sort(), ['GET', 'HEAD', 'OPTIONS', 'other'], `${methods.length} methods: the API's own three, and other`)
  t.same([...labels('route')].sort(), ['/api/', '/api/extras/', '/api/extras/object-types/', '/api/extras/object-types/{id}/', '/api/schema/', '/api/status/', '/healthz', '/metrics', '/readyz', 'unmatched'],
    'the routes as the OpenAPI document writes them, and unmatched')
  t.ok(all.every((line) => /status="(\d{3}|[2-5]xx)"/.test(line)), 'every status label a code or a class')
  // The bound docs/behaviour.md states: 10 routes x 4 methods x 18 statuses.
  t.ok(all.length <= 720, `${all.length} series of http_requests_total, within 720`)
  const scrape = (await fetch(service.port, '/metrics')).body.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
  t.ok(scrape.length <= 1200, `${scrape.length} series in the whole scrape, within 1,200`)
  await holds(t, service)
})

t.test('a faults file is read in time linear in its size; too large a file is refused in one line, and kept out on reload', async (t) => {
  const rules = (count: number) => JSON.stringify({ rules: Array.from({ length: count }, (_, i) => ({ path: '/api/extras/object-types/', query: { q: `x${i}` }, delay: { ms: 5 } })) })
  // With a heap of V8's default size, 100,000 rules (7.7 MB) load; one more is refused.
  const many = await start(t, { FAULTS: faultsFile(t, rules(100_000), 'many.json') })
  t.match(many.output(), '"rules":100000', 'a default heap: 100,000 rules load')
  const tooMany = faultsFile(t, rules(100_001), 'too-many.json')
  const refusedRules = await command([], { FAULTS: tooMany })
  t.same([refusedRules.code, refusedRules.stderr], [1, `Bad faults file ${tooMany}: /rules holds 100001 rules; at most 100000 are accepted\n`], 'one rule more: refused in one line')

  // The Kubernetes heap takes a sixteenth of its limit: 40,000 rules, reloaded while probes ask.
  const file = faultsFile(t, rules(40_000))
  const service = await replica(t, { FAULTS: file })
  writeFileSync(file, rules(39_999))
  const probes: number[] = []
  service.child.kill('SIGHUP')
  const reloaded = () => service.output().includes('"rules":39999')
  while (!reloaded()) probes.push((await fetch(service.port, '/healthz')).status)
  t.ok(probes.every((status) => status === 200), `${probes.length} probes during the reload, every one answered 200`)
  const large = faultsFile(t, rules(100_000), 'large.json')
  const refusedSize = await command([], { FAULTS: large, ...DEPLOYMENT })
  t.match(refusedSize, { code: 1, stderr: new RegExp(`^Bad faults file ${large}: is 7\\.\\d MiB; at most 4\\.\\d MiB is accepted\\n$`) }, 'too large for the heap: refused at start-up in one line')
  writeFileSync(file, readFileSync(large))
  service.child.kill('SIGHUP')
  await until('the reload refused', () => /"msg":"Bad faults file [^"]*: is 7\.\d MiB; at most 4\.\d MiB is accepted\. The faults in use stay"/.test(service.output()))
  t.pass('and logged on reload, the faults in use kept')
  await holds(t, service)
})

t.test('a broken Redis cannot take the replica: a reply without end, a silence, a reply that is no count, an error', async (t) => {
  for (const [what, reply] of [
    ['a reply without end', () => ENDLESS],
    ['a silence', (poll: number) => poll <= 1 ? ':3\r\n' : undefined],
    ['a count below 0', () => ':-5\r\n'],
    ['an error', () => '-WRONGTYPE Operation against a key holding the wrong kind of value\r\n'],
  ] as const) {
    const { url, seen } = await brokenRedis(t, reply)
    const service = await replica(t, { REDIS_URL: url, RQ_POLL_INTERVAL_MS: '100', METRICS: 'true' })
    await until(`${what}: five connections or polls`, () => seen.connections + seen.polls >= 5)
    const metrics = (await fetch(service.port, '/metrics')).body
    t.match(metrics, /^inventory_redis_up 0$/m, `${what}: Redis reported down`)
    // A reload meanwhile serves the new profile with the last good count.
    service.child.kill('SIGHUP')
    await logged(service, '"msg":"profile reloaded"')
    const status = await converse(service.port, GET('/api/status/', 'Connection: close\r\n'))
    t.ok([1, 3].includes(JSON.parse(status.answers[0]!.body)['rq-workers-running']), `${what}: the profile's or the last good count served`)
    // Once for each spell Redis was gone: a busy machine may see it answer again in between.
    const spells = service.output().split('serving the last worker count').length - 1
    t.ok(spells >= 1 && spells <= service.output().split('Redis reachable again').length, `${what}: logged once a spell (${spells})`)
    await holds(t, service)
    service.child.kill('SIGTERM')
  }
})

t.test('a Redis reply past 64 KiB is cut at once: 100 MB, endless, a 100 MB error, each in a 256 MiB cgroup, keep the replica near its idle memory', { skip: cgroupSkip }, async (t) => {
  for (const [what, flood] of [['a 100 MB reply', HUNDRED_MB], ['a reply without end', ENDLESS], ['a 100 MB error', HUNDRED_MB_ERROR]] as const) {
    const { url, seen } = await brokenRedis(t, () => flood)
    // A poll's time to answer is its interval's, 1 s at least: 2.5 s here, for a busy machine to read 64 KiB in.
    const service = await replica(t, { REDIS_URL: url, RQ_POLL_INTERVAL_MS: '2500', METRICS: 'true' }, { cgroup: memoryLimited(t, 256 * 2 ** 20) })
    // Each connection's reply is cut, and the next connection polled again.
    await until(`${what}: three connections`, () => seen.connections >= 3)
    t.match((await fetch(service.port, '/metrics')).body, /^inventory_redis_up 0$/m, `${what}: Redis reported down`)
    // Logged once a spell: as too large, or, where a busy machine kept the replica from reading the
    // first reply before its poll's time was up, as no answer (the cut is then what seen.mostWritten shows).
    t.match(service.output(), /unreachable \((a reply of more than 65536 bytes|no answer within 2500 ms)\); serving the last worker count/, `${what}: logged once, as a reply too large (or, on a busy machine, as unanswered)`)
    // What the kernel's buffers take on both ends, and no more: a reply is never read far.
    t.ok(seen.mostWritten < 32 * 2 ** 20, `${what}: a connection closed after ${(seen.mostWritten / 2 ** 20).toFixed(1)} MiB`)
    // The image idles at 72 MiB, and stays under 150; this TypeScript run idles higher, so its growth is what counts.
    const peak = peakMiB(service.child.pid!)
    t.ok(peak - service.idleMiB < 48, `${what}: the most resident memory ${peak.toFixed(0)} MiB, within 48 MiB of idle (${service.idleMiB.toFixed(0)})`)
    await holds(t, service)
    service.child.kill('SIGTERM')
  }
})

t.test('a capture of a deployment whose pages never end stops with one line, and writes nothing', async (t) => {
  let n = 0
  const deployment = createHttpServer((request, response) => {
    const body = request.url!.startsWith('/api/status/')
      ? { 'netbox-version': '4.3.7', 'django-version': '5.2.8', 'python-version': '3.12.3', 'installed-apps': {}, plugins: {}, 'rq-workers-running': 1 }
      : { count: 1e9, next: `http://127.0.0.1:${(deployment.address() as AddressInfo).port}/api/extras/object-types/?n=${++n}`, previous: null, results: [] }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  deployment.listen(0, '127.0.0.1')
  await once(deployment, 'listening')
  t.teardown(() => { deployment.closeAllConnections(); deployment.close() })
  const base = `http://127.0.0.1:${(deployment.address() as AddressInfo).port}`
  const out = join(t.testdir(), 'profile.json')
  const endless = await command(['capture', base, '--out', out], DEPLOYMENT)
  t.same([endless.code, endless.stderr.split('\n').at(-2)], [1, `capture failed: ${base}/api/extras/object-types/?limit=1000 says count 1000000000: more object types than a capture takes (at most 100000)`], 'a count beyond the bound')
  t.notOk(existsSync(out), 'no file')
})

t.test('Expect: 100-continue gets a 100 before its answer, or, behind another answer, its answer alone', async (t) => {
  const service = await replica(t)
  const expecting = (request: string) => request.replace('\r\n\r\n', '\r\nExpect: 100-continue\r\n\r\n')
  const first = await converse(service.port, expecting(GET('/api/status/')) + GET('/api/status/', 'Connection: close\r\n'), { keepOpen: DEADLINE_MS })
  assertAnswers(t, first, [200, 200], true, 'first on its connection')
  t.match(first.received, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/, 'first on its connection: the 100, then the answer')
  // Behind another answer: Node would put the header block of an answer whose body is a Buffer (a
  // replay, the status, an error) before the 100, and the 100 inside the answer.
  for (const [what, request, status] of [['a replay', GET('/api/status/'), 200], ['an error', 'GET /api/status/ HTTP/1.1\r\n\r\n', 400]] as const) {
    const behind = await converse(service.port, request + expecting(request), { keepOpen: DEADLINE_MS })
    assertAnswers(t, behind, [status, status], true, `${what} behind another`)
    t.notMatch(behind.received, '100 Continue', `${what} behind another: no 100`)
    t.equal(behind.answers[1]?.headers.connection, 'close', `${what} behind another: then the connection closes`)
  }
  await holds(t, service)
})

t.test('nothing is written after an answer for bytes that are no request of their own', async (t) => {
  const service = await replica(t)
  const chunked = 'GET /api/status/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n'
  for (const [what, bytes] of [
    ['a trailer that is a Content-Length', `${chunked}0\r\nContent-Length: 5\r\n\r\n`],
    ['a trailer with control bytes', `${chunked}0\r\nX-Trailer: a\x01b\r\n\r\n`],
    ['a malformed chunk', `${chunked}zz\r\nhello\r\n0\r\n\r\n`],
    ['bytes after a Connection: close request', GET('/api/status/', 'Connection: close\r\n') + 'GARBAGE\r\n\r\n'],
    ['bytes after an HTTP/1.0 request', 'GET /api/status/ HTTP/1.0\r\n\r\nGARBAGE / HTTP/1.1\r\n\r\n'],
    ['a request after an HTTP/1.0 request', 'GET /api/status/ HTTP/1.0\r\n\r\n' + GET('/api/status/')],
  ] as const) {
    // Kept open: the server, not the client's half-close, ends each conversation.
    assertAnswers(t, await converse(service.port, bytes, { keepOpen: DEADLINE_MS }), [200], true, what)
  }
  t.match((await converse(service.port, 'GARBAGE\r\n\r\n')).answers[0], { status: 400, body: '{"detail":"Bad request."}' },
    'a first request that is not one still gets its 400')
  // After a whole request, answered, on a connection kept open, what comes is a request of its own.
  const keptOpen = async (second: string, first = GET('/api/status/')) => {
    const socket = connect(service.port, '127.0.0.1')
    const chunks: Buffer[] = []
    let sent = false
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      if (sent || answersIn(Buffer.concat(chunks)).length === 0) return
      socket.write(second)
      sent = true
    })
    socket.write(first)
    await once(socket, 'close')
    return answersIn(Buffer.concat(chunks))
  }
  assertAnswers(t, { answers: await keptOpen('0\r\nContent-Length: 5\r\n\r\n', chunked), closed: true }, [200], true,
    'a bad trailer sent once the answer came')
  t.match(await keptOpen('GARBAGE\r\n\r\n'), [{ status: 200 }, { status: 400, body: '{"detail":"Bad request."}' }], 'garbage after an answered request: its own 400')
  t.match(await keptOpen(GET('/api/status/?' + 'a'.repeat(20000))), [{ status: 200 }, { status: 431, body: '{"detail":"Request header fields too large."}' }],
    'a request too large after an answered one: its own 431')
  await holds(t, service)
})

t.test('a number of any size, sign or exponent is answered as the reference answers it, never with a 5xx', async (t) => {
  const service = await replica(t)
  const list = (id: string) => `/api/extras/object-types/?id=${id}`
  for (const [url, status, body] of [
    [list('-1e999999999'), 200, '{"count":0,"next":null,"previous":null,"results":[]}'],
    [list('-1e400'), 200, '{"count":0,"next":null,"previous":null,"results":[]}'],
    [list('-9.99e99999999999999999999'), 200, '{"count":0,"next":null,"previous":null,"results":[]}'],
    [list('1e999999999'), 400, '{"id":["Ensure this value is less than or equal to 1e+50."]}'],
    [list('1e-999999999'), 200, '{"count":0,"next":null,"previous":null,"results":[]}'],
    ['/api/extras/object-types/5/?id=-1e999999999', 404, '{"detail":"No ObjectType matches the given query."}'],
    ['/api/extras/object-types.json?id=-1e999999999', 200, '{"count":0,"next":null,"previous":null,"results":[]}'],
  ] as const) {
    const reply = await fetch(service.port, url, { headers: { host: 'inv.example.com' } })
    t.same([reply.status, reply.body], [status, body], url)
  }
  const head = await converse(service.port, `HEAD ${list('-1e999999999')} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`)
  t.match(head.received, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n$/, 'HEAD of the same: 200, no body')
  await holds(t, service)
})

t.test('no log line holds raw request bytes, an Authorization value or a token', async (t) => {
  const TOKEN = '0123456789abcdef0123456789abcdef01234567'
  const tokensFile = join(t.testdir(), 'tokens')
  writeFileSync(tokensFile, `${TOKEN}\n`)
  const service = await replica(t, { LOGIN_REQUIRED: 'true', API_TOKENS_FILE: tokensFile, LOG_LEVEL: 'trace', ACCESS_LOG: 'true' })
  const auth = `Authorization: Token ${TOKEN}\r\n`
  // A request Node's parser refuses, on a fresh connection and after an answered one.
  await converse(service.port, `GET /api/status/ HTTP/1.1\r\nHost: a\r\n${auth}X-Bad: a\x01b\r\n\r\n`)
  await converse(service.port, GET('/api/status/', auth) + `GET /api/status/ HTTP/1.1\r\n${auth}X-Bad: a\x7fb\r\n\r\n`)
  // The token in the URL: as a query value, a query name, percent-encoded, a path segment.
  for (const url of [`/api/status/?token=${TOKEN}`, `/api/status/?${TOKEN}`, `/api/status/?key=%30${TOKEN.slice(1)}`, `/api/${TOKEN}/`, '/api/%zz/']) {
    await fetch(service.port, url, { headers: { host: 'a', authorization: `Token ${TOKEN}` } })
  }
  // And URLs that carry it in any encoding, quoting, separator or prefix.
  const sent = fc.sample(urlWith(TOKEN), { numRuns: 100, seed: 7 })
  for (const url of sent) await converse(service.port, `GET ${url} HTTP/1.1\r\nHost: a\r\n${auth}Connection: close\r\n\r\n`)
  await until('the last access log line', () => service.output().includes('"url":"/api/%zz/"') && service.output().split('"msg":"request completed"').length > 100)
  const output = service.output()
  const logged = [...output.matchAll(/"url":"((?:[^"\\]|\\.)*)"/g)].map((match) => JSON.parse(`"${match[1]}"`) as string)
  t.same(logged.filter((url) => readings(url).some((reading) => reading.includes(TOKEN))), [], `${logged.length} URLs logged: none reads as the token, however decoded`)
  t.match(output, /"url":"\/api\/status\/\?token=\[token\]"/, 'the access log masks a token in the query')
  t.match(output, /"url":"\/api\/\[token\]\/"/, 'and as a path segment')
  t.match(output, /"url":"\/api\/%zz\/"/, 'a segment with malformed escapes is written as it came')
  t.match(output, /"msg":"client error"/, 'client errors are logged')
  t.notOk(output.includes(TOKEN), 'the token appears in no log line')
  t.notOk(output.includes(TOKEN.slice(1)), 'nor its percent-encoded form')
  t.notOk(/rawPacket|X-Bad/.test(output), 'nor do the raw bytes of a refused request')
  await holds(t, service)
})

t.test('a request with no Host, or more than one, gets the JSON 400 of a Host that is refused', async (t) => {
  const service = await replica(t, { ALLOWED_HOSTS: 'inv.example.com' })
  const INVALID_HOST = '{"detail":"Invalid Host header."}'
  for (const [what, bytes] of [
    ['HTTP/1.1 without Host', 'GET /api/status/ HTTP/1.1\r\nConnection: close\r\n\r\n'],
    ['two Hosts, the allowed one first', 'GET /api/status/ HTTP/1.1\r\nHost: inv.example.com\r\nHost: evil.com\r\nConnection: close\r\n\r\n'],
    ['two equal Hosts', 'GET /api/extras/object-types/ HTTP/1.1\r\nHost: inv.example.com\r\nHost: inv.example.com\r\nConnection: close\r\n\r\n'],
  ] as const) {
    const conversation = await converse(service.port, bytes)
    assertAnswers(t, conversation, [400], true, what)
    t.equal(conversation.answers[0]?.body, INVALID_HOST, `${what}: ${INVALID_HOST}`)
    t.match(conversation.answers[0]?.headers, { 'api-version': '4.3', allow: 'GET, HEAD, OPTIONS', vary: 'Accept' }, `${what}: the API's headers`)
  }
  const unrestricted = await replica(t)
  const twoHosts = await converse(unrestricted.port, 'GET /api/extras/object-types HTTP/1.1\r\nHost: evil.com\r\nHost: inv.example.com\r\nConnection: close\r\n\r\n')
  assertAnswers(t, twoHosts, [400], true, 'two Hosts without ALLOWED_HOSTS')
  t.notOk('location' in twoHosts.answers[0]!.headers, 'no redirect to either host')
  const http10 = await converse(unrestricted.port, 'GET /api/ HTTP/1.0\r\n\r\n')
  t.equal(http10.answers[0]?.body, `{"extras":"http://127.0.0.1:${unrestricted.port}/api/extras/","status":"http://127.0.0.1:${unrestricted.port}/api/status/"}`,
    'HTTP/1.0 without Host: the address it reached')
  await holds(t, service)
})

t.test('an absolute-form target is answered for its own authority, which is checked, links and keys the cache', async (t) => {
  const service = await replica(t, { ALLOWED_HOSTS: 'inv.example.com' })
  const target = 'http://inv.example.com/api/extras/object-types/?limit=2'
  const absolute = (target: string, host = 'inv.example.com') => `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`
  const [page] = (await converse(service.port, absolute(target, 'other.example.com'))).answers
  t.equal(page?.status, 200, 'the Host header does not count')
  t.match(JSON.parse(page!.body), { next: 'http://inv.example.com/api/extras/object-types/?limit=2&offset=2', previous: null }, 'links from the authority')
  const [origin] = (await converse(service.port, GET('/api/extras/object-types/?limit=2', 'Connection: close\r\n'))).answers
  t.equal(origin?.body, page?.body, 'the same answer as the origin form')
  const [refused] = (await converse(service.port, absolute('http://evil.com/api/extras/object-types/?limit=2'))).answers
  t.same([refused?.status, refused?.body], [400, '{"detail":"Invalid Host header."}'], 'an authority ALLOWED_HOSTS refuses, whatever the Host')
  const [moved] = (await converse(service.port, absolute('http://inv.example.com/api/extras/object-types?limit=2'))).answers
  t.same([moved?.status, moved?.headers.location], [301, 'http://inv.example.com/api/extras/object-types/?limit=2'], 'the unslashed form redirects, as in origin form')
  const [asterisk] = (await converse(service.port, 'OPTIONS * HTTP/1.1\r\nHost: inv.example.com\r\nConnection: close\r\n\r\n')).answers
  t.same([asterisk?.status, asterisk?.body], [404, '{"detail":"Not found."}'], 'the asterisk form is no path served')
  const [noPath] = (await converse(service.port, absolute('http://inv.example.com'))).answers
  t.same([noPath?.status, noPath?.body], [404, '{"detail":"Not found."}'], 'an authority without a path is the root, which is not served')
  const unrestricted = await replica(t)
  const [evil] = (await converse(unrestricted.port, absolute('http://evil.com/api/extras/object-types/?limit=2'))).answers
  t.match(JSON.parse(evil!.body), { next: 'http://evil.com/api/extras/object-types/?limit=2&offset=2' }, 'one host per request: the authority, without ALLOWED_HOSTS')
  const [noHost] = (await converse(unrestricted.port, 'GET http://inv.example.com/api/status/ HTTP/1.1\r\nConnection: close\r\n\r\n')).answers
  t.equal(noHost?.status, 200, 'the authority is the host of a request without Host')
  await holds(t, service)
})

t.test('/metrics is reached by one spelling only', async (t) => {
  const service = await replica(t, { METRICS: 'true' })
  const [metrics] = (await converse(service.port, 'GET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')).answers
  t.match([metrics?.status, metrics?.body], [200, /^# HELP /])
  for (const target of ['/%6detrics', '/%6D%65trics', 'http://a/metrics', '/metrics;x', '/metrics?x']) {
    const [refused] = (await converse(service.port, `GET ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`)).answers
    t.same([refused?.status, refused?.headers['content-type'], refused?.body], [404, 'application/json', '{"detail":"Not found."}'], target)
  }
  await holds(t, service)
})

t.test('fuzzing: raw request bytes of every shape get JSON answers, no 5xx, one answer per request at most, nothing after a refusal', async (t) => {
  // Envoy's fault headers honoured: a delay (released when the client leaves) and a slow body, never an abort (a 5xx on purpose).
  const service = await replica(t, { ALLOWED_HOSTS: 'inv.example.com,.example.com', FAULTS: faultsFile(t, { headers: true, rules: [{ path: '/api/status/', delay: { ms: 1 } }] }) })
  const line = (text: fc.Arbitrary<string>) => text.map((value) => value + '\r\n')
  const header = fc.oneof(
    fc.constantFrom('Host: inv.example.com', 'Host: evil.com', 'Host:', 'Host: a b', 'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked',
      'Content-Length: 5', 'Content-Length: -1', 'Content-Length: 1, 2', 'Connection: close', 'Connection: keep-alive', 'Expect: 100-continue',
      'Expect: x', 'Authorization: Token abc', 'X-Forwarded-Host: evil.com', ' folded', 'X: \x01', 'X-\x7f: y', ': empty', 'Upgrade: websocket',
      'x-envoy-fault-delay-request: 9999999999', 'x-envoy-fault-delay-request: 5', 'x-envoy-fault-throughput-response: 64', 'x-envoy-fault-delay-request-percentage: 50'),
    fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), fc.string({ unit: 'binary-ascii', maxLength: 20 })).map(([name, value]) => `${name}: ${value.replace(/[\r\n]/g, '')}`)
  ).map((text) => text + '\r\n')
  const target = fc.oneof(
    fc.constantFrom('/api/status/', '/api/extras/object-types/?limit=2&id=-1e99999', '/api/extras/object-types/5.json', '/api/extras/object-types',
      'http://inv.example.com/api/status/', 'http://evil.com/api/', 'https://x.example.com:8/api/?q', '*', '/metrics', '/healthz', '//api/', '/%zz'),
    fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 30 }).map((text) => '/' + text.replace(/[\s]/g, ''))
  )
  const request = fc.tuple(
    fc.constantFrom('GET', 'GET', 'OPTIONS', 'POST', 'DELETE', 'PRI', 'G\x00T', 'CONNECT', 'TRACE'),
    target,
    fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', 'HTTP/9'),
    fc.array(header, { maxLength: 6 }),
    fc.constantFrom('', '', '0\r\n\r\n', '5\r\nhello\r\n0\r\n\r\n', 'zz\r\n', 'hello', '0\r\nX: y\r\n\r\n')
  ).map(([method, target, version, headers, body]) => `${method} ${target} ${version}\r\n${headers.join('')}\r\n${body}`)
  const bytes = fc.oneof(fc.array(request, { minLength: 1, maxLength: 3 }).map((requests) => requests.join('')), line(fc.string({ unit: 'binary-ascii', maxLength: 60 })))
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(bytes, async (bytes) => {
    const { answers } = await converse(service.port, Buffer.from(bytes, 'latin1'))
    for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    const problems = answers.map(wellFormed).filter((problem) => problem !== undefined)
    if (problems.length > 0) throw new Error(`${JSON.stringify(bytes)}: ${problems.join('; ')}`)
    // Requests answered, at most one for each request line; then at most one answer to bytes the
    // parser refused (written by the front: no Date), the last. On a connection kept open, bytes
    // after a whole request that was answered are a request of their own, however bad.
    const refused = answers.filter((answer) => answer.headers.date === undefined)
    const requests = bytes.split(' HTTP/').length - 1
    if (answers.length - refused.length > requests) throw new Error(`${JSON.stringify(bytes)}: ${answers.length - refused.length} answers to ${requests} requests`)
    if (refused.length > 1 || (refused.length === 1 && answers.at(-1) !== refused[0])) throw new Error(`${JSON.stringify(bytes)}: an answer after a refusal`)
  }), { numRuns: 400 })
  t.pass(`answers by status: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
  await holds(t, service)
})
