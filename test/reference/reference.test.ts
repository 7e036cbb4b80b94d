import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { build, DEFAULT_PROFILE } from '../helpers/build.ts'
import { exchange, parseAnswer, raw, type Reply } from '../helpers/http.ts'

// The reference's behaviour beyond the specification's examples (docs/behaviour.md), over a real socket: each
// request is sent three times, so the first answers come from Fastify and the last from the
// cache (which keeps a page the second time it is asked for).

const BASE = 'http://inventory.test'
const LIST = `${BASE}/api/extras/object-types/`

/** The reference's order (docs/behaviour.md), worked out here: app_label, display lower-cased, model (by code point: this data is all in the BMP, where `<` agrees). */
const byCodePoint = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0
const DEFAULT_ORDER = [...DEFAULT_PROFILE.objectTypes].sort((a, b) =>
  byCodePoint(a.app_label, b.app_label) || byCodePoint(a.display.toLowerCase(), b.display.toLowerCase()) || byCodePoint(a.model, b.model))

async function served (t: Parameters<typeof build>[0], env: NodeJS.ProcessEnv = {}) {
  const { port } = await build(t, { env, listen: true })
  /** GET three times on one connection; the answers must be the same, and the first is returned. */
  return async (path: string, headers = ''): Promise<Reply> => {
    const request = `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n${headers}\r\n`
    const [miss = '', ...repeats] = await exchange(port, [request, request, request])
    t.same(repeats, [miss, miss], `GET ${path}: the answers are the first`)
    return parseAnswer(miss)
  }
}

const ids = (reply: Reply) => (JSON.parse(reply.body) as { results: Array<{ id: number }> }).results.map((item) => item.id)

t.test('the item path applies the list\'s filters, checked before the id is looked up', async (t) => {
  const get = await served(t)
  const cases: Array<[string, number, string]> = [
    ['/api/extras/object-types/5/?app_label=auth', 200, ''],
    ['/api/extras/object-types/5/?app_label=ipam', 404, '{"detail":"No ObjectType matches the given query."}'],
    ['/api/extras/object-types/5/?id=6', 404, '{"detail":"No ObjectType matches the given query."}'],
    ['/api/extras/object-types/5/?id=5.9&q=AUTH', 200, ''],
    ['/api/extras/object-types/5/?id=abc', 400, '{"id":["Enter a number."]}'],
    ['/api/extras/object-types/abc/?id=abc', 400, '{"id":["Enter a number."]}'],
    ['/api/extras/object-types/abc/?app_label=auth', 404, '{"detail":"Not found."}'],
    ['/api/extras/object-types/5/?model=%00', 400, '{"model":["Null characters are not allowed."]}'],
  ]
  for (const [path, status, body] of cases) {
    const reply = await get(path)
    t.equal(reply.status, status, path)
    if (status === 200) t.equal(JSON.parse(reply.body).id, 5, path)
    else t.equal(reply.body, body, path)
  }
})

t.test('white space in filter values: a text is stripped and a blank one is no filter; a blank number is not a number', async (t) => {
  const get = await served(t)
  const list = async (query: string) => {
    const reply = await get(`/api/extras/object-types/?limit=0&${query}`)
    return reply.status === 200 ? ids(reply) : [reply.status, reply.body]
  }
  const all = DEFAULT_ORDER.map((type) => type.id)
  const cases: Array<[string, unknown]> = [
    ['id=', all],
    ['id=%20', [400, '{"id":["Enter a number."]}']],
    ['id=%09%0A', [400, '{"id":["Enter a number."]}']],
    ['id=5&id=%20', [400, '{"id":["Enter a number."]}']],
    ['id=%205%20', [5]],
    ['app_label=', all],
    ['app_label=%20', all],
    ['app_label=%20taggit%20', [14, 15]],
    ['model=%0B', all],
    ['model=%20token%20&app_label=users', [113]],
    ['q=%E3%80%80', all],
    ['q=%20tAgGiT%09', [14, 15]],
    ['ordering=%20', all],
  ]
  for (const [query, expected] of cases) t.same(await list(query), expected, query)
  const item = async (query: string) => {
    const reply = await get(`/api/extras/object-types/14/?${query}`)
    return [reply.status, reply.status === 200 ? JSON.parse(reply.body).id : reply.body]
  }
  for (const query of ['id=', 'id=%2014%20', 'app_label=%20', 'app_label=%20taggit%20', 'q=%20%20', 'model=%20tag']) {
    t.same(await item(query), [200, 14], `the item, ${query}`)
  }
  t.same(await item('id=%20'), [400, '{"id":["Enter a number."]}'], 'the item, id=%20')
  t.same(await item('app_label=%20dcim%20'), [404, '{"detail":"No ObjectType matches the given query."}'], 'the item, app_label=%20dcim%20')
})

