import t, { type Test } from 'tap'
import { once } from 'node:events'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createSecureServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { capture, CaptureError } from '../../lib/inventory/capture.ts'
import { captureCommand } from '../../lib/process/capture.ts'
import { run as runCommand } from '../../lib/process/cli.ts'
import { help } from '../../lib/process/help.ts'
import type { ProfileObjectType } from '../../schemas/profile.ts'
import { DEFAULT_PROFILE } from '../helpers/build.ts'
import { askAlone, exchange, freePort } from '../helpers/http.ts'
import { command, run, start } from '../helpers/process.ts'

const TOKEN = '0123456789abcdef0123456789abcdef01234567'
const { plugins } = DEFAULT_PROFILE.status
const sortedObject = (entries: Record<string, string>) => Object.fromEntries(Object.entries(entries).sort(([a], [b]) => a < b ? -1 : 1))

/** What a real deployment's /api/status/ says: its own key names, its plugins among the installed apps. */
const DEPLOYMENT_STATUS = {
  'django-version': DEFAULT_PROFILE.status['framework-version'],
  'installed-apps': sortedObject({ ...DEFAULT_PROFILE.status['installed-apps'], ...plugins }),
  'netbox-full-version': `${DEFAULT_PROFILE.status['service-version']}-Docker-3.3.0`,
  'netbox-version': DEFAULT_PROFILE.status['service-version'],
  plugins,
  'python-version': DEFAULT_PROFILE.status['runtime-version'],
  'rq-workers-running': 3,
}
/** As the real deployment orders them (by app label and model), not by id. */
const TYPES = DEFAULT_PROFILE.objectTypes.toSorted((a, b) => a.app_label.localeCompare(b.app_label) || a.model.localeCompare(b.model))
const COUNT = TYPES.length

/** The profile a capture of that deployment must write: the components without the plugins, the types by id. */
const EXPECTED = `${JSON.stringify({
  status: {
    'framework-version': DEFAULT_PROFILE.status['framework-version'],
    'installed-apps': Object.fromEntries(Object.entries(DEPLOYMENT_STATUS['installed-apps']).filter(([name]) => !Object.hasOwn(plugins, name))),
    plugins,
    'rq-workers-running': 3,
    'runtime-version': DEFAULT_PROFILE.status['runtime-version'],
    'service-version': DEFAULT_PROFILE.status['service-version'],
    // Kept, and served as the reference's netbox-full-version with STATUS_KEYS=reference.
    'service-full-version': `${DEFAULT_PROFILE.status['service-version']}-Docker-3.3.0`,
  },
  objectTypes: DEFAULT_PROFILE.objectTypes.toSorted((a, b) => a.id - b.id),
}, null, 2)}\n`

// Not a terminal: the lines that stay, each step's once it is done.
const PROGRESS = 'status: service-version 4.3.7, 2 plugins, 3 RQ workers\nobject types: 163 of 163, page 4 of 4\n'

interface Page { count: number, next: string | null, previous: string | null, results: Array<ProfileObjectType & { url: string }> }

interface Deployment {
  /** Answers a request itself, instead of the deployment: [status, body], or 'hang' to never answer. */
  answer?: (url: URL) => [number, unknown] | 'hang' | undefined
  /** Changes a page before it is sent. */
  page?: (page: Page, offset: number) => Page
  /** Over HTTPS, with a certificate of its own that nothing trusts unless told to. */
  secure?: boolean
  /** Milliseconds each answer waits, by path. */
  latency?: Record<string, number>
}

const CERTIFICATE = new URL('../fixtures/stand-in.crt', import.meta.url).pathname
const KEY = new URL('../fixtures/stand-in.key', import.meta.url).pathname

/**
 * A stand-in for a real deployment: its status keys, tokens required (403 with its texts), a
 * maximum page size of 50 whatever `limit` asks, absolute `next` links, 404 elsewhere.
 */
