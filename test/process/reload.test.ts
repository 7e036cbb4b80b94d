import t from 'tap'
import { mkdirSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { Catalog } from '../../lib/inventory/catalog.ts'
import type { Profile } from '../../schemas/profile.ts'
import { build, DEFAULT_PROFILE, get } from '../helpers/build.ts'
import { askAlone, fetch as send } from '../helpers/http.ts'
import { logged, start } from '../helpers/process.ts'
import { until } from '../helpers/wait.ts'

const OTHER: Profile = {
  status: { ...DEFAULT_PROFILE.status, 'service-version': '9.9.9', plugins: {} },
  objectTypes: [
    { id: 1, app_label: 'dcim', model: 'site', display: 'DCIM | site' },
    { id: 2, app_label: 'dcim', model: 'rack', display: 'DCIM | rack' },
    { id: 7, app_label: 'ipam', model: 'prefix', display: 'IPAM | prefix' },
  ],
}
const URLS = ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/?limit=2&offset=1',
  '/api/extras/object-types/?q=dcim', '/api/extras/object-types/7/', '/api/extras/object-types/?format=api&limit=1']

t.test('a reload under concurrent requests: every answer is wholly the old profile or wholly the new', async (t) => {
  // What each profile alone answers, byte for byte.
  const expected = new Map<string, Set<string>>(URLS.map((url) => [url, new Set()]))
  const otherAnswers = new Map<string, string>()
  for (const profile of [DEFAULT_PROFILE, OTHER]) {
    const { app: alone } = await build(t, { profile })
    for (const url of URLS) {
      const body = (await get(alone, url)).body
      expected.get(url)!.add(body)
      if (profile === OTHER) otherAnswers.set(url, body)
    }
  }

  const { port, service: { served } } = await build(t, { listen: true })
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  t.teardown(() => agent.destroy())

  const fetch = async (url: string) => (await send(port, url, { agent, headers: { host: 'inventory.test' } })).body
  // Swap back and forth every 25 answers, while the other clients' requests are in flight.
  const catalogs = [new Catalog(OTHER), new Catalog(DEFAULT_PROFILE)]
  let answers = 0
  const mixed: string[] = []
  const seen = new Map<string, Set<string>>(URLS.map((url) => [url, new Set()]))
  const client = async (offset: number) => {
    for (let i = offset; i < offset + 100; i++) {
      const url = URLS[i % URLS.length]!
      const body = await fetch(url)
      if (!expected.get(url)!.has(body)) mixed.push(`${url}: ${body}`)
      seen.get(url)!.add(body)
      if (++answers % 25 === 0) served.swap(catalogs[(answers / 25) % 2]!)
    }
  }
  await Promise.all(Array.from({ length: 16 }, (_, i) => client(i)))
  t.same(mixed, [], 'no answer mixes the two profiles')
  for (const url of URLS) t.equal(seen.get(url)!.size, 2, `${url}: answered from both profiles`)
  t.equal(served.current.number, 1 + 1600 / 25)
  // The last swap served the other profile: nothing cached before it may answer now.
  for (const url of URLS) t.equal(await fetch(url), otherAnswers.get(url), `${url} after the last swap`)
})

t.test('after a reload, a tag of the old profile no longer matches', async (t) => {
  const { app, service } = await build(t)
  const old = await get(app, '/api/status/')
  t.equal((await get(app, '/api/status/', { 'if-none-match': String(old.headers.etag) })).statusCode, 304)
  service.served.swap(new Catalog(OTHER))
  const fresh = await get(app, '/api/status/', { 'if-none-match': String(old.headers.etag) })
  t.equal(fresh.statusCode, 200)
  t.match(fresh.body, '"service-version":"9.9.9"')
  t.not(fresh.headers.etag, old.headers.etag)
})