t.test('ordering: id, app_label, model, each maybe descending; the last parameter; ties in the default order', async (t) => {
  const get = await served(t)
  const all = (query: string) => get(`/api/extras/object-types/?limit=0&${query}`).then(ids)
  const defaultIds = DEFAULT_ORDER.map((type) => type.id)
  const byId = [...defaultIds].sort((a, b) => a - b)
  t.same(await all('ordering=id'), byId)
  t.same(await all('ordering=-id'), [...byId].reverse())
  t.same(await all('ordering=id&ordering=-id'), [...byId].reverse(), 'the last ordering parameter')
  t.same(await all('ordering=%20-id%20,%20display,url,bogus'), [...byId].reverse(), 'terms stripped, unknown ones dropped')
  for (const none of ['', 'display', 'url', '--id', 'bogus,', ',']) t.same(await all(`ordering=${none}`), defaultIds, `ordering=${none}: the default`)
  const stable = (compare: (a: typeof DEFAULT_ORDER[number], b: typeof DEFAULT_ORDER[number]) => number) =>
    [...DEFAULT_ORDER].sort(compare).map((type) => type.id)
  t.same(await all('ordering=-app_label'), stable((a, b) => byCodePoint(b.app_label, a.app_label)), 'ties keep the default order')
  t.same(await all('ordering=model,-app_label'), stable((a, b) => byCodePoint(a.model, b.model) || byCodePoint(b.app_label, a.app_label)))

  const page = await get('/api/extras/object-types/?ordering=-id&app_label=dcim&limit=5&offset=5')
  const body = JSON.parse(page.body)
  const dcim = byId.filter((id) => DEFAULT_PROFILE.objectTypes.find((type) => type.id === id)!.app_label === 'dcim').reverse()
  t.same(ids(page), dcim.slice(5, 10), 'with a filter and a page')
  t.equal(body.count, dcim.length)
  t.equal(body.next, `${LIST}?app_label=dcim&limit=5&offset=10&ordering=-id`, 'kept in links')
  t.equal(body.previous, `${LIST}?app_label=dcim&limit=5&ordering=-id`)
})

t.test('.json format suffixes: the list and the item, with item urls and links that keep the suffix', async (t) => {
  const get = await served(t)
  const list = await get('/api/extras/object-types.json?limit=2')
  t.equal(list.status, 200)
  t.equal(list.body, `{"count":163,"next":"${BASE}/api/extras/object-types.json?limit=2&offset=2","previous":null,"results":[` +
    `{"id":23,"url":"${LIST}23.json","display":"Account | token","app_label":"account","model":"usertoken"},` +
    `{"id":5,"url":"${LIST}5.json","display":"Authentication and Authorization | group","app_label":"auth","model":"group"}]}`)
  const slashed = JSON.parse((await get('/api/extras/object-types.json/?limit=2&offset=2')).body)
  t.equal(slashed.previous, `${BASE}/api/extras/object-types.json/?limit=2`, 'the path as requested, slash included')
  const item = `{"id":7,"url":"${LIST}7.json","display":"Content Types | content type","app_label":"contenttypes","model":"contenttype"}`
  t.equal((await get('/api/extras/object-types/7.json')).body, item)
  t.equal((await get('/api/extras/object-types/7.json/')).body, item, 'with or without a trailing slash')
  t.match((await get('/api/extras/object-types/7.json?format=api')).body, `"url":"${LIST}7.json?format=api"`, 'the suffix wins; format is kept')
  t.match((await get('/api/extras/object-types/7/?format=json')).body, `"url":"${LIST}7/?format=json"`)
  for (const path of ['/api/extras/object-types/7.xml', '/api/extras/object-types.xml', '/api/extras/object-types/abc.json', '/api/extras/object-types/7.json/?format=xml&id=x']) {
    const reply = await get(path)
    if (path.endsWith('id=x')) t.same([reply.status, reply.body], [400, '{"id":["Enter a number."]}'], 'the suffix wins over format=xml')
    else t.same([reply.status, reply.body], [404, '{"detail":"Not found."}'], path)
    t.equal(reply.headers.allow, 'GET, HEAD, OPTIONS', path)
  }
})