async function deployment (t: Test, { answer, page = (page) => page, secure = false, latency = {} }: Deployment = {}) {
  const requests: Array<{ url: string, authorization: string | undefined }> = []
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url!, base)
    const wait = latency[url.pathname]
    if (wait !== undefined) return setTimeout(answerRequest, wait, request, response)
    answerRequest(request, response)
  }
  const answerRequest = (request: IncomingMessage, response: ServerResponse) => {
    requests.push({ url: request.url!, authorization: request.headers.authorization })
    const url = new URL(request.url!, base)
    const authorization = request.headers.authorization
    if (authorization === undefined) return json(response, 403, { detail: 'Authentication credentials were not provided.' })
    if (authorization !== `Token ${TOKEN}`) return json(response, 403, { detail: 'Invalid token' })
    const own = answer?.(url)
    if (own === 'hang') return
    if (own !== undefined) return json(response, ...own)
    if (url.pathname === '/api/status/') return json(response, 200, DEPLOYMENT_STATUS)
    const item = TYPES.find((type) => url.pathname === `/api/extras/object-types/${type.id}/`)
    if (item !== undefined) return json(response, 200, { ...item, url: base + url.pathname })
    if (url.pathname !== '/api/extras/object-types/') return json(response, 404, { detail: 'Not found.' })
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 50), 50)
    const offset = Number(url.searchParams.get('offset') ?? 0)
    const link = (at: number) => `${base}/api/extras/object-types/?limit=${limit}&offset=${at}`
    json(response, 200, page({
      count: COUNT,
      next: offset + limit < COUNT ? link(offset + limit) : null,
      previous: offset > 0 ? link(Math.max(offset - limit, 0)) : null,
      results: TYPES.slice(offset, offset + limit).map((type) => ({ ...type, url: `${base}/api/extras/object-types/${type.id}/` })),
    }, offset))
  }
  const server = secure ? createSecureServer({ cert: await readFile(CERTIFICATE), key: await readFile(KEY) }, handle) : createServer(handle)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const base = `${secure ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { base, requests }
}

function json (response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body))
}

async function folder (t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'inventory-capture-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('a capture of a real deployment: every page with the token, its keys read, the profile on stdout', async (t) => {
  const { base, requests } = await deployment(t)
  const result = await command(['capture', base, '--token', TOKEN])
  t.same(result, { code: 0, stdout: EXPECTED, stderr: PROGRESS })
  t.same(requests, [
    { url: '/api/status/', authorization: `Token ${TOKEN}` },
    { url: '/api/extras/object-types/?limit=1000', authorization: `Token ${TOKEN}` },
    { url: '/api/extras/object-types/?limit=50&offset=50', authorization: `Token ${TOKEN}` },
    { url: '/api/extras/object-types/?limit=50&offset=100', authorization: `Token ${TOKEN}` },
    { url: '/api/extras/object-types/?limit=50&offset=150', authorization: `Token ${TOKEN}` },
  ], 'never one request assumed to be enough: next followed to the end')
})

t.test('over HTTPS the deployment is verified: a CA that is not trusted stops the capture, one that is lets it through', async (t) => {
  const { base } = await deployment(t, { secure: true })
  const untrusted = await command(['capture', base, '--token', TOKEN])
  t.same(untrusted, { code: 1, stdout: '', stderr: `capture failed: ${base}/api/status/: cannot be reached (self-signed certificate)\n` })
  t.same(await command(['capture', base, '--token', TOKEN], { NODE_EXTRA_CA_CERTS: CERTIFICATE }), { code: 0, stdout: EXPECTED, stderr: PROGRESS })
})

t.test('--out writes the file whole, replacing one that was there; the token comes from INVENTORY_TOKEN too', async (t) => {
  const { base } = await deployment(t)
  const dir = await folder(t)
  const out = join(dir, 'profile.json')
  await writeFile(out, 'the old profile')
  const result = await command(['capture', `${base}/`, '--out', out], { INVENTORY_TOKEN: TOKEN })
  t.same(result, { code: 0, stdout: '', stderr: `${PROGRESS}wrote ${out}: 163 object types\n` })
  t.equal(await readFile(out, 'utf8'), EXPECTED)
  t.same(await readdir(dir), ['profile.json'], 'no temporary file left')
  t.notMatch(EXPECTED, TOKEN, 'the token is not in the profile')
})

t.test('--faults-out: each endpoint\'s median and p99 over --samples more requests, which the service then serves as its delays', async (t) => {
  const { base, requests } = await deployment(t, { latency: { '/api/status/': 80, '/api/extras/object-types/1/': 40 } })
  const dir = await folder(t)
  const [out, faultsOut] = [join(dir, 'profile.json'), join(dir, 'faults.json')]
  const result = await command(['capture', base, '--out', out, '--faults-out', faultsOut, '--samples', '10'], { INVENTORY_TOKEN: TOKEN })
  t.equal(result.code, 0, result.stderr)
  t.equal(await readFile(out, 'utf8'), EXPECTED, 'the profile as ever')
  const ids = requests.map(({ url }) => url).filter((url) => /^\/api\/extras\/object-types\/\d+\/$/.test(url))
  t.same(new Set(ids), new Set(['/api/extras/object-types/1/']), 'the item sampled is the first object type, by id')
  t.equal(requests.length, 1 + 4 + 3 * 10, 'the capture\'s 5 requests, and 10 of each endpoint')
  const faults = JSON.parse(await readFile(faultsOut, 'utf8'))
  t.same(Object.keys(faults), ['seed', 'rules'])
  t.same(faults.rules.map((rule: { path: string }) => rule.path), ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/{id}/'])
  const [status, list, item] = faults.rules.map((rule: { delay: { median: number, p99: number } }) => rule.delay)
  t.ok(status.median >= 80 && status.p99 >= status.median, `status: ${JSON.stringify(status)}`)
  t.ok(item.median >= 40 && item.median < status.median, `item: ${JSON.stringify(item)}`)
  t.ok(list.median < item.median, `list: ${JSON.stringify(list)}`)
  for (const [path, delay, count] of [['/api/status/', status, 11], ['/api/extras/object-types/', list, 14], ['/api/extras/object-types/{id}/', item, 10]]) {
    t.match(result.stderr, `latency of ${path}: median ${delay.median} ms, p99 ${delay.p99} ms (${count} requests)\n`)
  }
  t.match(result.stderr, 'latency samples: 10 of 10\nlatency of /api/status/')
  t.match(result.stderr, `wrote ${faultsOut}: the latencies of 3 endpoints\n`)

  // The stand-in, from what was captured: the status takes about as long as the deployment's.
  const standIn = await start(t, { PROFILE: out, FAULTS: faultsOut })
  const times: number[] = []
  for (let i = 0; i < 5; i++) times.push((await askAlone(standIn.port, '/api/status/')).ms)
  times.sort((a, b) => a - b)
  t.ok(times[2]! >= status.median * 0.8, `the stand-in's median status: ${times[2]!.toFixed(1)} ms`)
})

