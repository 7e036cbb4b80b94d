import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { Agent, createServer } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { DEFAULT_PROFILE } from './helper.ts'
import { fetch, raw } from './http.ts'
import { logged, run, start, TYPESCRIPT, workerPids } from './service.ts'
import { until } from './wait.ts'

const get = (port: number, path: string) => fetch(port, path)

t.test('a real listening server answers over keep-alive sockets', async (t) => {
  const { port } = await start(t)
  const page = await get(port, '/api/extras/object-types/?limit=1')
  t.equal(page.status, 200)
  t.match(page.headers, { 'content-type': 'application/json', vary: 'Accept', allow: 'GET, HEAD, OPTIONS', connection: 'keep-alive' })
  t.equal(page.body,
    `{"count":163,"next":"http://127.0.0.1:${port}/api/extras/object-types/?limit=1&offset=1","previous":null,` +
    `"results":[{"id":23,"url":"http://127.0.0.1:${port}/api/extras/object-types/23/","display":"Account | token","app_label":"account","model":"usertoken"}]}`)

  const head = await raw(port, 'HEAD /api/status/ HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 200 OK\r\n/)
  t.match(head, /\r\ncontent-length: 511\r\n/)
  t.ok(head.endsWith('\r\n\r\n'), 'no body after the headers')

  const http10 = await raw(port, 'GET /api/extras/object-types/23/ HTTP/1.0\r\n\r\n')
  t.match(http10, `"url":"http://127.0.0.1:${port}/api/extras/object-types/23/"`, 'no Host: the address the request reached')
})

t.test('on an IPv6 listener, a request without Host gets the bracketed address', async (t) => {
  const { port } = await start(t, { HOST: '::1' })
  const http10 = await raw(port, 'GET /api/extras/object-types/23/ HTTP/1.0\r\n\r\n', '::1')
  t.match(http10, `"url":"http://[::1]:${port}/api/extras/object-types/23/"`)
})

t.test('requests Node cannot parse get JSON errors', async (t) => {
  const { port } = await start(t)
  const garbage = await raw(port, 'GARBAGE\r\n\r\n')
  t.match(garbage, /^HTTP\/1\.1 400 Bad Request\r\nContent-Type: application\/json\r\nVary: Accept\r\n/)
  t.ok(garbage.endsWith('\r\n\r\n{"detail":"Bad request."}'))
  const rawUtf8 = await raw(port, 'GET /api/extras/object-types/?x=\xc3\xa9 HTTP/1.1\r\nHost: a.test\r\n\r\n')
  t.ok(rawUtf8.endsWith('\r\n\r\n{"detail":"Bad request."}'), 'raw non-ASCII bytes in the target')
  const huge = await raw(port, `GET /api/status/ HTTP/1.1\r\nHost: a.test\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`)
  t.match(huge, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/)
  t.ok(huge.endsWith('{"detail":"Request header fields too large."}'))
  t.equal((await get(port, '/api/status/')).status, 200, 'and the server goes on serving')
})

t.test('SIGTERM: /readyz turns 503 at once, the API serves through the drain delay, then exit 0', async (t) => {
  const server = await start(t, { DRAIN_DELAY_MS: '400' })
  const ready = await get(server.port, '/readyz')
  t.same([ready.status, ready.body], [200, '{"status":"ready"}'])
  const signalled = Date.now()
  server.child.kill('SIGTERM')
  await until('/readyz to turn 503', async () => (await get(server.port, '/readyz')).status === 503)
  const draining = await get(server.port, '/readyz')
  t.same([draining.status, draining.body], [503, '{"status":"draining"}'])
  t.ok(Date.now() - signalled < 400, 'within the drain delay')
  t.equal((await get(server.port, '/api/status/')).status, 200, 'the API still answers, new connections included')
  const { code, output } = await server.exited
  t.equal(code, 0)
  t.ok(Date.now() - signalled >= 400 + 1000, 'after the drain delay and the last-answer grace')
  t.match(output, '"signal":"SIGTERM","drainDelayMs":400,"msg":"draining"')
  t.match(output, '"msg":"closing"')
})

t.test('SIGTERM: what is still open after SHUTDOWN_TIMEOUT_MS is cut, exit 1', async (t) => {
  const server = await start(t, { SHUTDOWN_TIMEOUT_MS: '300' })
  // Half a request: the server has begun reading it, so the connection is not idle.
  const stuck = connect(server.port, '127.0.0.1', () => stuck.write('GET /api/status/ HTTP/1.1\r\nHost: a.test\r\n'))
  stuck.on('error', () => {})
  t.teardown(() => stuck.destroy())
  await new Promise((resolve) => setTimeout(resolve, 200))
  const signalled = Date.now()
  server.child.kill('SIGTERM')
  const { code, output } = await server.exited
  t.equal(code, 1)
  t.match(output, 'killed by timeout (1300ms)')
  t.ok(Date.now() - signalled >= 1300, 'after the grace and the shutdown timeout')
})

t.test('bad configuration or a bad profile stops start-up with a message and a non-zero exit', async (t) => {
  const config = await run({ PAGINATE_COUNT: 'many' }).exited
  t.equal(config.code, 1)
  t.match(config.output, 'Bad configuration PAGINATE_COUNT=\\"many\\": Expected string to match \'^[0-9]+$\' (default page size, at least 1)')
  t.notMatch(config.output, 'listening')

  const file = join(t.testdir(), 'profile.json')
  writeFileSync(file, '{"status":{}}')
  const profile = await run({ PROFILE: file }).exited
  t.equal(profile.code, 1)
  t.match(profile.output, `Bad profile ${file}: /objectTypes: Expected required property`)
  t.notMatch(profile.output, 'listening')
})

t.test('a Node older than 22.12 is refused at once with one line, by the service and by the test command', async (t) => {
  const older = `--import=${new URL('./fixtures/node-22.11.mjs', import.meta.url).pathname}`
  const { code, output } = await run({ NODE_OPTIONS: [process.env.NODE_OPTIONS, older].filter(Boolean).join(' ') }).exited
  t.equal(code, 1)
  t.equal(output, 'inventory-status-api needs Node.js 22.12 or later; this is Node.js 22.11.0\n')
  const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  t.match(scripts.test, /^node lib\/process\/supported-node\.mjs && /, 'npm test checks first')
})

t.test('a HOST the service cannot listen on is a configuration error', async (t) => {
  for (const host of ['no-such-host.invalid', '192.0.2.1']) {
    const { code, output } = await run({ HOST: host }).exited
    t.equal(code, 1, host)
    t.match(output, `"msg":"Bad configuration HOST=\\"${host}\\": cannot listen there (`, host)
    t.notMatch(output, 'listening', host)
  }
})

t.test('PROFILE serves another profile', async (t) => {
  const file = join(t.testdir(), 'profile.json')
  writeFileSync(file, JSON.stringify({
    status: {
      'framework-version': '5.2',
      'installed-apps': { django_rq: '3.0' },
      plugins: { my_plugin: '1.0' },
      'rq-workers-running': 4,
      'runtime-version': '3.12',
      'service-version': '4.4.0',
    },
    objectTypes: [{ id: 1, app_label: 'my_plugin', model: 'widget', display: 'widget' }],
  }))
  const { port } = await start(t, { PROFILE: file })
  t.equal((await get(port, '/api/status/')).body,
    '{"framework-version":"5.2","installed-apps":{"django_rq":"3.0","my_plugin":"1.0"},"plugins":{"my_plugin":"1.0"},' +
    '"rq-workers-running":4,"runtime-version":"3.12","service-version":"4.4.0"}')
  t.equal(JSON.parse((await get(port, '/api/extras/object-types/')).body).count, 1)
})

t.test('the container healthcheck passes against a running service, whatever ALLOWED_HOSTS says', async (t) => {
  const healthcheck = (env: NodeJS.ProcessEnv) => {
    const child = spawn(process.execPath, [...TYPESCRIPT, new URL('../lib/process/healthcheck.ts', import.meta.url).pathname], {
      env: { ...process.env, ...env },
      stdio: 'inherit',
    })
    return once(child, 'exit').then(([code]) => code)
  }
  const { port } = await start(t, { ALLOWED_HOSTS: '.inventory.test' })
  t.equal(await healthcheck({ PORT: String(port), HOST: '127.0.0.1' }), 0)
  t.equal(await healthcheck({ PORT: String(port), HOST: '0.0.0.0' }), 0, 'listening everywhere: asked on loopback')
  const ipv6 = await start(t, { HOST: '::1' })
  t.equal(await healthcheck({ PORT: String(ipv6.port), HOST: '::1' }), 0, 'the address the service listens on, IPv6 too')
  const everywhere6 = await start(t, { HOST: '::' })
  t.equal(await healthcheck({ PORT: String(everywhere6.port), HOST: '::' }), 0)
  const unwell = createServer((_request, response) => response.writeHead(503).end())
  await new Promise<void>((resolve) => unwell.listen(0, '127.0.0.1', resolve))
  t.teardown(() => unwell.close())
  t.equal(await healthcheck({ PORT: String((unwell.address() as AddressInfo).port) }), 1, 'a 503 is unhealthy')
  t.equal(await healthcheck({ PORT: '1' }), 1, 'nothing listening')
})

t.test('WORKERS=2: two processes share the port, a dead one is replaced, SIGTERM drains all', async (t) => {
  const server = await start(t, { WORKERS: '2' })
  const [first, second] = await workerPids(server, 2)
  t.not(first, server.child.pid)
  process.kill(first!, 'SIGKILL')
  const [, , replacement] = await workerPids(server, 3)
  t.ok(replacement !== undefined && ![first, second].includes(replacement), 'a new worker')
  t.match(server.output(), `"worker":${first},"code":null,"signal":"SIGKILL","msg":"a worker died; starting another"`)
  for (let i = 0; i < 20; i++) t.equal((await get(server.port, '/api/status/')).status, 200)

  server.child.kill('SIGTERM')
  const { code, output } = await server.exited
  t.equal(code, 0)
  t.match(output, '"msg":"SIGTERM: closing all workers"')
  for (const pid of [second!, replacement!]) t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} is gone`)
})

t.test('WORKERS=2: a port already taken stops the service before any worker starts, exit 1', async (t) => {
  const { port } = await start(t)
  const { code, output } = await run({ WORKERS: '2', PORT: String(port) }).exited
  t.equal(code, 1)
  t.match(output, '"level":60,')
  t.match(output, `"msg":"listen EADDRINUSE: address already in use 127.0.0.1:${port}"`)
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
  t.match(output, '"msg":"workers did not finish in time; killing them"')
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
  await sighup(`"msg":"Bad tokens file ${file}: holds no token; the tokens in use stay"`)
  t.same(await statuses('second-token'), new Set([200]), 'a bad file changes nothing')
  t.notMatch(server.output(), /first-token|second-token/, 'tokens never appear in the logs, access log included')
})

t.test('SIGHUP reloads the profile; a bad profile is logged and the one being served stays', async (t) => {
  const file = join(t.testdir(), 'profile.json')
  const profile = (version: string) => JSON.stringify({ ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': version } })
  writeFileSync(file, profile('1.0.0'))
  const server = await start(t, { PROFILE: file })
  const version = async () => JSON.parse((await get(server.port, '/api/status/')).body)['service-version']
  t.equal(await version(), '1.0.0')
  writeFileSync(file, profile('2.0.0'))
  server.child.kill('SIGHUP')
  await logged(server, '"generation":2,"objectTypes":163')
  t.equal(await version(), '2.0.0')
  writeFileSync(file, '{"status":{}}')
  // Requests keep coming while the bad profile is read and refused.
  const during = Promise.all(Array.from({ length: 200 }, () => version()))
  server.child.kill('SIGHUP')
  await logged(server, `"msg":"Bad profile ${file}: /objectTypes: Expected required property; still serving generation 2"`)
  t.same(new Set(await during), new Set(['2.0.0']), 'every answer meanwhile from the profile in use')
  t.equal(await version(), '2.0.0', 'the bad profile is not served')
  t.match(server.output(), '"msg":"SIGHUP: reloading"')
})

t.test('PROFILE_WATCH=true: a changed or replaced profile file is reloaded', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'profile.json')
  const profile = (version: string) => JSON.stringify({ ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': version } })
  writeFileSync(file, profile('1.0.0'))
  const server = await start(t, { PROFILE: file, PROFILE_WATCH: 'true' })
  const versionBecomes = (expected: string) =>
    until(`service-version ${expected}`, async () => JSON.parse((await get(server.port, '/api/status/')).body)['service-version'] === expected)
  writeFileSync(file, profile('2.0.0'))
  await versionBecomes('2.0.0')
  // As deploy tools do: write a new file beside it, then rename it over the old one.
  writeFileSync(join(dir, 'next.json'), profile('3.0.0'))
  renameSync(join(dir, 'next.json'), file)
  await versionBecomes('3.0.0')
  writeFileSync(join(dir, 'unrelated.json'), '{}')
  writeFileSync(file, '[')
  await logged(server, `"msg":"Bad profile ${file}: is not valid JSON`)
  await versionBecomes('3.0.0')
  t.pass('each change served, a broken one refused')
})