t.test('API roots /api/ and /api/extras/ list what this service serves', async (t) => {
  const get = await served(t)
  const root = await get('/api/')
  t.same([root.status, root.body], [200, `{"extras":"${BASE}/api/extras/","status":"${BASE}/api/status/"}`])
  t.equal(root.headers.allow, 'GET, HEAD, OPTIONS')
  const extras = await get('/api/extras/?format=api')
  t.same([extras.status, extras.body], [200, `{"object-types":"${BASE}/api/extras/object-types/"}`])
  t.equal((await get('/api/?format=xml')).status, 404)
  const { port } = await build(t, { listen: true })
  const send = async (request: string) => parseAnswer((await exchange(port, [request]))[0]!)
  for (const [path, name] of [['/api/', 'API Root'], ['/api/extras/', 'Extras']] as const) {
    t.equal(JSON.parse((await send(`OPTIONS ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`)).body).name, name)
    const head = await send(`HEAD ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`)
    t.same([head.status, head.body], [200, ''], `HEAD ${path}`)
    const post = await send(`POST ${path} HTTP/1.1\r\nHost: inventory.test\r\nContent-Length: 0\r\n\r\n`)
    t.same([post.status, post.body], [405, '{"detail":"Method \\"POST\\" not allowed."}'], `POST ${path}`)
    const moved = await send(`GET ${path.slice(0, -1)}?a=1 HTTP/1.1\r\nHost: inventory.test\r\n\r\n`)
    t.same([moved.status, moved.headers.location], [301, `${BASE}${path}?a=1`], `${path} without its slash`)
  }
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, 'the-token\n')
  const locked = await served(t, { LOGIN_REQUIRED: 'true', API_TOKENS_FILE: file })
  t.same((await locked('/api/')).status, 403, 'tokens when LOGIN_REQUIRED')
  t.same((await locked('/api/', 'Authorization: Token the-token\r\n')).status, 200)
})

/** What the reference's middleware adds under /api/ besides a fresh X-Request-ID (exchange() checks that one). */
const MIDDLEWARE_HEADERS = {
  'api-version': '4.3',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'x-frame-options': 'SAMEORIGIN',
  vary: 'Accept',
}

t.test('every answer under /api/ carries the middleware headers and a fresh request id, hits and errors alike', async (t) => {
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, 'the-token\n')
  const { port } = await build(t, { env: { LOGIN_REQUIRED: 'true', API_TOKENS_FILE: file, ALLOWED_HOSTS: 'inventory.test' }, listen: true })
  const token = 'Authorization: Token the-token\r\n'
  const requests = [
    `GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
    `GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n${token}If-None-Match: *\r\n\r\n`,
    `HEAD /api/extras/object-types/ HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
    `GET /api/extras/object-types/?id=x HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
    `GET /api/status/ HTTP/1.1\r\nHost: evil.test\r\n${token}\r\n`,
    'GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n',
    `GET /api/nothing/ HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
    `GET /api/status/?format=xml HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
    `DELETE /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
    `GET /api/status HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
    `OPTIONS /api/ HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
    `GET /api/extras/object-types/%zz/ HTTP/1.1\r\nHost: inventory.test\r\n${token}\r\n`,
  ]
  // Three times each: the cacheable ones are hits the third time.
  const answers = await exchange(port, [...requests, ...requests, ...requests])
  const statuses = answers.map((answer) => parseAnswer(answer).status)
  t.same(statuses.slice(0, requests.length), [200, 304, 200, 400, 400, 403, 404, 404, 405, 301, 200, 404])
  t.same(statuses.slice(requests.length), [...statuses.slice(0, requests.length), ...statuses.slice(0, requests.length)])
  for (const [index, answer] of answers.entries()) {
    const { headers } = parseAnswer(answer)
    t.match(headers, { ...MIDDLEWARE_HEADERS, 'x-request-id': '<v4>' }, requests[index % requests.length]!.split('\r\n', 1)[0]!)
  }
  const probe = parseAnswer((await exchange(port, ['GET /healthz HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n']))[0]!)
  t.notOk('api-version' in probe.headers || 'x-request-id' in probe.headers, 'probes are not under /api/')
})