t.test('--faults-out from a deployment with no object types: the status and the list are timed, no item', async (t) => {
  const dir = await folder(t)
  const profile = join(dir, 'empty.json')
  await writeFile(profile, JSON.stringify({ ...DEFAULT_PROFILE, objectTypes: [] }))
  const source = await start(t, { PROFILE: profile })
  const faultsOut = join(dir, 'faults.json')
  const result = await command(['capture', `http://127.0.0.1:${source.port}`, '--faults-out', faultsOut, '--samples', '2'])
  t.equal(result.code, 0, result.stderr)
  const { rules } = JSON.parse(await readFile(faultsOut, 'utf8'))
  t.same(rules.map((rule: { path: string }) => rule.path), ['/api/status/', '/api/extras/object-types/'])
  t.match(result.stderr, 'latency of /api/extras/object-types/: median ')
  t.match(result.stderr, '(3 requests)\n')
})

t.test('the service serves what it captured from itself, byte for byte, over pages as small as 50', async (t) => {
  const source = await start(t, { MAX_PAGE_SIZE: '50' })
  const out = join(await folder(t), 'captured.json')
  const result = await command(['capture', `http://127.0.0.1:${source.port}`, '--out', out])
  t.equal(result.code, 0, result.stderr)
  t.match(result.stderr, 'status: service-version 4.3.7, 2 plugins, 1 RQ worker\nobject types: 163 of 163, page 4 of 4\n')
  const copy = await start(t, { PROFILE: out, MAX_PAGE_SIZE: '50' })
  const paths = ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/?limit=50&offset=150',
    '/api/extras/object-types/?ordering=-model&app_label=dcim', '/api/extras/object-types/112/']
  const requests = paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`)
  const bodies = (answers: string[]) => answers.map((answer) => answer.slice(answer.indexOf('\r\n\r\n') + 4))
  const served = bodies(await exchange(source.port, requests))
  t.same(bodies(await exchange(copy.port, requests)), served)
  t.match(served[0], '"installed-apps":{"django_filters":"25.1"')
})

/**
 * Why capture() stops, in this process: the message the command prints after "capture failed: ".
 * The command's side of a failure (exit 1, stderr, the file left as it was) is tested with a process,
 * once for each kind of failure; each unexpected answer's message, here, without one.
 */
async function captureFailure (base: string): Promise<string> {
  try {
    await capture(new URL(base), { token: TOKEN, timeoutMs: 10_000, progress: { line: () => {}, step: () => {} } })
  } catch (error) {
    if (error instanceof CaptureError) return error.message
    throw error
  }
  throw new Error(`the capture of ${base} succeeded`)
}

t.test('what stops a capture: a message that names the problem, exit 1, no file', async (t) => {
  const dir = await folder(t)
  const out = join(dir, 'profile.json')
  await writeFile(out, 'the old profile')
  const failed = async (t: Test, args: string[], message: string) => {
    const result = await command(['capture', ...args, '--out', out])
    t.equal(result.code, 1, result.stderr)
    t.equal(result.stderr.split('\n').at(-2), `capture failed: ${message}`)
    t.equal(result.stdout, '')
    t.notMatch(result.stderr, TOKEN, 'the token is never printed')
    t.equal(await readFile(out, 'utf8'), 'the old profile', 'the file there is left as it was')
    t.same(await readdir(dir), ['profile.json'], 'no temporary file left')
  }

  t.test('nothing listens', async (t) => {
    const port = await freePort()
    await failed(t, [`http://127.0.0.1:${port}`, '--token', TOKEN], `http://127.0.0.1:${port}/api/status/: cannot be reached (connect ECONNREFUSED 127.0.0.1:${port})`)
  })
  t.test('no answer in time', async (t) => {
    const { base } = await deployment(t, { answer: (url) => url.pathname === '/api/extras/object-types/' ? 'hang' : undefined })
    // Long enough that the answers before it come in time on a busy machine.
    await failed(t, [base, '--token', TOKEN, '--timeout', '3'], `${base}/api/extras/object-types/?limit=1000: no whole answer within 3 s`)
  })
  t.test('403: no token, or a token refused', async (t) => {
    const { base } = await deployment(t)
    await failed(t, [base], `${base}/api/status/ answered 403: a token is needed (--token or INVENTORY_TOKEN)`)
    await failed(t, [base, '--token', 'not-the-token'], `${base}/api/status/ answered 403: the token was refused`)
  })
  t.test('404: not this API', async (t) => {
    const { base } = await deployment(t)
    // A base URL with a path, without the trailing slash: the API is under it all the same.
    await failed(t, [`${base}/inventory`, '--token', TOKEN], `${base}/inventory/api/status/ answered 404: the inventory API is not there (is the base URL the address before /api/?)`)
  })
  t.test('another status, with and without a Location', async (t) => {
    const { base } = await deployment(t, { answer: () => [500, { detail: 'Server Error' }] })
    t.equal(await captureFailure(`${base}/`), `${base}/api/status/ answered 500`)
    const redirecting = createServer((_request, response) => response.writeHead(301, { location: 'https://inventory.test/api/status/' }).end())
    redirecting.listen(0, '127.0.0.1')
    await once(redirecting, 'listening')
    t.teardown(() => redirecting.close())
    const address = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`
    t.equal(await captureFailure(`${address}/`), `${address}/api/status/ answered 301, to https://inventory.test/api/status/ (redirects are not followed: give the base URL it leads to)`)
  })
  t.test('bodies that are not the expected JSON', async (t) => {
    const cases: Array<[string, unknown, string]> = [
      ['/api/status/', '<html>Welcome</html>', 'the body is not JSON ("<html>Welcome</html>")'],
      ['/api/status/', [], 'the status is not a JSON object'],
      ['/api/status/', { ...DEPLOYMENT_STATUS, 'netbox-version': undefined }, 'no "service-version" or "netbox-version" text'],
      ['/api/status/', { ...DEPLOYMENT_STATUS, 'netbox-full-version': 5 }, 'the full version is 5, not a version'],
      ['/api/status/', { ...DEPLOYMENT_STATUS, 'netbox-full-version': '' }, 'the full version is "", not a version'],
      ['/api/status/', { ...DEPLOYMENT_STATUS, plugins: null }, '"plugins" is not a JSON object'],
      ['/api/status/', { ...DEPLOYMENT_STATUS, plugins: { netbox_bgp: 16 } }, '"plugins" gives netbox_bgp the version 16, not a text'],
      ['/api/status/', { ...DEPLOYMENT_STATUS, 'rq-workers-running': null }, '"rq-workers-running" is null, not a whole number'],
      ['/api/extras/object-types/', { count: '163', next: null, results: [] }, '"count" is "163"'],
      ['/api/extras/object-types/', { count: -1, next: null, results: [] }, '"count" is -1'],
      ['/api/extras/object-types/', { count: 0, next: 2, results: [] }, '"next" is 2'],
      ['/api/extras/object-types/', { count: 0, next: null }, 'no "results" list'],
      ['/api/extras/object-types/', { count: 1, next: null, results: [{ id: '1', app_label: 'dcim', model: 'site', display: 'DCIM | site' }] },
        'results[0] is not an object type with an id, app_label, model and display ({"id":"1","app_label":"dcim","model":"site","display":"DCIM | site"})'],
      ['/api/extras/object-types/', { count: 1, next: null, results: ['dcim.site'] }, 'results[0] is not a JSON object'],
    ]
    for (const [path, body, problem] of cases) {
      const { base } = await deployment(t, { answer: (url) => url.pathname === path ? [200, body] : undefined })
      const asked = path === '/api/status/' ? path : `${path}?limit=1000`
      t.equal(await captureFailure(`${base}/`), `${base}${asked} is not the inventory API's answer: ${problem}`)
    }
    const huge = 'x'.repeat(17 * 1024 * 1024)
    const { base } = await deployment(t, { answer: () => [200, huge] })
    await failed(t, [base, '--token', TOKEN], `${base}/api/status/ is not the inventory API's answer: the answer is larger than 16 MiB`)
  })
  t.test('next links that loop, leave the host or are not links', async (t) => {
    const loop = await deployment(t, { page: (page, offset) => offset === 100 ? { ...page, next: `${loop.base}/api/extras/object-types/?limit=50&offset=50` } : page })
    t.equal(await captureFailure(`${loop.base}/`),
      `${loop.base}/api/extras/object-types/?limit=50&offset=100: next ${loop.base}/api/extras/object-types/?limit=50&offset=50 was already read: the pages loop`)
    const port = loop.base.split(':')[2]
    const away = await deployment(t, { page: (page) => ({ ...page, next: `http://localhost:${port}/api/extras/object-types/?limit=50&offset=50` }) })
    t.equal(await captureFailure(`${away.base}/`),
      `${away.base}/api/extras/object-types/?limit=1000: next http://localhost:${port}/api/extras/object-types/?limit=50&offset=50 leaves ${away.base}; not following it (the token would go with it)`)
    // Links always new, to pages that bring nothing new: an empty page, or the same items again under another spelling.
    let n = 0
    const empty = await deployment(t, { page: (page, offset) => offset >= 100 ? { ...page, results: [], next: `${empty.base}/api/extras/object-types/?limit=50&offset=100&n=${++n}` } : page })
    t.equal(await captureFailure(`${empty.base}/`), `${empty.base}/api/extras/object-types/?limit=50&offset=100: no object type on this page, and a next page: the pages make no progress`)
    const alias = await deployment(t, { page: (page, offset) => offset === 50 ? { ...page, next: `${alias.base}/api/extras/object-types/?offset=50&limit=50` } : page })
    t.equal(await captureFailure(`${alias.base}/`), `${alias.base}/api/extras/object-types/?offset=50&limit=50: object type id ${TYPES[50]!.id} was already received`)
    const broken = await deployment(t, { page: (page) => ({ ...page, next: 'http://[' }) })
    t.equal(await captureFailure(`${broken.base}/`), `${broken.base}/api/extras/object-types/?limit=1000: next "http://[" is not a URL`)
  })
  t.test('ids twice, counts that do not add up', async (t) => {
    const twice = await deployment(t, { page: (page, offset) => offset === 50 ? { ...page, results: [TYPES[0]!, ...page.results.slice(1)] as Page['results'] } : page })
    t.equal(await captureFailure(`${twice.base}/`), `${twice.base}/api/extras/object-types/?limit=50&offset=50: object type id ${TYPES[0]!.id} was already received`)
    const short = await deployment(t, { page: (page) => ({ ...page, count: COUNT + 1 }) })
    t.equal(await captureFailure(`${short.base}/`), `the last page was read with ${COUNT} object types received, not the count ${COUNT + 1}`)
    const changing = await deployment(t, { page: (page, offset) => offset === 100 ? { ...page, count: COUNT - 1 } : page })
    t.equal(await captureFailure(`${changing.base}/`),
      `${changing.base}/api/extras/object-types/?limit=50&offset=100 says count ${COUNT - 1}, the first page said ${COUNT}: the object types changed during the capture`)
    const endless = await deployment(t, { page: (page) => ({ ...page, count: 1e9 }) })
    t.equal(await captureFailure(`${endless.base}/`), `${endless.base}/api/extras/object-types/?limit=1000 says count 1000000000: more object types than a capture takes (at most 100000)`)
    const over = await deployment(t, { page: (page) => ({ ...page, count: 10 }) })
    t.equal(await captureFailure(`${over.base}/`), `${over.base}/api/extras/object-types/?limit=1000: 50 object types received, more than the count 10`)
  })
  t.test('a capture the service would refuse to serve', async (t) => {
    const { base } = await deployment(t, { page: (page, offset) => offset === 0 ? { ...page, results: [{ ...page.results[0]!, model: 'Site' }, ...page.results.slice(1)] } : page })
    const index = JSON.parse(EXPECTED).objectTypes.findIndex((type: ProfileObjectType) => type.id === TYPES[0]!.id)
    await failed(t, [base, '--token', TOKEN], `Bad profile captured from ${base}/: /objectTypes/${index}/model must be lowercase letters and digits only; got "Site"`)
  })
  t.test('a file that cannot be written', async (t) => {
    const { base } = await deployment(t)
    const result = await command(['capture', base, '--token', TOKEN, '--out', join(dir, 'missing', 'profile.json')])
    t.equal(result.code, 1)
    t.match(result.stderr, `capture failed: cannot write ${join(dir, 'missing', 'profile.json')} (ENOENT: no such file or directory`)
    t.same(await readdir(dir), ['profile.json'])
  })
})

