import t from 'tap'
import { needs } from '../helpers/programs.ts'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { FastifyInstance } from 'fastify'
import { loadConfig } from '../../lib/config.ts'
import { Catalog } from '../../lib/inventory/catalog.ts'
import { pollRqWorkers } from '../../lib/inventory/rq-workers.ts'
import { build, DEFAULT_PROFILE, get } from '../helpers/build.ts'
import { fetch, freePort } from '../helpers/http.ts'
import { brokenRedis, ENDLESS } from '../helpers/broken-redis.ts'
import { redisFor, startRedis, stopRedis } from '../helpers/redis.ts'
import { logged, start } from '../helpers/process.ts'
import { until } from '../helpers/wait.ts'

/** A logger whose messages are kept, in order. */
function logLines () {
  const lines: string[] = []
  const logger = pino(new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(chunk).msg); done() } }))
  return { lines, logger }
}

async function statusShows (app: FastifyInstance, expected: number): Promise<void> {
  await until(`rq-workers-running ${expected}`, async () => JSON.parse((await get(app, '/api/status/')).body)['rq-workers-running'] === expected)
}

t.test('the RQ worker count comes from Redis, survives an outage and recovers', { skip: needs('redis-server') }, async (t) => {
  const started = await redisFor(t)
  const { port, admin } = started
  let redis = started.redis
  t.teardown(() => { redis.kill() })
  const { lines, logger } = logLines()
  const { app, service: { served } } = await build(t)
  const polls: Array<number | undefined> = []
  const poll = pollRqWorkers(`redis://127.0.0.1:${port}`, 50, logger, {
    changed: (count) => served.setWorkerCount(count),
    polled: (count) => polls.push(count),
  })
  t.teardown(poll.close)

  t.equal(JSON.parse((await get(app, '/api/status/')).body)['rq-workers-running'], 1, "the profile's count until Redis answers")
  await statusShows(app, 0)
  await admin.sadd('rq:workers', 'rq:worker:a', 'rq:worker:b', 'rq:worker:c')
  await statusShows(app, 3)
  await admin.srem('rq:workers', 'rq:worker:b')
  await statusShows(app, 2)
  t.pass('workers registered and removed show up in the next polls')

  // Counted from the outage on: on a busy machine a poll before it may have gone unanswered in its time.
  const before = lines.length
  const since = (line: string) => lines.slice(before).filter((said) => said.startsWith(line))
  const unreachable = `Redis at 127.0.0.1:${port} unreachable`
  await stopRedis(redis)
  await until('the outage logged', () => since(unreachable).length > 0)
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(since(unreachable).length, 1, 'the outage is logged once')
  t.match(since(unreachable)[0], 'serving the last worker count, 2')
  await statusShows(app, 2)

  redis = await startRedis(port)
  await admin.sadd('rq:workers', 'rq:worker:d')
  await statusShows(app, 1)
  t.equal(since('Redis reachable again').length, 1, 'and the recovery')
  t.ok(polls.includes(undefined) && polls.at(-1) === 1, 'every poll is reported, failed ones as undefined')

  const etag = (await get(app, '/api/status/')).headers.etag
  const reloaded = served.swap(new Catalog(DEFAULT_PROFILE))
  t.equal(reloaded.catalog.profile.status['rq-workers-running'], 1, 'a reloaded profile is served with the live count')
  t.equal((await get(app, '/api/status/')).headers.etag, etag)
})

t.test('Redis down from the start: logged once, the profile\'s count is served', async (t) => {
  const { lines, logger } = logLines()
  const port = await freePort()
  const poll = pollRqWorkers(`redis://:secret@127.0.0.1:${port}`, 50, logger, { changed: () => t.fail('no count') })
  t.teardown(poll.close)
  await until('a log line', () => lines.length > 0)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(lines.length, 1)
  t.equal(lines[0], `Redis at 127.0.0.1:${port} unreachable (connect ECONNREFUSED 127.0.0.1:${port}); serving the last worker count, the profile's`,
    'refused connections said as such, with the address')
})

t.test('a Redis that answers with an error: its reply is logged, the last count stays', { skip: needs('redis-server') }, async (t) => {
  const { port, admin } = await redisFor(t)
  await admin.set('rq:workers', 'not a set')
  const { lines, logger } = logLines()
  const poll = pollRqWorkers(`redis://127.0.0.1:${port}`, 50, logger, { changed: () => t.fail('no count') })
  t.teardown(poll.close)
  await until('a log line', () => lines.length > 0)
  t.match(lines[0], new RegExp(`^Redis at 127\\.0\\.0\\.1:${port} unreachable \\(WRONGTYPE .+\\); serving the last worker count, the profile's$`))
})