t.test('API-Version is the major.minor of the profile\'s service version', async (t) => {
  const profile = { ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': '10.12.0-beta2' } }
  const { port } = await build(t, { profile, listen: true })
  const [answer] = await exchange(port, ['GET /api/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n'])
  t.equal(parseAnswer(answer!).headers['api-version'], '10.12')
})

t.test('every answer is JSON: CONNECT, an unknown Expect', async (t) => {
  const { port } = await build(t, { listen: true })
  const connect = await raw(port, 'CONNECT inventory.test:443 HTTP/1.1\r\nHost: inventory.test:443\r\n\r\n')
  t.equal(connect, 'HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nVary: Accept\r\nContent-Length: 44\r\nConnection: close\r\n\r\n' +
    '{"detail":"Method \\"CONNECT\\" not allowed."}')
  const [expect] = await exchange(port, ['GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\nExpect: the-unexpected\r\n\r\n'])
  const reply = parseAnswer(expect!)
  t.same([reply.status, reply.headers['content-type'], reply.body], [417, 'application/json', '{"detail":"Expectation failed."}'])
  t.same([reply.headers.connection, reply.headers['keep-alive']], ['keep-alive', 'timeout=72'], 'the connection stays open, as after any answer')
})

t.test('what pynetbox sends: nb.version, filter(app_label=[…]), filter(ordering=…)', async (t) => {
  const { port } = await build(t, { listen: true })
  // pynetbox's requests session: these headers on every call.
  const pynetbox = (path: string) => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\nUser-Agent: python-requests/2.32.3\r\n` +
    'Accept-Encoding: gzip, deflate\r\nAccept: application/json;\r\nConnection: keep-alive\r\nContent-Type: application/json;\r\n\r\n'
  const call = async (path: string) => parseAnswer((await exchange(port, [pynetbox(path)]))[0]!)

  const root = await call('/api/')
  t.equal(root.status, 200)
  t.equal(root.headers['api-version'], '4.3', 'nb.version reads API-Version from /api/')

  // filter(app_label=['dcim', 'ipam']): requests repeats the parameter; the reference reads the last.
  const labels = JSON.parse((await call('/api/extras/object-types/?app_label=dcim&app_label=ipam&limit=0')).body)
  const ipam = DEFAULT_ORDER.filter((type) => type.app_label === 'ipam').map((type) => type.id)
  t.equal(labels.count, ipam.length)
  t.same(labels.results.map((item: { id: number }) => item.id), ipam, 'the ipam types only')

  // filter(ordering='-id'): the first page, then (pynetbox's second call) the rest at offset 50.
  const first = JSON.parse((await call('/api/extras/object-types/?ordering=-id')).body)
  t.equal(first.next, 'http://inventory.test/api/extras/object-types/?limit=50&offset=50&ordering=-id')
  const rest = JSON.parse((await call(`/api/extras/object-types/?ordering=-id&limit=${first.count}&offset=50`)).body)
  const seen = [...first.results, ...rest.results].map((item: { id: number }) => item.id)
  t.same(seen, DEFAULT_PROFILE.objectTypes.map((type) => type.id).sort((a, b) => b - a), 'every id, highest first')
})
