import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { STOPPED_AT_ONCE } from '../../lib/process/stopping.ts'
import { fetch } from '../helpers/http.ts'
import { childEnv, logged, run, start, TYPESCRIPT, workerPids } from '../helpers/process.ts'
import { until } from '../helpers/wait.ts'

const PRIMARY = new URL('../fixtures/supervise.ts', import.meta.url).pathname

t.test('a signal while the workers stop after a failed start changes nothing: one stop, exit 1', async (t) => {
  const primary = spawn(process.execPath, [...TYPESCRIPT, PRIMARY], { env: childEnv(), stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  primary.stdout.on('data', (chunk) => { output += chunk })
  const exited = once(primary, 'exit')
  await until('the failed start', () => output.includes('"msg":"stopping all workers"'))
  primary.kill('SIGTERM')
  primary.kill('SIGINT')
  const [code] = await exited
  t.equal(code, 1, 'the failed start decides the exit code')
  t.match(output, '"msg":"SIGTERM: closing all workers; already stopping"')
  t.match(output, '"msg":"SIGINT: closing all workers; already stopping"')
  t.notMatch(output, 'killed (exit code 1)', 'no second kill timer fired')
  t.match(output.trim().split('\n').at(-1), '"msg":"stopped: a worker failed to start (exit code 1)"', 'the last line says how it ended')
})
t.test('WORKERS=2: two processes share the port, a dead one is replaced, SIGTERM drains all', async (t) => {
  const server = await start(t, { WORKERS: '2', MAX_PAGE_SIZE: '10', PAGINATE_COUNT: '50' })
  const [first, second] = await workerPids(server, 2)
  t.not(first, server.child.pid)
  await logged(server, '"msg":"serving"')
  const serving = JSON.parse(server.output().split('\n').find((line) => line.includes('"msg":"serving"'))!)
  t.match(serving, { pid: server.child.pid, workers: 2, port: server.port, host: '127.0.0.1', version: /^\d+\.\d+\.\d+/ }, 'one serving line, the primary\'s, with the settings in effect')
  t.same([...serving.pids].sort(), [first, second].sort(), 'and the workers that serve')
  process.kill(first!, 'SIGKILL')
  const [, , replacement] = await workerPids(server, 3)
  t.doesNotThrow(() => process.kill(replacement!, 0), `a new worker runs: ${replacement}`)
  t.throws(() => process.kill(first!, 0), { code: 'ESRCH' }, `the killed one is gone: ${first}`)
  t.match(server.output(), `"worker":${first},"code":null,"signal":"SIGKILL","msg":"a worker died; starting another"`)
  t.equal(server.output().split('"level":40,').length - 1, 1, 'one warning, by the primary')
  t.match(server.output(), '"msg":"MAX_PAGE_SIZE=10 is below PAGINATE_COUNT=50: pages of up to 50 items are served, as the reference does"')
  for (let i = 0; i < 20; i++) t.equal((await fetch(server.port, '/api/status/')).status, 200)
  t.equal(server.output().split('"msg":"serving"').length - 1, 1, 'a replacement adds no serving line')

  server.child.kill('SIGTERM')
  const { code, output } = await server.exited
  t.equal(code, 0)
  t.match(output, '"msg":"SIGTERM: closing all workers"')
  for (const pid of [second!, replacement!]) t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} is gone`)
})

t.test('WORKERS=2, PORT=0: the first worker is given a port no socket holds, the second binds it once the first listens', async (t) => {
  const server = await start(t, { WORKERS: '2' })
  const [first, second] = await workerPids(server, 2)
  await logged(server, '"msg":"serving"')
  const lines = server.output().split('\n')
  const listening = (pid: number) => lines.findIndex((line) => line.startsWith('{"level":30,"time":') && line.includes(`"pid":${pid},`) &&
    line.endsWith(`"msg":"Server listening at http://127.0.0.1:${server.port}"}`))
  t.ok(listening(first!) > 0 && listening(second!) > 0, `both listen on the port the service says it serves on: ${server.port}`)
  // The primary forks the second on the first's word that it listens, which it sends after its log line.
  const started = lines.findIndex((line) => line.includes(`"pid":${second},`))
  t.ok(started > listening(first!), 'the second worker says nothing before the first listens')
})

t.test('WORKERS=2: a port already taken stops the service before any worker starts, exit 1', async (t) => {
  const { port } = await start(t)
  const { code, output } = await run({ WORKERS: '2', PORT: String(port) }).exited
  t.equal(code, 1)
  t.equal(output, `PORT=${port} HOST=127.0.0.1: 127.0.0.1:${port} is already in use; set PORT to a free port, or stop what listens there\n`, 'one plain line, which names the settings')
  t.notMatch(output, 'starting workers')
})

t.test('WORKERS=2: a worker that does not stop on SIGTERM is killed after its shutdown budget, exit 1', async (t) => {
  // A budget of 0 + 1 s (the last-answer grace) + 1 ms; the primary waits 5 s more.
  const server = await start(t, { WORKERS: '2', DRAIN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: '1' })
  const pids = await workerPids(server, 2)
  // A stopped process cannot run its own shutdown timer: only the primary's can end it.
  process.kill(pids[0]!, 'SIGSTOP')
  server.child.kill('SIGTERM')
  const { code, output } = await server.exited
  t.equal(code, 1)
  t.match(output, '"msg":"stopped: workers still running past their shutdown budget were killed (exit code 1)"')
  // SIGKILL is asynchronous: give the system a moment to reap the worker.
  await until('the stopped worker to be gone', () => {
    try { process.kill(pids[0]!, 0) } catch { return true }
    return false
  })
})

t.test('SIGHUP re-reads the tokens file in every worker; a bad file keeps the tokens in use', async (t) => {
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, 'first-token\n')
  const server = await start(t, { WORKERS: '2', LOGIN_REQUIRED: 'true', API_TOKENS_FILE: file, ACCESS_LOG: 'true' })
  const reloads = (pattern: string) => server.output().split(pattern).length - 1
  const status = async (token: string) => (await fetch(server.port, '/api/status/', { headers: { authorization: `Token ${token}` } })).status
  const statuses = async (token: string) => new Set(await Promise.all(Array.from({ length: 8 }, () => status(token))))
  const sighup = async (pattern: string) => {
    const before = reloads(pattern)
    server.child.kill('SIGHUP')
    await logged(server, pattern, before + 2)
  }
  // Both workers must be listening before either is asked.
  await workerPids(server, 2)
  t.same(await statuses('first-token'), new Set([200]))

  writeFileSync(file, '["second-token"]')
  await sighup('"apiTokens":1,"msg":"API tokens reloaded"')
  t.same(await statuses('first-token'), new Set([403]), 'the old token is refused by every worker')
  t.same(await statuses('second-token'), new Set([200]))

  writeFileSync(file, '# nothing\n')
  await sighup(`"msg":"Bad tokens file ${file}: holds no token. The tokens in use stay"`)
  t.same(await statuses('second-token'), new Set([200]), 'a bad file changes nothing')
  t.notMatch(server.output(), /first-token|second-token/, 'tokens never appear in the logs, access log included')
})

t.test('WORKERS=2 METRICS=true: every scrape counts the answers of every worker', async (t) => {
  const server = await start(t, { WORKERS: '2', METRICS: 'true' })
  await workerPids(server, 2)
  // A new connection for each request: node:cluster hands connections to the workers in turn.
  const agent = new Agent({ keepAlive: false })
  for (let i = 0; i < 100; i++) await fetch(server.port, '/api/status/', { agent })
  const counts: string[] = []
  for (let i = 0; i < 6; i++) {
    const text = (await fetch(server.port, '/metrics', { agent })).body
    counts.push(/^http_requests_total\{route="\/api\/status\/",method="GET",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 'none')
    t.match(text, /^inventory_profile_generation 1$/m, 'a gauge the workers share is not added up')
    t.match(text, /^inventory_ready 1$/m, 'nor readiness')
    t.match(text, /^inventory_build_info\{version="[^"]+",service_version="4\.3\.7",node_version="v[^"]+"\} 1$/m, 'nor the build info')
  }
  t.same(counts, Array(6).fill('100'), 'each of 6 scrapes reports all 100 answers, whichever worker it reached')
})

t.test('WORKERS=2: Ctrl-C in a terminal (SIGINT to the whole process group) stops the service once, exit 0', async (t) => {
  const server = await start(t, { WORKERS: '2' }, { group: true })
  await workerPids(server, 2)
  process.kill(-server.child.pid!, 'SIGINT')
  const { code, output } = await server.exited
  t.equal(code, 0)
  const notice = '"msg":"SIGINT: closing all workers: stopping in 1 s (the drain delay, then the last answers; ' +
    'up to 11 s while requests are still running); press Ctrl-C again to stop at once"'
  t.equal(output.split(notice).length - 1, 1, 'the primary stops once, and says how long it takes')
  t.notMatch(output, 'second Ctrl-C', 'the workers\' copies of the signal change nothing')
  t.equal(output.split('"msg":"draining"').length - 1, 2, 'each worker drains once')
})

t.test('WORKERS=2: a second Ctrl-C stops the primary and its workers at once, exit 130', async (t) => {
  const server = await start(t, { WORKERS: '2', DRAIN_DELAY_MS: '10000' }, { group: true })
  const pids = await workerPids(server, 2)
  process.kill(-server.child.pid!, 'SIGINT')
  await logged(server, '"msg":"draining"', 2)
  await sleep(500)
  process.kill(-server.child.pid!, 'SIGINT')
  const { code, output } = await server.exited
  t.equal(code, STOPPED_AT_ONCE)
  t.match(output, '"msg":"second Ctrl-C: stopping at once"')
  await until('the workers to be gone', () => pids.every((pid) => {
    try { process.kill(pid, 0) } catch { return true }
    return false
  }))
})