t.test('PROFILE_WATCH=true: a ConfigMap updated as the kubelet does it is served within a second, twice; a broken one is refused', async (t) => {
  // The kubelet's layout: profile.json -> ..data/profile.json, ..data -> ..<timestamp>/.
  const dir = t.testdir()
  const version = (v: string) => JSON.stringify({ ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': v } })
  let generation = 0
  const update = (content: string) => {
    const previous = generation === 0 ? undefined : `..2026_11_23_00_00_0${generation}`
    const next = `..2026_11_23_00_00_0${++generation}`
    mkdirSync(join(dir, next))
    writeFileSync(join(dir, next, 'profile.json'), content)
    symlinkSync(next, join(dir, '..data_tmp'))
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'))
    if (previous !== undefined) rmSync(join(dir, previous), { recursive: true })
  }
  update(version('1.0.0'))
  symlinkSync('..data/profile.json', join(dir, 'profile.json'))
  const server = await start(t, { PROFILE: join(dir, 'profile.json'), PROFILE_WATCH: 'true' })
  const served = async () => JSON.parse((await get(server.port, '/api/status/')).body)['service-version']
  t.equal(await served(), '1.0.0')
  for (const v of ['2.0.0', '3.0.0']) {
    update(version(v))
    await until(`service-version ${v} within a second`, async () => await served() === v, 1000)
  }
  update('{"status":')
  await logged(server, `"msg":"Bad profile ${join(dir, 'profile.json')}: is not valid JSON`)
  t.equal(await served(), '3.0.0', 'the broken one is refused, the one in use stays')
  writeFileSync(join(dir, 'unrelated.txt'), 'x')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(server.output().split('profile reloaded').length - 1, 2, 'another file in the folder reloads nothing')
})

t.test('PROFILE_WATCH=true: a profile that is a symlink to a file elsewhere is followed', async (t) => {
  const dir = t.testdir()
  const version = (v: string) => JSON.stringify({ ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': v } })
  mkdirSync(join(dir, 'elsewhere'))
  writeFileSync(join(dir, 'elsewhere', 'real.json'), version('1.0.0'))
  mkdirSync(join(dir, 'config'))
  symlinkSync(join(dir, 'elsewhere', 'real.json'), join(dir, 'config', 'profile.json'))
  const server = await start(t, { PROFILE: join(dir, 'config', 'profile.json'), PROFILE_WATCH: 'true' })
  const served = async () => JSON.parse((await get(server.port, '/api/status/')).body)['service-version']
  writeFileSync(join(dir, 'elsewhere', 'real.json'), version('2.0.0'))
  await until('the target edited in place', async () => await served() === '2.0.0', 1000)
  writeFileSync(join(dir, 'elsewhere', 'other.json'), version('3.0.0'))
  rmSync(join(dir, 'config', 'profile.json'))
  symlinkSync(join(dir, 'elsewhere', 'other.json'), join(dir, 'config', 'profile.json'))
  await until('the symlink pointed elsewhere', async () => await served() === '3.0.0', 1000)
  rmSync(join(dir, 'elsewhere', 'other.json'))
  await logged(server, `"msg":"Bad profile ${join(dir, 'config', 'profile.json')}: cannot be read`)
  t.equal(await served(), '3.0.0', 'a dangling symlink: the profile in use stays')
  writeFileSync(join(dir, 'elsewhere', 'other.json'), version('4.0.0'))
  await until('the target back', async () => await served() === '4.0.0', 1000)
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
  }
  t.same(counts, Array(6).fill('100'), 'each of 6 scrapes reports all 100 answers, whichever worker it reached')
})

t.test('WORKERS=2: Ctrl-C in a terminal (SIGINT to the whole process group) stops the service once, exit 0', async (t) => {
  const server = await start(t, { WORKERS: '2' }, { group: true })
  await workerPids(server, 2)
  process.kill(-server.child.pid!, 'SIGINT')
  const { code, output } = await server.exited
  t.equal(code, 0)
  t.equal(output.split('closing all workers"').length - 1, 1, 'the primary stops once; the workers\' copies of the signal change nothing')
  t.equal(output.split('"msg":"draining"').length - 1, 2, 'each worker drains once')
  t.match(output, '"msg":"SIGINT: closing all workers')
})