t.test('a wrong command line: the problem and the usage, exit 2, nothing asked; help, exit 0', async (t) => {
  const { base, requests } = await deployment(t)
  const usage = 'usage: inventory-status-api capture <base-url> [--token <key>] [--out <file>] [--timeout <seconds>] [--faults-out <file> [--samples <n>]] (the token may come from INVENTORY_TOKEN instead)\n'
  // The command itself, in this process: its exit code, and what it writes to stderr (stdout,
  // where tap writes, is checked with the processes below).
  const captureIn = async (args: string[]) => {
    const stderr = t.capture(process.stderr, 'write')
    try {
      return { code: await captureCommand(args), stderr: stderr.args().join('') }
    } finally {
      stderr.restore()
    }
  }
  const cases: Array<[string[], string]> = [
    [[base, base], 'expected one base URL, got 2'],
    [['inventory.test'], '"inventory.test" is not a URL'],
    [['ftp://inventory.test/'], 'ftp://inventory.test/ is not an http or https URL'],
    [[`${base}/?limit=5`], `${base}/?limit=5: the base URL has no query or fragment`],
    [[base, '--timeout', '0'], '--timeout must be a number of seconds, more than 0 and at most 600; got "0"'],
    [[base, '--timeout', 'soon'], '--timeout must be a number of seconds, more than 0 and at most 600; got "soon"'],
    [[base, '--samples', '10'], '--samples times requests for --faults-out, which is missing'],
    [[base, '--faults-out', 'faults.json', '--samples', 'all'], '--samples must be a whole number from 0 to 100000; got "all"'],
    [[base, '--faults-out', 'faults.json', '--samples', '100001'], '--samples must be a whole number from 0 to 100000; got "100001"'],
  ]
  for (const [args, problem] of cases) {
    t.same(await captureIn(args), { code: 2, stderr: `${problem}\n${usage}` }, problem)
  }
  // node:util's own words, which vary with Node's version.
  t.match(await captureIn([base, '--bogus']), { code: 2, stderr: /^Unknown option '--bogus'.*\nusage: inventory-status-api capture <base-url> /s })
  // Through the entry point, as processes.
  t.same(await command(['capture']), { code: 2, stdout: '', stderr: `expected one base URL, got 0\n${usage}` })
  t.same(await command(['capture', base], { INVENTORY_TOKEN: '' }), { code: 2, stdout: '', stderr: `the token is empty\n${usage}` })
  t.same(requests, [])
  t.same(await command(['survey']), {
    code: 2,
    stdout: '',
    stderr: 'unknown command "survey"\nusage: inventory-status-api [serve | capture <base-url> [--token <key>] [--out <file>] [--timeout <seconds>] [--faults-out <file> [--samples <n>]] | validate <profile-file> | help [command] | version]\n',
  })
  const helps = await Promise.all(['help', '--help', '-h'].map((asked) => command([asked])))
  t.same(helps, Array(3).fill({ code: 0, stdout: help(), stderr: '' }), 'help, --help and -h print the help')
  // One command's: its usage and what it does, in this process (stdout is tap's, captured meanwhile).
  const helpOf = async (args: string[]) => {
    const stdout = t.capture(process.stdout, 'write')
    try {
      await runCommand(args)
      return { code: process.exitCode ?? 0, stdout: stdout.args().join('') }
    } finally {
      stdout.restore()
    }
  }
  const validateHelp = 'usage: inventory-status-api validate <profile-file>\n  check a profile file as start-up does\n'
  for (const args of [['validate', '--help'], ['validate', 'profile.json', '-h'], ['help', 'validate']]) {
    t.same(await helpOf(args), { code: 0, stdout: validateHelp }, `${args.join(' ')}: the command's usage`)
  }
  t.match(await helpOf(['capture', base, '--help']), { code: 0, stdout: /^usage: inventory-status-api capture <base-url> [^]*INVENTORY_TOKEN instead\n$/ }, 'capture --help: its usage')
  t.same(requests, [], 'and nothing asked of the deployment')
  t.same(await helpOf(['serve', '--help']), { code: 0, stdout: help() }, 'serve --help: the whole help, with the variables')
  t.same(await command(['serve', '--port', '80']), {
    code: 2,
    stdout: '',
    stderr: 'serve takes no arguments (configuration comes from the environment), got --port 80\nusage: inventory-status-api serve\n',
  })
})

