import t, { type Test } from 'tap'
import fc from 'fast-check'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { MAX_WAITING_ANSWERS } from '../../lib/server/http-server.ts'
import { fetch } from '../http.ts'
import { start, type Service } from '../service.ts'
import { until } from '../wait.ts'

// Clients that mean harm, over raw sockets, against the service as a process with the heap limit of
// the Kubernetes deployment. One case per finding; each asserts what must hold for any client:
// every answer JSON and no 5xx, never more answers than requests (none to a request that was not
// made), a close where one is due, and the process alive. The file ends with a fuzzing run.

/** The Kubernetes deployment's Node settings: the smallest heap the project ships. */
const DEPLOYMENT = { NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=4', MALLOC_ARENA_MAX: '2' }
const DEADLINE_MS = 10_000

interface Answer { status: number, headers: Record<string, string>, body: string }
interface Conversation { answers: Answer[], closed: boolean, received: string }

/** Every complete final answer in what a connection received (none of them to HEAD). */
function answersIn (received: Buffer): Answer[] {
  const answers: Answer[] = []
  let rest = received
  for (;;) {
    const headerEnd = rest.indexOf('\r\n\r\n')
    if (headerEnd === -1) return answers
    const [statusLine = '', ...lines] = rest.subarray(0, headerEnd).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    if (rest.length < headerEnd + 4 + length) return answers
    const status = Number(statusLine.split(' ')[1])
    // An interim answer (100 Continue to an Expect) is no answer of its own.
    if (status >= 200) answers.push({ status, headers, body: rest.subarray(headerEnd + 4, headerEnd + 4 + length).toString() })
    rest = rest.subarray(headerEnd + 4 + length)
  }
}

/**
 * Writes the bytes, half-closes unless `keepOpen`, and collects what comes back until the
 * server closes, or for `keepOpen` ms when it does not.
 */
function converse (port: number, bytes: string | Buffer, { keepOpen }: { keepOpen?: number } = {}): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', () => keepOpen === undefined ? socket.end(bytes) : socket.write(bytes))
    const done = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      const received = Buffer.concat(chunks)
      resolve({ answers: answersIn(received), closed, received: received.toString('latin1') })
    }
    const timer = setTimeout(() => keepOpen === undefined ? reject(new Error(`no close in ${DEADLINE_MS} ms`)) : done(false), keepOpen ?? DEADLINE_MS)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('close', () => done(true))
    // A reset is a close too.
    socket.on('error', () => {})
  })
}

/** What holds for every answer: JSON, never a 5xx. */
function wellFormed (answer: Answer): string | undefined {
  if (answer.status >= 500) return `a ${answer.status}`
  if (answer.headers['content-type'] !== 'application/json') return `${answer.status} with Content-Type ${answer.headers['content-type']}`
  try {
    JSON.parse(answer.body)
  } catch {
    return `${answer.status} with a body that is not JSON: ${JSON.stringify(answer.body.slice(0, 80))}`
  }
  return undefined
}

/** The statuses of a conversation, each answer checked; the connection closed as `closed` says. */
function assertAnswers (t: Test, { answers, closed }: Omit<Conversation, 'received'>, statuses: number[], shouldClose: boolean, what: string): void {
  t.same(answers.map(wellFormed).filter((problem) => problem !== undefined), [], `${what}: every answer JSON, no 5xx`)
  t.same(answers.map((answer) => answer.status), statuses, `${what}: answered ${statuses.join(', ') || 'nothing'}`)
  t.equal(closed, shouldClose, `${what}: ${shouldClose ? 'closed' : 'kept open'}`)
}

/** The resident memory of a process, in MiB (Linux). */
function residentMiB (pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
}

type Replica = Service & { idleMiB: number }

/** The service with the deployment's settings, warmed up, and its resident memory then. */
async function replica (t: Test, env: NodeJS.ProcessEnv = {}): Promise<Replica> {
  const service = await start(t, { ...DEPLOYMENT, ...env })
  for (let i = 0; i < 50; i++) await fetch(service.port, i % 2 === 0 ? '/api/schema/' : `/api/extras/object-types/?limit=${i}`, { headers: { host: 'inv.example.com' } })
  return { ...service, idleMiB: residentMiB(service.child.pid!) }
}