t.test('REDIS_URL must be a redis URL; the password never shows in the message', async (t) => {
  t.equal(loadConfig({ REDIS_URL: 'redis://:secret@redis.internal:6379/2' }).redisUrl, 'redis://:secret@redis.internal:6379/2')
  t.equal(loadConfig({}).rqPollIntervalMs, 2000)
  for (const url of ['http://user:secret@redis.internal', 'redis://user:secret@']) {
    t.throws(() => loadConfig({ REDIS_URL: url }), { message: /^REDIS_URL must be redis:\/\/.*; got "[a-z]+:\/\/user:\*\*\*@/ }, url)
  }
})

t.test('REDIS_URL and METRICS: the live RQ worker count, the poll and reloads in /metrics', { skip: needs('redis-server') }, async (t) => {
  const { port: redisPort, admin } = await redisFor(t)
  await admin.sadd('rq:workers', 'rq:worker:1', 'rq:worker:2', 'rq:worker:3', 'rq:worker:4')
  const server = await start(t, { REDIS_URL: `redis://127.0.0.1:${redisPort}`, RQ_POLL_INTERVAL_MS: '50', METRICS: 'true' })
  const workers = async () => JSON.parse((await fetch(server.port, '/api/status/')).body)['rq-workers-running']
  await until('rq-workers-running 4', async () => await workers() === 4)
  server.child.kill('SIGHUP')
  await logged(server, '"generation":2')
  const metrics = (await fetch(server.port, '/metrics')).body
  t.match(metrics, /^inventory_rq_workers 4$/m)
  t.match(metrics, /^inventory_redis_up 1$/m)
  t.match(metrics, /^inventory_profile_generation 2$/m)
  t.match(metrics, /^inventory_profile_load_seconds 0\.\d+$/m)
  t.match(metrics, /^http_requests_total\{route="\/api\/status\/",method="GET",status="200"\} \d+$/m)
  t.equal(await workers(), 4, 'the reloaded profile with the live count')
  server.child.kill('SIGTERM')
  t.equal((await server.exited).code, 0, 'SIGTERM closes the Redis connection too')
})

t.test('a Redis that answers with anything but a count: logged once, the last good count stays', async (t) => {
  const REPLIES: Array<[string, string]> = [[':-5\r\n', 'number -5'], ['_\r\n', 'null null'], ['$5\r\nhello\r\n', 'string "hello"'], [':100001\r\n', 'number 100001'], ['*1\r\n:3\r\n', 'object [3]'], [',1.5\r\n', 'string "1.5"'], [`$50\r\n${'y'.repeat(50)}\r\n`, `string "${'y'.repeat(39)}…`]]
  for (const [bad, shown] of REPLIES) {
    const { lines, logger } = logLines()
    const { url, seen } = await brokenRedis(t, (poll) => poll <= 2 ? ':7\r\n' : bad)
    const counts: number[] = []
    const polls: Array<number | undefined> = []
    const poll = pollRqWorkers(url, 30, logger, { changed: (count) => counts.push(count), polled: (count) => polls.push(count) })
    await until('ten polls', () => seen.polls >= 10)
    await poll.close()
    t.same(counts, [7], `${shown}: only the good count is served`)
    t.same(lines.filter((line) => line.includes('answered SCARD')), [`Redis at ${url.slice(8)} answered SCARD rq:workers with ${shown}, not a count of workers from 0 to 100000; serving the last worker count, 7`], `${shown}: logged once`)
    t.ok(polls.slice(3).every((count) => count === undefined), `${shown}: the polls report no count`)
  }
})

t.test('a Redis that answers a poll with an error: its text is logged once, the last good count stays', async (t) => {
  const { lines, logger } = logLines()
  const { url, seen } = await brokenRedis(t, (poll) => poll <= 1 ? ':2\r\n' : '-WRONGTYPE Operation against a key holding the wrong kind of value\r\n')
  const counts: number[] = []
  const poll = pollRqWorkers(url, 30, logger, { changed: (count) => counts.push(count) })
  await until('five polls', () => seen.polls >= 5)
  await poll.close()
  t.same(counts, [2])
  t.same(lines, [`Redis at ${url.slice(8)} unreachable (WRONGTYPE Operation against a key holding the wrong kind of value); serving the last worker count, 2`])
})

t.test('a Redis whose reply is too large: the connection is closed before it is held, and opened again', async (t) => {
  const { lines, logger } = logLines()
  const { url, seen } = await brokenRedis(t, () => ENDLESS)
  const poll = pollRqWorkers(url, 30, logger, { changed: () => t.fail('no count') })
  t.teardown(poll.close)
  await until('the third connection', () => seen.connections >= 3)
  await poll.close()
  t.match(lines[0], `Redis at ${url.slice(8)} unreachable (a reply of more than 65536 bytes); serving the last worker count, the profile's`)
  t.equal(lines.length, 1, 'logged once')
  // What the kernel's buffers take on both ends, and no more: the reply is never read whole.
  t.ok(seen.mostWritten < 32 * 1024 * 1024, `a connection closed after ${(seen.mostWritten / 2 ** 20).toFixed(1)} MiB of a 1 GiB reply`)
})

t.test('a Redis that stops answering is down: logged once, reported, connected to again, and read again once it answers', async (t) => {
  const { lines, logger } = logLines()
  // Two answers, then two polls left unanswered, each on a connection of its own, then answers again.
  const { url, seen } = await brokenRedis(t, (poll) => poll <= 2 ? ':4\r\n' : poll <= 4 ? undefined : ':5\r\n')
  const polls: Array<number | undefined> = []
  const counts: number[] = []
  const poll = pollRqWorkers(url, 100, logger, { changed: (count) => counts.push(count), polled: (count) => polls.push(count) })
  t.teardown(poll.close)
  await until('the count read again', () => counts.includes(5))
  t.same(counts, [4, 5], 'the last count stayed while Redis said nothing')
  t.same(lines, [`Redis at ${url.slice(8)} unreachable (no answer within 1000 ms); serving the last worker count, 4`, 'Redis reachable again'], 'the silence logged once, and the recovery')
  t.ok(seen.connections >= 3, `each silence closed its connection: ${seen.connections} connections`)
  t.ok(polls.includes(undefined), 'the polls reported Redis down meanwhile')
})
