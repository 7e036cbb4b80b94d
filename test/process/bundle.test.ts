import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { IMAGE_ENV, IMAGE_NODE_FLAGS } from '../../bench/image.ts'
import { digestOf } from '../../lib/http/entity-tag.ts'
import { layOutBundle } from '../helpers/bundle.ts'
import { exchange, fetch, freePort } from '../helpers/http.ts'
import { reconnectingClients } from '../helpers/reconnecting.ts'
import { command, logged, start } from '../helpers/process.ts'
import { until } from '../helpers/wait.ts'

/**
 * What ships is not the source but the bundle `npm run bundle` makes of it (dist/service): the
 * image holds that, the default profile and package.json (for `"type": "module"` and the version),
 * and no node_modules. This builds it into a folder laid out like the image and holds it to the
 * source's answers, including the parts it loads lazily (metrics, the Redis client). The bundle
 * leaves out the packages Fastify loads only on demand (package.json's `bundle`): with no
 * node_modules there, a start or an answer that needed one would fail.
 */
const ROOT = new URL('../..', import.meta.url).pathname
const image = await mkdtemp(join(tmpdir(), 'inventory-bundle-'))
t.teardown(() => rm(image, { recursive: true, force: true }))
const META = join(image, 'dist/meta.json')
await layOutBundle(image, { metafile: META })