/** What must hold after every case: the process alive, answering its probe, its memory near where it was idle. */
async function holds (t: Test, service: Replica, marginMiB = 32): Promise<void> {
  t.same([service.child.exitCode, service.child.signalCode], [null, null], 'the process is alive')
  // A connection the kernel refused while it still tore down the attack's is tried again.
  await until('the probe to answer', async () => (await fetch(service.port, '/healthz').catch(() => ({ status: 0 }))).status === 200)
  t.pass('and answers its probe')
  const now = residentMiB(service.child.pid!)
  t.ok(now - service.idleMiB < marginMiB, `memory near idle: ${service.idleMiB.toFixed(0)} MiB before, ${now.toFixed(0)} MiB after`)
}

const GET = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: inv.example.com\r\n${extra}\r\n`

t.test('clients that send without reading: at most a bounded number of answers wait, then the connection closes', async (t) => {
  const service = await replica(t)
  const CONNECTIONS = 1000
  const request = GET('/api/schema/')
  // A whole read of Node's: some 1,700 requests.
  const flood = request.repeat(Math.ceil(65536 / request.length))
  const sockets = Array.from({ length: CONNECTIONS }, () => {
    const chunks: Buffer[] = []
    const socket = connect(service.port, '127.0.0.1', () => socket.write(flood))
    socket.pause()
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', () => {})
    return { socket, chunks, closed }
  })
  // They read nothing for a second, then everything the server sent.
  await new Promise((resolve) => setTimeout(resolve, 1000))
  for (const { socket } of sockets) socket.resume()
  await until('every flooding connection to be closed', async () => {
    await Promise.all(sockets.map(({ closed }) => closed))
    return true
  }, DEADLINE_MS * 3)
  const counts = sockets.map(({ chunks }) => answersIn(Buffer.concat(chunks)).length)
  t.ok(Math.max(...counts) <= MAX_WAITING_ANSWERS + 1, `at most ${MAX_WAITING_ANSWERS + 1} answers a connection (most: ${Math.max(...counts)})`)
  const pipelined = GET('/api/status/').repeat(MAX_WAITING_ANSWERS) + GET('/api/status/', 'Connection: close\r\n')
  assertAnswers(t, await converse(service.port, pipelined, { keepOpen: DEADLINE_MS }), Array(MAX_WAITING_ANSWERS + 1).fill(200), true,
    'then a client that pipelines as many as may wait')
  // What stays is the allocator's: the reads' buffers, as after a bare node:net server's (docs/architecture.md).
  await holds(t, service, 96)
})

t.test('a client that pipelines and reads keeps its connection', async (t) => {
  const service = await replica(t)
  const requests = GET('/api/status/').repeat(MAX_WAITING_ANSWERS) + GET('/api/status/', 'Connection: close\r\n')
  const conversation = await converse(service.port, requests, { keepOpen: DEADLINE_MS })
  assertAnswers(t, conversation, Array(MAX_WAITING_ANSWERS + 1).fill(200), true, `${MAX_WAITING_ANSWERS + 1} pipelined requests`)
  await holds(t, service)
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
  await until('the last access log line', () => service.output().includes('"url":"/api/%zz/"'))
  const output = service.output()
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
  const service = await replica(t, { ALLOWED_HOSTS: 'inv.example.com,.example.com' })
  const line = (text: fc.Arbitrary<string>) => text.map((value) => value + '\r\n')
  const header = fc.oneof(
    fc.constantFrom('Host: inv.example.com', 'Host: evil.com', 'Host:', 'Host: a b', 'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked',
      'Content-Length: 5', 'Content-Length: -1', 'Content-Length: 1, 2', 'Connection: close', 'Connection: keep-alive', 'Expect: 100-continue',
      'Expect: x', 'Authorization: Token abc', 'X-Forwarded-Host: evil.com', ' folded', 'X: \x01', 'X-\x7f: y', ': empty', 'Upgrade: websocket'),
    fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), fc.string({ unit: 'binary-ascii', maxLength: 20 })).map(([name, value]) => `${name}: ${value.replace(/[\r\n]/g, '')}`)
  ).map((text) => text + '\r\n')
  const target = fc.oneof(
    fc.constantFrom('/api/status/', '/api/extras/object-types/?limit=2&id=-1e99999', '/api/extras/object-types/5.json', '/api/extras/object-types',
      'http://inv.example.com/api/status/', 'http://evil.com/api/', 'https://x.example.com:8/api/?q', '*', '/metrics', '/healthz', '//api/', '/%zz'),
    fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 30 }).map((text) => '/' + text.replace(/[\s]/g, ''))
  )
  const request = fc.tuple(
    fc.constantFrom('GET', 'GET', 'OPTIONS', 'POST', 'DELETE', 'PRI', 'G\x00T'),
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