t.test('validate: the start-up check of a profile, with its message, for CI', async (t) => {
  const dir = await folder(t)
  t.same(await command(['validate', 'data/default-inventory.json']), {
    code: 0,
    stdout: 'data/default-inventory.json: a valid profile, service-version 4.3.7, 163 object types\n',
    stderr: '',
  })
  const bad = join(dir, 'bad.json')
  await writeFile(bad, JSON.stringify({ ...DEFAULT_PROFILE, objectTypes: [...DEFAULT_PROFILE.objectTypes, DEFAULT_PROFILE.objectTypes[4]] }))
  const message = `Bad profile ${bad}: /objectTypes/163/id must be unique; got 5, the id of /objectTypes/4`
  t.same(await command(['validate', bad]), { code: 1, stdout: '', stderr: `${message}\n` })
  const service = run({ PROFILE: bad })
  t.equal((await service.exited).code, 1)
  t.equal(service.output(), `${message}\n`, 'the line the service writes when it refuses to start')
  const missing = join(dir, 'missing.json')
  t.same(await command(['validate', missing]), { code: 1, stdout: '', stderr: `Bad profile ${missing}: cannot be read (ENOENT: no such file or directory, open '${missing}')\n` })
  t.same(await command(['validate']), { code: 2, stdout: '', stderr: 'expected one profile file, got 0\nusage: inventory-status-api validate <profile-file>\n' })
})