t.test('the bundle, alone with the profile and package.json, answers byte for byte as the source does', async (t) => {
  t.same((await readdir(image)).sort(), ['data', 'dist', 'package.json'], 'no node_modules beside it')
  // One non-ASCII character in a licence comment made V8 keep the commands' file as a two-byte
  // string; and the loader reads the commands' file as Latin-1 (code-cache.ts).
  const files = (await readdir(join(image, 'dist/service'))).filter((file) => /\.c?js$/.test(file)).sort()
  t.same(files, ['commands.cjs', 'fastify-swagger.cjs', 'healthcheck.js', 'ioredis.cjs', 'jsonc-parser.cjs', 'main.js'],
    'the entry point, the commands\' file, the image\'s healthcheck, and the packages loaded on demand')
  const nonAscii = await Promise.all(files.map(async (file) => (await readFile(join(image, 'dist/service', file))).some((byte) => byte > 0x7f)))
  t.same(nonAscii, files.map(() => false), 'all ASCII, which V8 stores one byte per character')
  // Node makes a text of this many bytes or more a string outside V8's heap (EXTERN_APEX in its
  // src/string_bytes.cc); a shorter one is a string in the heap, which costs a start a collection.
  const { size } = await stat(join(image, 'dist/service/commands.cjs'))
  t.ok(size >= 0xFBEE9, `the commands' file, ${size} bytes, is read as one string outside V8's heap`)

  // Nothing listens at this Redis address: both log the refused connection and answer the same.
  const redisPort = await freePort()
  const env = { METRICS: 'true', REDIS_URL: `redis://127.0.0.1:${redisPort}` }
  const bundle = await start(t, env, { script: join(image, 'dist/service/main.js') })
  const source = await start(t, env)
  const requests = [
    '/api/status/',
    '/api/extras/object-types/?limit=5&offset=10&ordering=-id',
    '/api/extras/object-types/112/',
    '/api/extras/object-types/?id=x',
    '/api/schema/',
  ].map((path) => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`)
  const answers = await exchange(bundle.port, requests)
  t.same(answers, await exchange(source.port, requests))
  await logged(bundle, `Redis at 127.0.0.1:${redisPort} unreachable (connect ECONNREFUSED`)
  t.match((await fetch(bundle.port, '/metrics')).body, 'http_requests_total{route="/api/status/",method="GET",status="200"} 1')

  const healthcheck = spawn(process.execPath, [join(image, 'dist/service/healthcheck.js')], {
    env: { PATH: process.env.PATH, PORT: String(bundle.port), HOST: '127.0.0.1' },
    stdio: 'inherit',
  })
  t.same(await once(healthcheck, 'exit'), [0, null], 'the image healthcheck passes')

  // The image's other commands are in the same commands' file.
  t.same(await command(['validate', join(image, 'data/default-inventory.json')], {}, { script: join(image, 'dist/service/main.js') }), {
    code: 0,
    stdout: `${join(image, 'data/default-inventory.json')}: a valid profile, service-version 4.3.7, 163 object types\n`,
    stderr: '',
  })
  const broken = join(image, 'broken.json')
  await writeFile(broken, '{\n  "status": {\n    "plugins": x\n  }\n}')
  t.same(await command(['validate', broken], {}, { script: join(image, 'dist/service/main.js') }), {
    code: 1,
    stdout: '',
    stderr: `Bad profile ${broken}: is not valid JSON at line 3, column 16: Unexpected token 'x'\n`,
  }, 'where a file breaks, found by jsonc-parser, which the bundle loads only then')
  const captured = await command(['capture', `http://127.0.0.1:${bundle.port}`], {}, { script: join(image, 'dist/service/main.js') })
  t.equal(captured.code, 0, captured.stderr)
  t.equal(JSON.parse(captured.stdout).objectTypes.length, 163)
})

t.test('serving loads Fastify, and no @fastify/swagger (imported when the document is first asked for), node:https, node:http2 or node:tls', async (t) => {
  interface Import { path: string, kind: string, external?: boolean }
  const { inputs, outputs }: { inputs: Record<string, { imports: Import[] }>, outputs: Record<string, { entryPoint?: string, inputs: Record<string, unknown> }> } = JSON.parse(await readFile(META, 'utf8'))
  const outputOf = (entryPoint: string) => Object.values(outputs).find((output) => output.entryPoint === entryPoint)!
  t.same(Object.keys(outputOf('lib/process/main.ts').inputs).filter((input) => input.includes('node_modules/')), [], 'the entry point holds no package: it loads the commands\' file')
  // What the commands' file runs before it serves: the modules that cli.ts reaches by import and
  // require. One reached only by import() runs when that import() does.
  const reached = new Set(['lib/process/cli.ts'])
  for (const input of reached) {
    for (const { path, kind } of inputs[input]!.imports) if (kind !== 'dynamic-import' && path in inputs) reached.add(path)
  }
  const of = (files: Iterable<string>, name: string) => [...files].filter((input) => input.includes(`node_modules/${name}/`))
  t.ok(of(reached, 'fastify').length > 10, 'Fastify, which makes every answer')
  t.same([...of(reached, '@fastify/swagger'), ...of(reached, 'yaml')], [], 'none of @fastify/swagger and yaml')
  // The packages a setting or a rare request loads are files of their own, which the commands' file requires then.
  const commandsInputs = Object.keys(outputOf('lib/process/cli.ts').inputs)
  for (const [file, names] of [['fastify-swagger', ['@fastify/swagger', 'yaml']], ['ioredis', ['ioredis']], ['jsonc-parser', ['jsonc-parser']]] as const) {
    const own = Object.entries(outputs).find(([output]) => output.endsWith(`/${file}.cjs`))?.[1].inputs ?? {}
    for (const name of names) {
      t.same(of(commandsInputs, name), [], `${name}: not in the commands' file`)
      t.ok(of(Object.keys(own), name).length > 0, `${name}: in ${file}.cjs`)
    }
  }
  // Fastify's server module requires node:https and node:http2; the bundle gives it lib/deferred's stand-ins.
  const builtins = [...reached].flatMap((input) => inputs[input]!.imports.filter(({ external }) => external === true).map(({ path }) => path))
  t.same(builtins.filter((path) => /^(node:)?(https|http2|tls)$/.test(path)), [], 'none of node:https, node:http2 and node:tls')
  t.ok(builtins.includes('node:http'), 'node:http, as the check reads them')
})

t.test('serving without a tokens file loads no node:crypto (Node takes longer to load it than any other built-in), node:assert or node:worker_threads', async (t) => {
  const list = join(image, 'builtins-loaded.txt')
  const port = await freePort()
  // env(1) sets NODE_OPTIONS last: the test runner adds a module of its own, which loads node:crypto, to a child's.
  const service = spawn('env', [`NODE_OPTIONS=--require=${join(ROOT, 'test/fixtures/builtins-loaded.cjs')}`, process.execPath, join(image, 'dist/service/main.js')], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), BUILTINS_LOADED: list },
    stdio: 'ignore',
  })
  t.teardown(() => { service.kill('SIGKILL') })
  await until('the service to answer', () => fetch(port, '/api/status/').then(() => true, () => false))
  // A page, an item, the status again (a replay) and a token, which no file makes known; the list
  // is written after each answer, so the one read after the last answer holds all before it.
  for (const path of ['/api/extras/object-types/?limit=5', '/api/extras/object-types/112/', '/api/status/']) t.equal((await fetch(port, path)).status, 200, path)
  const refused = await fetch(port, '/api/status/', { headers: { authorization: 'Token 0123456789abcdef' } })
  t.same([refused.status, refused.body], [403, '{"detail":"Invalid token"}'])
  t.equal((await fetch(port, '/api/status/')).status, 200)
  const builtins = (await readFile(list, 'utf8')).trim().split('\n')
  t.ok(builtins.includes('http') && builtins.includes('internal/http'), 'the list is of the serving process')
  t.same(builtins.filter((name) => /crypto/.test(name)), [], 'none of node:crypto\'s modules')
  // Fastify, find-my-way and pino require them as they load; the bundle gives them lib/deferred's stand-ins.
  t.same(builtins.filter((name) => /^(assert|internal\/assert\/.*|worker_threads|internal\/worker(\/io|\/messaging)?)$/.test(name)), [], 'none of node:assert\'s and node:worker_threads\' own modules')
})

