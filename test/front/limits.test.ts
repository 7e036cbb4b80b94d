import t from 'tap'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { build } from '../helpers/build.ts'
import { raw as exchange } from '../helpers/http.ts'
import { DEADLINE_MS } from '../helpers/wait.ts'

const LIMITS = { HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '500', MAX_HEADER_SIZE: '2048' }

async function listening (t: Parameters<typeof build>[0]) {
  return (await build(t, { env: LIMITS, listen: true })).port
}

const errorAnswer = (status: string, detail: string) => {
  const body = `{"detail":"${detail}"}`
  return `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nVary: Accept\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`
}

t.test('a client that sends its headers byte by byte forever is cut off; others are served meanwhile', async (t) => {
  const { port } = await build(t, { env: { ...LIMITS, HEADERS_TIMEOUT_MS: '2000', REQUEST_TIMEOUT_MS: '2000' }, listen: true })
  const slow = connect(port, '127.0.0.1')
  let answer = ''
  slow.on('data', (chunk) => { answer += chunk })
  slow.on('error', () => {})
  slow.setTimeout(DEADLINE_MS, () => slow.destroy(new Error('the slow client was never cut off')))
  const started = Date.now()
  slow.write('GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\nX-Slow: ')
  const drip = setInterval(() => slow.write('a'), 20)
  const closed = new Promise<number>((resolve) => slow.on('close', () => resolve(Date.now() - started)))

  // Each other request on a connection of its own, one after another while the slow client drips.
  const others: string[] = []
  let meanwhile = 0
  while (!slow.closed) {
    others.push((await exchange(port, 'GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\nConnection: close\r\n\r\n')).slice(0, 15))
    if (!slow.closed) meanwhile++
  }
  clearInterval(drip)
  const after = await closed
  t.ok(after >= 2000, `cut off after ${after} ms, not before the headers timeout (2000 ms)`)
  t.equal(answer, errorAnswer('408 Request Timeout', 'Request timeout.'))
  t.ok(meanwhile >= 1, `${meanwhile} other requests answered while it was still connected`)
  t.same(new Set(others), new Set(['HTTP/1.1 200 OK']), `each of the ${others.length} served`)
})

t.test('oversized headers and URLs get a JSON 431, and the server goes on serving', async (t) => {
  const port = await listening(t)
  const tooLarge = errorAnswer('431 Request Header Fields Too Large', 'Request header fields too large.')
  t.equal(await exchange(port, `GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\nX-Big: ${'x'.repeat(3000)}\r\n\r\n`), tooLarge, 'a header')
  // Node counts the request line toward the same limit, so a URL past it is answered alike.
  t.equal(await exchange(port, `GET /api/extras/object-types/?q=${'x'.repeat(3000)} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`), tooLarge, 'a URL')
  const many = Array.from({ length: 500 }, (_, i) => `X-H${i}: v\r\n`).join('')
  t.equal(await exchange(port, `GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n${many}\r\n`), tooLarge, 'many small headers')
  t.match(await exchange(port, 'GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 200 OK\r\n/)
})

t.test('idle keep-alive connections are closed after KEEP_ALIVE_TIMEOUT_MS; every answer says so, a replay as well', async (t) => {
  const { port, replays } = await build(t, { env: { KEEP_ALIVE_TIMEOUT_MS: '300' }, listen: true })
  const socket = connect(port, '127.0.0.1')
  let text = ''
  let waiting: () => void = () => {}
  socket.on('data', (chunk) => {
    text += chunk
    waiting()
  })
  const answered = (count: number) => new Promise<void>((resolve) => {
    waiting = () => { if (text.split('HTTP/1.1 ').length > count && text.endsWith('}')) resolve() }
    waiting()
  })
  // The hang detector: 72 s, the default timeout, would be past it.
  socket.setTimeout(DEADLINE_MS, () => socket.destroy(new Error('the idle connection was never closed')))
  // Made by Fastify twice (the second is kept), then replayed.
  for (let i = 1; i <= 3; i++) {
    socket.write('GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n')
    await answered(i)
  }
  const started = Date.now()
  await once(socket, 'close')
  t.equal(replays!.stats.hits, 1, 'the third answer was a replay')
  const answers = text.split(/(?=HTTP\/1\.1 )/)
  t.equal(answers.length, 3)
  for (const answer of answers) t.match(answer, /^HTTP\/1\.1 200 OK\r\n[^]*\r\nConnection: keep-alive\r\nKeep-Alive: timeout=0\r\n\r\n\{"framework-version"[^]*\}$/)
  // The 300 ms advertised and the second node:http adds, so that the client closes first.
  const after = Date.now() - started
  t.ok(after >= 1300 - 50, `closed ${after} ms after the last answer`)
})

t.test('an answer slower than KEEP_ALIVE_TIMEOUT_MS is not cut, nor a connection busy for longer; each closes once idle', async (t) => {
  // A delay (a faults rule) keeps the answer past the idle timeout of 300 ms and Node's grace second.
  const faults = join(t.testdir(), 'faults.json')
  writeFileSync(faults, JSON.stringify({ rules: [{ path: '/api/status/', delay: { ms: 1800 } }] }))
  const { port } = await build(t, { env: { KEEP_ALIVE_TIMEOUT_MS: '300', FAULTS: faults }, listen: true })
  const socket = connect(port, '127.0.0.1')
  let answer = ''
  socket.on('data', (chunk) => { answer += chunk })
  socket.setTimeout(DEADLINE_MS, () => socket.destroy(new Error('the connection was never closed')))
  const started = Date.now()
  socket.write('GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n')
  await once(socket, 'close')
  t.match(answer, /^HTTP\/1\.1 200 OK\r\n[^]*\r\nKeep-Alive: timeout=0\r\n\r\n\{"framework-version"/, 'the delayed answer, whole')
  t.ok(Date.now() - started >= 1800 + 1300 - 50, `closed ${Date.now() - started} ms after the request, once idle after the answer`)

  // A request every 120 ms for 1.8 s on one connection: never inactive for the 1.3 s.
  const busy = connect(port, '127.0.0.1')
  busy.on('error', () => {})
  // Counted in all that was read: a status line may come split across two reads.
  let read = ''
  let answers = 0
  const answered = new Promise<void>((resolve) => busy.on('data', (chunk) => {
    read += chunk
    answers = read.split('HTTP/1.1 200 OK').length - 1
    if (answers === 15) resolve()
  }))
  for (let i = 0; i < 15 && !busy.closed; i++) {
    busy.write('GET /api/extras/object-types/?limit=1 HTTP/1.1\r\nHost: inventory.test\r\n\r\n')
    await new Promise((resolve) => setTimeout(resolve, 120))
  }
  let deadline: NodeJS.Timeout | undefined
  await Promise.race([answered, once(busy, 'close'), new Promise((resolve) => { deadline = setTimeout(resolve, DEADLINE_MS) })])
  clearTimeout(deadline)
  t.equal(answers, 15, 'every request answered on the one connection')
  t.notOk(busy.closed, 'still open')
  busy.destroy()
})
