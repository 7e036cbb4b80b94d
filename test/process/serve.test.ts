import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { readFileSync, writeFileSync } from 'node:fs'
import { fetch, raw } from '../helpers/http.ts'
import { childEnv, command, run, start, TYPESCRIPT } from '../helpers/process.ts'
import { until } from '../helpers/wait.ts'

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

t.test('listening on every IPv4 address, the service logs each address of this machine, its own first', async (t) => {
  const { port, output } = await start(t, { HOST: '0.0.0.0' })
  const addresses = Object.values(networkInterfaces()).flat().filter((nic) => nic!.family === 'IPv4')
  const listening = () => [...output().matchAll(/"msg":"Server listening at (\S+)"/g)].map((match) => match[1])
  // The lines come one after another: on a busy machine the test may read before the last.
  await until('a line for each address', () => listening().length >= addresses.length)
  const logged = listening()
  t.same(logged.toSorted(), addresses.map((nic) => `http://${nic!.address}:${port}`).toSorted())
  t.ok(addresses.find((nic) => nic!.address === new URL(logged[0]!).hostname)!.internal, 'the machine\'s own address first')
  t.equal((await get(port, '/readyz')).body, '{"status":"ready"}')
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

t.test('SIGTERM: /readyz and the readiness series turn at once, the API serves through the drain delay, then exit 0', async (t) => {
  const server = await start(t, { DRAIN_DELAY_MS: '3000', METRICS: 'true' })
  const ready = await get(server.port, '/readyz')
  t.same([ready.status, ready.body], [200, '{"status":"ready"}'])
  t.match((await get(server.port, '/metrics')).body, /^inventory_ready 1$/m)
  const signalled = Date.now()
  server.child.kill('SIGTERM')
  await until('/readyz to turn 503', async () => (await get(server.port, '/readyz')).status === 503)
  const draining = await get(server.port, '/readyz')
  t.same([draining.status, draining.body], [503, '{"status":"draining"}'])
  t.match((await get(server.port, '/metrics')).body, /^inventory_ready 0$/m, 'a scrape sees the process draining')
  const api = await get(server.port, '/api/status/')
  t.same([api.status, api.headers.connection], [200, 'keep-alive'], 'the API still answers, new connections included, and keeps them: the drain delay')
  const { code, output } = await server.exited
  t.equal(code, 0)
  t.ok(Date.now() - signalled >= 3000 + 1000, 'after the drain delay and the last-answer grace')
  t.match(output, '"signal":"SIGTERM","drainDelayMs":3000,"msg":"draining"')
  t.match(output, '"msg":"closing"')
  t.match(output, '"exitCode":0,"msg":"stopped: every request answered (exit code 0)"}\n', 'a line says it stopped, and how')
})

t.test('SIGTERM: what is still open after SHUTDOWN_TIMEOUT_MS is cut, exit 1', async (t) => {
  const server = await start(t, { SHUTDOWN_TIMEOUT_MS: '300' })
  // Half a request: the server has begun reading it, so the connection is not idle.
  const stuck = connect(server.port, '127.0.0.1')
  stuck.on('error', () => {})
  t.teardown(() => stuck.destroy())
  await once(stuck, 'connect')
  stuck.write('GET /api/status/ HTTP/1.1\r\nHost: a.test\r\n')
  // Its bytes came before this request's connection: once this is answered, they have been read.
  await fetch(server.port, '/healthz')
  const signalled = Date.now()
  server.child.kill('SIGTERM')
  const { code, output } = await server.exited
  t.equal(code, 1)
  t.match(output, '"exitCode":1,"shutdownTimeoutMs":300,"msg":"stopped: requests were still running when SHUTDOWN_TIMEOUT_MS (300 ms) was up, after the drain delay and the last answers; they were cut (exit code 1)"}')
  t.notMatch(output, 'killed by timeout')
  t.ok(Date.now() - signalled >= 1300, 'after the grace and the shutdown timeout')
})

t.test('bad configuration (exit 2) or a bad profile (exit 1) stops start-up with one plain line on stderr, nothing on stdout', async (t) => {
  t.same(await command([], { PAGINATE_COUNT: 'many' }), { code: 2, stdout: '', stderr: 'PAGINATE_COUNT must be a whole number from 1 up; got "many"\n' })
  const file = join(t.testdir(), 'profile.json')
  writeFileSync(file, '{"status":{}}')
  t.same(await command([], { PROFILE: file }), { code: 1, stdout: '', stderr: `Bad profile ${file}: /objectTypes is missing; it must be a list of object types\n` })
})

t.test('version and --version print the version; start-up logs it with the settings in effect', async (t) => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  for (const arg of ['version', '--version']) t.same(await command([arg]), { code: 0, stdout: `${version}\n`, stderr: '' }, arg)
  const server = await start(t, { ALLOWED_HOSTS: 'a.test,.b.test', CACHE_MAX_MB: '8', MAX_CONNECTIONS: '300', PORTT: '1' })
  await until('the start-up line', () => server.output().includes('"msg":"serving"'))
  const lines = server.output().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))
  t.equal(lines.find((line) => line.level === 40)?.msg, 'PORTT is not a setting of this service and is ignored: did you mean PORT?')
  t.match(lines.find((line) => line.msg === 'serving'), {
    version, port: server.port, host: '127.0.0.1', workers: 1, cacheMiB: 8, maxConnections: 300, allowedHosts: ['a.test', '.b.test'], loginRequired: false, apiTokens: 0, generation: 1,
  })
})

t.test('a Node older than 22.12 is refused at once with one line, by the service and by the test command', async (t) => {
  const older = `--import=${new URL('../fixtures/node-22.11.mjs', import.meta.url).pathname}`
  const { code, output } = await run({ NODE_OPTIONS: older }).exited
  t.equal(code, 1)
  t.equal(output, 'inventory-status-api needs Node.js 22.12 or later; this is Node.js 22.11.0\n')
  const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  t.match(scripts.test, /^node lib\/process\/supported-node\.mjs && /, 'npm test checks first')
})

t.test('a HOST the service cannot listen on is a configuration error', async (t) => {
  for (const host of ['no-such-host.invalid', '192.0.2.1']) {
    const { code, output } = await run({ HOST: host }).exited
    t.equal(code, 2, host)
    t.match(output.split('\n').at(-2), new RegExp(`^HOST must be an address or host name of this machine; got "${host.replaceAll('.', '\\.')}" \\(`), `${host}: the last line, plain`)
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
  const healthcheck = async (env: NodeJS.ProcessEnv) => {
    const child = spawn(process.execPath, [...TYPESCRIPT, new URL('../../lib/process/healthcheck.ts', import.meta.url).pathname], {
      env: childEnv(env),
      stdio: ['ignore', 'inherit', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => { stderr += chunk })
    const [code] = await once(child, 'close')
    return code === 0 ? 0 : { code, stderr }
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
  t.same(await healthcheck({ PORT: String((unwell.address() as AddressInfo).port) }), { code: 1, stderr: '' }, 'a 503 is unhealthy')
  t.same(await healthcheck({ PORT: '1', HOST: '127.0.0.1' }), { code: 1, stderr: 'healthcheck failed: connect ECONNREFUSED 127.0.0.1:1\n' }, 'nothing listening')
  t.same(await healthcheck({ PORT: 'abc' }), { code: 1, stderr: 'healthcheck failed: PORT must be a whole number from 0 to 65535; got "abc"\n' })
})
