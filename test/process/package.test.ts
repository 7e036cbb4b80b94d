import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { fetch } from '../helpers/http.ts'
import { DEADLINE_MS, until } from '../helpers/wait.ts'

/**
 * The npm package as a user gets it: `npm pack` (which bundles first), then, in empty folders of a
 * machine with Node and npm alone, `npm install --omit=dev` of the tarball and `npx` of it. Its
 * one command serves the embedded default, answers `--version`, `help`, `capture` and `validate`,
 * and stops cleanly on SIGTERM.
 */
const ROOT = new URL('../..', import.meta.url).pathname
const { version, bin } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string, bin: Record<string, string> }
const run = promisify(execFile)
const folder = await mkdtemp(join(tmpdir(), 'inventory-package-'))
t.teardown(() => rm(folder, { recursive: true, force: true }))
/** Only what a machine with Node and npm has: no variable of this run's. */
const env = { PATH: process.env.PATH!, HOME: process.env.HOME!, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }
const npm = (args: string[], cwd: string) => run('npm', args, { cwd, env, timeout: DEADLINE_MS, maxBuffer: 16 * 1024 * 1024 })

await npm(['pack', '--silent', '--pack-destination', folder], ROOT)
const tarball = join(folder, `inventory-status-api-${version}.tgz`)

t.test('the tarball holds what runs and what a user reads, nothing of the tests or benchmarks', async (t) => {
  const files = (await run('tar', ['tzf', tarball])).stdout.trim().split('\n').map((file) => file.replace(/^package\//, ''))
  t.same(files.sort(), ['CHANGELOG.md', 'LICENSE', 'README.md', 'data/default-inventory.json', 'dist/service/THIRD-PARTY-LICENSES.txt',
    'dist/service/commands.cjs', 'dist/service/commands.cjs.LEGAL.txt', 'dist/service/fastify-swagger.cjs', 'dist/service/healthcheck.js',
    'dist/service/ioredis.cjs', 'dist/service/jsonc-parser.cjs', 'dist/service/main.js', 'package.json'],
  'the bundle: its entry point, the commands\' file with its licence comments, the healthcheck, the packages loaded on demand')
})

t.test('installed from the tarball into an empty folder, its command serves the default profile, capture and validate, and stops on SIGTERM', async (t) => {
  const home = join(folder, 'installed')
  await mkdir(home)
  await npm(['install', '--omit=dev', tarball], home)
  t.same(await readdir(join(home, 'node_modules')), ['.bin', '.package-lock.json', 'inventory-status-api'], 'the package alone: it needs no other')
  const command = join(home, 'node_modules/.bin/inventory-status-api')
  const exec = (...args: string[]) => run(command, args, { cwd: home, env, timeout: DEADLINE_MS })
  t.equal((await exec('--version')).stdout, `${version}\n`)
  const helped = (await exec('help')).stdout
  t.match(helped, /serve[^]*capture[^]*validate/)
  t.match(helped, `\nusage: ${Object.keys(bin)[0]} [command]   (serve when none is given)\n`, 'the usage names the command as installed')
  t.match(await exec('validate').catch((error: { code: number, stderr: string }) => error), { code: 2, stderr: `expected one profile file, got 0\nusage: ${Object.keys(bin)[0]} validate <profile-file>\n` }, 'and so does a wrong command line')
  const profile = join(home, 'node_modules/inventory-status-api/data/default-inventory.json')
  t.equal((await exec('validate', profile)).stdout, `${profile}: a valid profile, service-version 4.3.7, 163 object types\n`)

  const service = spawn(command, [], { cwd: home, env: { ...env, HOST: '127.0.0.1', PORT: '0', DRAIN_DELAY_MS: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  service.stdout.on('data', (chunk) => { output += chunk })
  service.stderr.on('data', (chunk) => { output += chunk })
  const exited = once(service, 'exit')
  t.teardown(() => { service.kill('SIGKILL') })
  await until('the packaged service to say it serves', () => output.includes('"msg":"serving"'))
  const serving = JSON.parse(output.split('\n').find((line) => line.includes('"msg":"serving"'))!)
  t.match(serving, { version, profile: join(home, 'node_modules/inventory-status-api/data/default-inventory.json') }, 'the embedded default profile')
  const status = await fetch(serving.port, '/api/status/')
  t.same([status.status, JSON.parse(status.body)['service-version']], [200, '4.3.7'])
  const captured = await exec('capture', `http://127.0.0.1:${serving.port}`)
  t.equal(JSON.parse(captured.stdout).objectTypes.length, 163, 'capture reads the service back')
  service.kill('SIGTERM')
  t.same(await exited, [0, null], 'SIGTERM: exit 0')
  t.match(output, '"msg":"stopped: every request answered (exit code 0)"')
})

t.test('npx of the tarball, as a user types it beside the file, serves the default profile, and Ctrl-C stops it, no process left', async (t) => {
  const elsewhere = join(folder, 'npx')
  await mkdir(elsewhere)
  await copyFile(tarball, join(elsewhere, basename(tarball)))
  const npx = ['--yes', `./${basename(tarball)}`]
  t.equal((await run('npx', [...npx, '--version'], { cwd: elsewhere, env, timeout: DEADLINE_MS })).stdout, `${version}\n`)
  // Its own process group, as a terminal's foreground job is: Ctrl-C signals npm and the service alike.
  const served = spawn('npx', npx, { cwd: elsewhere, env: { ...env, HOST: '127.0.0.1', PORT: '0', DRAIN_DELAY_MS: '0' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  served.stdout.on('data', (chunk) => { output += chunk })
  served.stderr.on('data', (chunk) => { output += chunk })
  const exited = once(served, 'exit')
  t.teardown(() => { try { process.kill(-served.pid!, 'SIGKILL') } catch {} })
  await until('the service, through npx, to say it serves', () => output.includes('"msg":"serving"'))
  const serving = JSON.parse(output.split('\n').find((line) => line.includes('"msg":"serving"'))!)
  t.equal((await fetch(serving.port, '/api/status/')).status, 200)
  process.kill(-served.pid!, 'SIGINT')
  await exited
  await until('the service to say it stopped', () => output.includes('"msg":"stopped: every request answered (exit code 0)"'))
  await until('the service\'s process to be gone', () => {
    try { process.kill(serving.pid, 0) } catch { return true }
    return false
  })
  t.pass('stopped: every request answered, and no process left')
  t.same(await readdir(elsewhere), [basename(tarball)], 'nothing written where it ran')
})
