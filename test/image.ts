import t, { type Test } from 'tap'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { IMAGE_ENV, IMAGE_NODE_FLAGS } from '../bench/image.ts'
import { exchange, fetch, freePort } from './helpers/http.ts'
import { reconnectingClients } from './helpers/reconnecting.ts'
import { until } from './helpers/wait.ts'

/**
 * The image as it ships, built from the Dockerfile by `.ci/image` (podman, as root: not part of
 * `npm test`; `npm run test:image` builds it and runs this). Each container runs on the host's
 * network, as a non-root user, on a read-only root filesystem, as deploy/kubernetes runs it.
 */
const IMAGE = process.env.IMAGE ?? 'inventory-status-api:ci'
const BASE = 'docker.io/library/node:26.10-slim'
const ROOT = new URL('..', import.meta.url).pathname
const CONTAINERS_CONF = join(ROOT, '.ci/containers.conf')
const run = promisify(execFile)
const podman = async (...args: string[]) =>
  (await run('podman', args, { env: { ...process.env, CONTAINERS_CONF }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 })).stdout.trim()

/** What both the container and `npm start` are asked, with one Host so that their links are the same. */
const REQUESTS = ['/api/status/', '/api/extras/object-types/?limit=5&offset=10', '/api/extras/object-types/112/', '/api/extras/object-types/?id=x']
  .map((path) => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`)

/** A container of the image serving on `port`; removed when the test ends. */
async function serve (t: Test, port: number, env: Record<string, string> = {}) {
  const started = Date.now()
  const settings = Object.entries({ HOST: '127.0.0.1', PORT: String(port), ...env }).flatMap(([name, value]) => ['--env', `${name}=${value}`])
  const id = await podman('run', '--detach', '--network=host', '--read-only', ...settings, IMAGE)
  t.teardown(() => podman('rm', '--force', '--time=0', id).catch(() => {}))
  await until('the container to answer', async () => (await fetch(port, '/api/status/').catch(() => ({ status: 0 }))).status === 200)
  return { id, startedInMs: Date.now() - started }
}

t.test('the image: its size, its user, its health check and the flags it starts Node with', async (t) => {
  const [image] = JSON.parse(await podman('image', 'inspect', IMAGE))
  const [base] = JSON.parse(await podman('image', 'inspect', BASE))
  t.comment(`image ${(image.Size / 1e6).toFixed(1)} MB, ${((image.Size - base.Size) / 1e6).toFixed(1)} MB over its base`)
  t.equal(image.Config.User, 'node')
  t.same(image.Config.Entrypoint, ['node', ...IMAGE_NODE_FLAGS, 'dist/service/main.js'])
  for (const [name, value] of Object.entries(IMAGE_ENV)) t.ok(image.Config.Env.includes(`${name}=${value}`), `${name}=${value}`)
  t.same(image.Config.Cmd, ['serve'])
  t.same(image.Healthcheck.Test, ['CMD', 'node', 'dist/service/healthcheck.js'])
  const { name, version, license } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  t.match(image.Config.Labels, { 'org.opencontainers.image.title': name, 'org.opencontainers.image.version': version, 'org.opencontainers.image.licenses': license }, 'its labels: package.json\'s name, version and licence')
})

t.test('a container answers as `npm start` does, byte for byte, as a non-root user on a read-only filesystem', async (t) => {
  const [containerPort, npmPort] = await Promise.all([freePort(), freePort()])
  const { id, startedInMs } = await serve(t, containerPort)
  t.comment(`from \`podman run\` to the first 200 of /api/status/: ${startedInMs} ms`)
  t.equal(await podman('exec', id, 'id', '-u'), '1000', 'runs as the node user')
  t.equal(await podman('inspect', '--format', '{{.HostConfig.ReadonlyRootfs}}', id), 'true')
  await t.rejects(podman('exec', id, 'touch', '/app/written'), 'nothing can be written')

  await run('npm', ['run', '--silent', 'bundle'], { cwd: ROOT, timeout: 60_000 })
  const npm = spawn('npm', ['start'], { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1', PORT: String(npmPort) }, stdio: 'ignore' })
  t.teardown(async () => {
    npm.kill('SIGTERM')
    await once(npm, 'exit')
  })
  await until('npm start to answer', async () => (await fetch(npmPort, '/api/status/').catch(() => ({ status: 0 }))).status === 200)
  t.same(await exchange(containerPort, REQUESTS), await exchange(npmPort, REQUESTS))

  t.equal(await podman('healthcheck', 'run', id), '', 'its HEALTHCHECK passes while it serves')
})

t.test('a container starts from the code cache the image was built with, on its read-only filesystem', async (t) => {
  const { id } = await serve(t, await freePort(), { NODE_DEBUG: 'code-cache' })
  // The loader's debug lines: on the container's stderr, which `podman logs` writes to its own.
  const logs = (await run('podman', ['logs', id], { env: { ...process.env, CONTAINERS_CONF } })).stderr
  t.match(logs, /CODE-CACHE \d+: read \/app\/compile-cache\/inventory-status-api-v[\d.]+-x64-[0-9a-f]{16}\.code/, 'the commands\' file, with all the service')
  t.notMatch(logs, /refused|kept/, 'as it was made: with the flags the container runs with, and not written again')
})

t.test('capture and validate run through `podman run`', async (t) => {
  const port = await freePort()
  await serve(t, port)
  const captured = await podman('run', '--rm', '--network=host', '--read-only', IMAGE, 'capture', `http://127.0.0.1:${port}`)
  const profile = JSON.parse(captured)
  t.equal(profile.objectTypes.length, 163)
  const file = join(t.testdir(), 'profile.json')
  writeFileSync(file, captured)
  t.equal(await podman('run', '--rm', '--read-only', '--volume', `${file}:/profile.json:ro`, IMAGE, 'validate', '/profile.json'),
    '/profile.json: a valid profile, service-version 4.3.7, 163 object types')
  const broken = join(t.testdir(), 'broken.json')
  writeFileSync(broken, '{"status":{}}')
  await t.rejects(podman('run', '--rm', '--volume', `${broken}:/profile.json:ro`, IMAGE, 'validate', '/profile.json'), { code: 1 })
})

t.test('SIGTERM to the container (the service as PID 1) under 100 reconnecting clients: nothing dropped, exit 0', async (t) => {
  const port = await freePort()
  const drainDelayMs = 500
  const { id } = await serve(t, port, { DRAIN_DELAY_MS: String(drainDelayMs), SHUTDOWN_TIMEOUT_MS: '30000' })
  const exited = podman('wait', id)
  const load = reconnectingClients(port, 100, exited)
  await sleep(500)
  const signalled = Date.now()
  await podman('kill', '--signal', 'TERM', id)
  const [outcome, code] = await Promise.all([load, exited])
  const took = Date.now() - signalled
  t.equal(code, '0', 'exit 0')
  t.ok(took >= drainDelayMs, `stopped ${took} ms after the signal, after the drain delay`)
  t.same(outcome.problems, [])
  t.equal(outcome.dropped, 0, `nothing dropped: ${outcome.answered} answered, ${outcome.refused} connects refused`)
  t.ok(outcome.sent > 0 && outcome.answered === outcome.sent, `every request answered: ${outcome.answered} of ${outcome.sent}`)
  t.match(await podman('logs', id), '"signal":"SIGTERM","drainDelayMs":500,"msg":"draining"')
})