t.test('npm start and the image start the service with the Node flags and environment the benchmarks use', async (t) => {
  const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8')
  const entrypoint = /^ENTRYPOINT (.*)$/m.exec(dockerfile)
  t.same(JSON.parse(entrypoint![1]!), ['node', ...IMAGE_NODE_FLAGS, 'dist/service/main.js'])
  const environment = Object.entries(IMAGE_ENV).map(([name, value]) => `${name}=${value}`)
  const runStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.same(/^ENV (.*)$/m.exec(runStage)![1]!.split(' ').filter((setting) => setting.split('=')[0]! in IMAGE_ENV), environment)
  const { scripts } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
  t.equal(scripts.start, `${environment.join(' ')} exec node ${IMAGE_NODE_FLAGS.join(' ')} dist/service/main.js`)
  const hashbang = (await readFile(join(image, 'dist/service/main.js'), 'utf8')).split('\n')[0]
  t.equal(hashbang, `#!/usr/bin/env -S ${environment.join(' ')} node ${IMAGE_NODE_FLAGS.join(' ')}`, 'and the npm package\'s command, through its #! line')
})

t.test('the bundle keeps V8\'s code of its commands once it has answered, and the next start reads it', async (t) => {
  const cache = await mkdtemp(join(tmpdir(), 'inventory-code-cache-'))
  t.teardown(() => rm(cache, { recursive: true, force: true }))
  const kept = join(cache, `inventory-status-api-${process.version}-${process.arch}-${digestOf(join(image, 'dist/service/commands.cjs'))}.code`)
  const script = join(image, 'dist/service/main.js')
  // The loader's debug lines (NODE_DEBUG=code-cache), on stderr.
  const env = { NODE_DISABLE_COMPILE_CACHE: undefined, NODE_COMPILE_CACHE: cache, NODE_DEBUG: 'code-cache' }
  const first = await start(t, env, { script })
  await logged(first, '"msg":"serving"')
  t.notOk(existsSync(kept), 'not kept before an answer, whose code it would lack')
  t.equal((await fetch(first.port, '/api/status/')).status, 200)
  // Kept once the answer is sent, not at exit: a process that is killed leaves it too.
  await logged(first, `kept ${kept}`)
  first.child.kill('SIGKILL')
  await first.exited
  const second = await start(t, env, { script })
  await logged(second, '"msg":"serving"')
  t.match(second.output(), `read ${kept}`, 'the next start reads it')
  t.notMatch(second.output(), /refused|kept/, 'as it was made: V8\'s flags are changed only after it is kept, and a start that read it writes it no more')
})

t.test('the image makes its code cache by serving once, as the user and with the flags the service runs with', async (t) => {
  const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8')
  const runStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.match(runStage, /^ENV .*NODE_COMPILE_CACHE=\/app\/compile-cache/m)
  t.match(runStage, `\nUSER node\nRUN PORT=0 HOST=127.0.0.1 DRAIN_DELAY_MS=0 node ${IMAGE_NODE_FLAGS.join(' ')} dist/service/main.js > /tmp/serving.log & \\\n`)
  t.match(runStage, 'node -e "fetch(\'http://127.0.0.1:$port/api/status/\')', 'asked for the status, whose answer the code is kept after')
  t.match(runStage, /kill \$! && wait \$! && rm \/tmp\/serving\.log && ls compile-cache\/\*\.code\n/, 'stopped, and the build fails without the file')
})