t.test('SIGHUP reloads the profile; a bad profile is logged and the one being served stays', async (t) => {
  const file = join(t.testdir(), 'profile.json')
  const profile = (version: string) => JSON.stringify({ ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': version } })
  writeFileSync(file, profile('1.0.0'))
  const server = await start(t, { PROFILE: file, METRICS: 'true' })
  const version = async () => JSON.parse((await send(server.port, '/api/status/')).body)['service-version']
  const reloads = async () => (await send(server.port, '/metrics')).body.match(/^(inventory_reloads_total|inventory_reload_refused|inventory_build_info)\{.*$/gm)
  t.equal(await version(), '1.0.0')
  t.same((await reloads())!.filter((line) => !line.startsWith('inventory_build_info')).sort(), [
    'inventory_reload_refused{file="profile"} 0',
    'inventory_reloads_total{file="profile",result="failed"} 0',
    'inventory_reloads_total{file="profile",result="ok"} 0',
  ], 'the profile\'s series exist at 0 from the start, so that the first refusal moves increase(); no tokens or faults file, none of theirs')
  writeFileSync(file, profile('2.0.0'))
  server.child.kill('SIGHUP')
  await logged(server, '"generation":2,"objectTypes":163')
  t.equal(await version(), '2.0.0')
  writeFileSync(file, '{"status":{}}')
  // Requests keep coming while the bad profile is read and refused.
  const during = Promise.all(Array.from({ length: 200 }, () => version()))
  server.child.kill('SIGHUP')
  await logged(server, `"msg":"Bad profile ${file}: /objectTypes is missing; it must be a list of object types. Still serving generation 2"`)
  t.same(new Set(await during), new Set(['2.0.0']), 'every answer meanwhile from the profile in use')
  t.equal(await version(), '2.0.0', 'the bad profile is not served')
  t.match(server.output(), '"msg":"SIGHUP: reloading"')
  const buildInfo = (await reloads())!.find((line) => line.startsWith('inventory_build_info'))
  t.same((await reloads())!.sort(), [
    buildInfo,
    'inventory_reload_refused{file="profile"} 1',
    'inventory_reloads_total{file="profile",result="failed"} 1',
    'inventory_reloads_total{file="profile",result="ok"} 1',
  ], 'each reload counted by how it ended; the last refused')
  t.match(buildInfo, 'service_version="2.0.0"', 'the version of the profile in use')
  writeFileSync(file, profile('3.0.0'))
  server.child.kill('SIGHUP')
  await logged(server, '"generation":3,"objectTypes":163')
  t.ok((await reloads())!.includes('inventory_reload_refused{file="profile"} 0'), 'a reload taken ends the refusal')
})

t.test('a faults file is re-read when it changes and on SIGHUP; a bad one is logged and the faults in use stay', async (t) => {
  const file = join(t.testdir(), 'faults.json')
  const aborting = (status: number) => JSON.stringify({ seed: 5, rules: [{ path: '/api/status/', abort: { status } }] })
  writeFileSync(file, aborting(503))
  const server = await start(t, { FAULTS: file })
  const status = async () => (await askAlone(server.port, '/api/status/')).status
  t.equal(await status(), 503)
  t.match(server.output(), `"faults":"${file}","rules":1,"seed":5,"headers":false,"msg":"faults loaded"`, 'the seed is logged')
  writeFileSync(file, '{}')
  await until('the change to be served', async () => await status() === 200)
  writeFileSync(file, '{"rules": 1}')
  await logged(server, `"msg":"Bad faults file ${file}: /rules must be a list of rules; got 1. The faults in use stay"`)
  t.equal(await status(), 200)
  writeFileSync(file, aborting(503))
  await until('the change to be served', async () => await status() === 503)
  // The same size and modification time: the watch sees no change, SIGHUP reads it anyway.
  const { atime, mtime } = statSync(file)
  writeFileSync(file, aborting(502))
  utimesSync(file, atime, mtime)
  server.child.kill('SIGHUP')
  await logged(server, '"msg":"faults reloaded"', 3)
  t.equal(await status(), 502)
})

t.test('PROFILE_WATCH=true: a changed or replaced profile file is reloaded', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'profile.json')
  const profile = (version: string) => JSON.stringify({ ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': version } })
  writeFileSync(file, profile('1.0.0'))
  const server = await start(t, { PROFILE: file, PROFILE_WATCH: 'true' })
  const versionBecomes = (expected: string) =>
    until(`service-version ${expected}`, async () => JSON.parse((await send(server.port, '/api/status/')).body)['service-version'] === expected)
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

t.test('PROFILE_WATCH=true: a ConfigMap updated as the kubelet does it is served, twice; a broken one is refused', async (t) => {
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
  const served = async () => JSON.parse((await send(server.port, '/api/status/')).body)['service-version']
  t.equal(await served(), '1.0.0')
  for (const v of ['2.0.0', '3.0.0']) {
    update(version(v))
    await until(`service-version ${v}`, async () => await served() === v)
  }
  update('{"status":')
  await logged(server, `"msg":"Bad profile ${join(dir, 'profile.json')}: is not valid JSON`)
  t.equal(await served(), '3.0.0', 'the broken one is refused, the one in use stays')
  writeFileSync(join(dir, 'unrelated.txt'), 'x')
  // The watch sees changes in order: once the next profile is served, the other file's change was seen.
  update(version('4.0.0'))
  await until('service-version 4.0.0', async () => await served() === '4.0.0')
  t.equal(server.output().split('profile reloaded').length - 1, 3, 'another file in the folder reloads nothing')
})

t.test('PROFILE_WATCH=true: a profile that is a symlink to a file elsewhere is followed', async (t) => {
  const dir = t.testdir()
  const version = (v: string) => JSON.stringify({ ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': v } })
  mkdirSync(join(dir, 'elsewhere'))
  writeFileSync(join(dir, 'elsewhere', 'real.json'), version('1.0.0'))
  mkdirSync(join(dir, 'config'))
  symlinkSync(join(dir, 'elsewhere', 'real.json'), join(dir, 'config', 'profile.json'))
  const server = await start(t, { PROFILE: join(dir, 'config', 'profile.json'), PROFILE_WATCH: 'true' })
  const served = async () => JSON.parse((await send(server.port, '/api/status/')).body)['service-version']
  writeFileSync(join(dir, 'elsewhere', 'real.json'), version('2.0.0'))
  await until('the target edited in place', async () => await served() === '2.0.0')
  writeFileSync(join(dir, 'elsewhere', 'other.json'), version('3.0.0'))
  rmSync(join(dir, 'config', 'profile.json'))
  symlinkSync(join(dir, 'elsewhere', 'other.json'), join(dir, 'config', 'profile.json'))
  await until('the symlink pointed elsewhere', async () => await served() === '3.0.0')
  rmSync(join(dir, 'elsewhere', 'other.json'))
  await logged(server, `"msg":"Bad profile ${join(dir, 'config', 'profile.json')}: cannot be read`)
  t.equal(await served(), '3.0.0', 'a dangling symlink: the profile in use stays')
  writeFileSync(join(dir, 'elsewhere', 'other.json'), version('4.0.0'))
  await until('the target back', async () => await served() === '4.0.0')
})

t.test('with a tokens file and a faults file, their reloads and every fault a route can get are series at 0 from the start', async (t) => {
  const dir = t.testdir({ 'tokens.txt': 'a'.repeat(40) + '\n', 'faults.json': '{"rules":[]}' })
  const server = await start(t, { METRICS: 'true', API_TOKENS_FILE: join(dir, 'tokens.txt'), FAULTS: join(dir, 'faults.json') })
  const text = (await send(server.port, '/metrics')).body
  t.same(text.match(/^inventory_reload.*$/gm)!.sort(), ['faults', 'profile', 'tokens'].flatMap((file) => [
    `inventory_reload_refused{file="${file}"} 0`, `inventory_reloads_total{file="${file}",result="failed"} 0`, `inventory_reloads_total{file="${file}",result="ok"} 0`,
  ]).sort())
  const routes = ['/api/', '/api/extras/', '/api/extras/object-types/', '/api/extras/object-types/{id}/', '/api/status/', '/api/schema/', '/healthz', '/readyz']
  t.same(text.match(/^inventory_faults_injected_total.*$/gm)!.sort(), routes.flatMap((route) => ['delay', 'abort', 'reset', 'close', 'cut', 'slow_body']
    .map((kind) => `inventory_faults_injected_total{route="${route}",kind="${kind}"} 0`)).sort(), 'each kind on each route a rule may name')
})