t.test('one version, package.json\'s: the command\'s, the serving line\'s, the metrics\', the image\'s labels and the changelog\'s newest', async (t) => {
  const { version, name, license } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
  const script = join(image, 'dist/service/main.js')
  t.equal((await command(['--version'], {}, { script })).stdout, `${version}\n`, '--version')
  const bundle = await start(t, { METRICS: 'true' }, { script })
  await logged(bundle, '"msg":"serving"')
  t.equal(JSON.parse(bundle.output().split('\n').find((line) => line.includes('"msg":"serving"'))!).version, version, 'the serving line')
  t.match((await fetch(bundle.port, '/metrics')).body, `inventory_build_info{version="${version}",`, 'inventory_build_info')
  const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8')
  const labels = Object.fromEntries([...dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')).matchAll(/org\.opencontainers\.image\.(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]))
  t.match(labels, { title: name, version, licenses: license }, 'the image\'s labels')
  const changelog = await readFile(join(ROOT, 'CHANGELOG.md'), 'utf8')
  const unreleased = changelog.indexOf('\n## [Unreleased]\n')
  t.ok(unreleased !== -1 && unreleased < changelog.search(/^## \[\d/m), 'the changelog\'s Unreleased section, above every version')
  t.equal(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/m.exec(changelog)?.[1], version, 'the changelog\'s newest version')
})

/** The licences a package the bundle holds may have: each lets the service be used, changed and shipped under MIT. */
const ALLOWED_LICENCES = ['MIT', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', 'Apache-2.0', '0BSD', 'BlueOak-1.0.0', 'CC0-1.0']

t.test('every package the bundle holds has a licence of the allowed list, whose text ships beside it', async (t) => {
  const inputs = Object.keys(JSON.parse(await readFile(META, 'utf8')).inputs as Record<string, unknown>)
  const folders = [...new Set(inputs.flatMap((input) => /^(?:.*\/)?node_modules\/(?:@[^/]+\/)?[^/]+/.exec(input)?.[0] ?? []))]
  t.ok(folders.length > 50, `${folders.length} packages`)
  const notices = await readFile(join(image, 'dist/service/THIRD-PARTY-LICENSES.txt'), 'utf8')
  for (const folder of folders) {
    const { name, version, license } = JSON.parse(await readFile(join(ROOT, folder, 'package.json'), 'utf8'))
    t.ok(ALLOWED_LICENCES.includes(license), `${name}: ${license}`)
    t.match(notices, `\n== ${name} ${version} (${license})\n`, `${name}: its licence ships`)
  }
  t.match(await readFile(join(ROOT, 'LICENSE'), 'utf8'), /^MIT License\n/, 'the service\'s own: MIT')
  t.equal(JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).license, 'MIT')
})

t.test('SIGTERM to `npm start`, as a supervisor sends it, drains the service and exits 0: no orphan, nothing dropped', async (t) => {
  const port = await freePort()
  const npm = spawn('npm', ['start'], {
    cwd: image,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), DRAIN_DELAY_MS: '300', SHUTDOWN_TIMEOUT_MS: '30000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  npm.stdout.on('data', (chunk) => { output += chunk })
  npm.stderr.on('data', (chunk) => { output += chunk })
  const exited = once(npm, 'exit')
  t.teardown(() => { npm.kill('SIGKILL') })
  await until('the service to listen', () => output.includes('"msg":"Server listening at'))
  const service = Number(/"pid":(\d+),[^\n]*"msg":"Server listening at/.exec(output)![1])
  t.not(service, npm.pid, 'npm runs the service as a child')
  const load = reconnectingClients(port, 100, exited)
  await sleep(300)
  const signalled = Date.now()
  npm.kill('SIGTERM')
  const deadline = setTimeout(() => npm.kill('SIGKILL'), 90_000)
  const [outcome, [code, signal]] = await Promise.all([load, exited])
  clearTimeout(deadline)
  t.same([code, signal], [0, null], 'npm exits 0, as the service did')
  t.match(output, '"signal":"SIGTERM","drainDelayMs":300,"msg":"draining"')
  t.throws(() => process.kill(service, 0), { code: 'ESRCH' }, 'the service is gone with npm')
  t.same(outcome.problems, [])
  t.equal(outcome.dropped, 0, `nothing dropped: ${outcome.answered} answered, ${outcome.refused} connects refused once it stopped accepting`)
  t.ok(outcome.sent > 0 && outcome.answered === outcome.sent, `every request answered: ${outcome.answered} of ${outcome.sent}`)
  // What the service said of its stop, for a failure's reader.
  if (code !== 0 || outcome.dropped > 0) t.comment(`signalled at ${signalled}; the service's log:\n${output}`)
})
