import t from 'tap'
import fc from 'fast-check'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../lib/config.ts'
import { ApiTokens } from '../lib/tokens.ts'
import { API_HEADERS, build, get, inject } from './helpers/build.ts'
import { raw } from './helpers/http.ts'
import { readings, urlWith } from './helpers/token-urls.ts'

const GOOD = '0123456789abcdef0123456789abcdef01234567'
const OTHER = 'second-token'
const UNICODE = 'clé-ünï'
/** A header value as Node reads a request's bytes: each byte one Latin-1 character. */
const asSent = (text: string) => Buffer.from(text).toString('latin1')

function tokensFile (t: Parameters<typeof build>[0], text: string): string {
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, text)
  return file
}

const locked = (t: Parameters<typeof build>[0], text = `# API tokens\n\n${GOOD}\n  ${OTHER}  \n${UNICODE}\n`, listen = false) =>
  build(t, { env: { LOGIN_REQUIRED: 'true', API_TOKENS_FILE: tokensFile(t, text) }, listen })

const detail = (message: string) => JSON.stringify({ detail: message })
const PATHS = ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/?limit=1&q=dcim', '/api/extras/object-types/7/']

t.test('LOGIN_REQUIRED: every API path needs a known token; the reference\'s 403s otherwise', async (t) => {
  const { app } = await locked(t)
  const cases: Array<[string | undefined, number, string | undefined]> = [
    [undefined, 403, 'Authentication credentials were not provided.'],
    ['Basic dXNlcjpwYXNz', 403, 'Authentication credentials were not provided.'],
    ['', 403, 'Authentication credentials were not provided.'],
    ['Token', 403, 'Invalid token header. No credentials provided.'],
    [`Token ${GOOD} extra`, 403, 'Invalid token header. Token string should not contain spaces.'],
    ['Token wrong', 403, 'Invalid token'],
    [`Token ${GOOD}x`, 403, 'Invalid token'],
    [`Token ${GOOD.slice(1)}`, 403, 'Invalid token'],
    [`Token ${GOOD}`, 200, undefined],
    [`token   ${OTHER}`, 200, undefined],
    [`TOKEN ${OTHER}`, 200, undefined],
    // The words of the header are split at ASCII white space only, and the key read as UTF-8 (Python's bytes.split() and decode()).
    [`Token\t${GOOD}`, 200, undefined],
    [`Token ${asSent(UNICODE)}`, 200, undefined],
    [`Token ${UNICODE}`, 403, 'Invalid token header. Token string should not contain invalid characters.'],
    [`Token ${GOOD}\xa0x`, 403, 'Invalid token header. Token string should not contain invalid characters.'],
    [`Token ${asSent('\ufeff')}${GOOD}`, 403, 'Invalid token'],
    [`\xa0Token ${GOOD}`, 403, 'Authentication credentials were not provided.'],
    // `Token` is the reference's only scheme (4.3): any other presents no credentials.
    [`Bearer ${GOOD}`, 403, 'Authentication credentials were not provided.'],
    [`Tokens ${GOOD}`, 403, 'Authentication credentials were not provided.'],
  ]
  for (const path of PATHS) {
    const open = await get(app, path, { authorization: `Token ${GOOD}` })
    for (const [authorization, status, message] of cases) {
      const res = await get(app, path, authorization === undefined ? {} : { authorization })
      t.equal(res.statusCode, status, `${path} with ${authorization}`)
      t.match(res.headers, API_HEADERS)
      t.equal(res.body, message === undefined ? open.body : detail(message))
    }
  }
  const options = await inject(app, { method: 'OPTIONS', url: '/api/status/', headers: { host: 'inventory.test' } })
  t.same([options.statusCode, options.body], [403, detail('Authentication credentials were not provided.')], 'OPTIONS too')
})

t.test('the order of checks is the reference\'s: Host, format, token, method', async (t) => {
  const { app } = await build(t, { env: { LOGIN_REQUIRED: 'true', API_TOKENS_FILE: tokensFile(t, GOOD), ALLOWED_HOSTS: 'inventory.test' } })
  const send = async (method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}) => {
    const res = await inject(app, { method, url, headers: { host: 'inventory.test', ...headers } })
    return [res.statusCode, res.body]
  }
  const token = { authorization: `Token ${GOOD}` }
  t.same(await send('GET', '/api/status/', { host: 'evil.test' }), [400, detail('Invalid Host header.')], 'Host before the token')
  t.same(await send('GET', '/api/status/?format=xml'), [404, detail('Not found.')], 'format before the token')
  t.same(await send('POST', '/api/status/'), [403, detail('Authentication credentials were not provided.')], 'the token before the method')
  t.same(await send('POST', '/api/status/', token), [405, detail('Method "POST" not allowed.')])
  t.same(await send('GET', '/api/nothing/'), [404, detail('Not found.')], 'unknown paths need no token')
  t.same(await send('GET', '/api/status'), [301, detail('Moved permanently.')], 'nor do redirects')
  t.same(await send('GET', '/healthz'), [200, '{"status":"ok"}'], 'nor probes')
})

t.test('a cached answer is never served without a token', async (t) => {
  const { replays, port } = await locked(t, undefined, true)
  const ask = (authorization: string) =>
    raw(port, `GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n${authorization}Connection: close\r\n\r\n`)
  const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4)
  // Kept on its second miss (the cache's doorkeeper).
  const answers = [await ask(`Authorization: Token ${GOOD}\r\n`), await ask(`Authorization: Token ${GOOD}\r\n`)]
  for (const answer of answers) t.match(answer, /^HTTP\/1\.1 200 OK\r\n/, 'answered, then cached')
  t.ok(replays!.bytes > 0)
  const status = bodyOf(answers[0]!)
  t.match(status, /^\{"framework-version":/)
  t.match(await ask(''), /^HTTP\/1\.1 403 Forbidden\r\n[^]*\{"detail":"Authentication credentials were not provided\."\}$/)
  t.match(await ask('Authorization: Token nope\r\n'), /\{"detail":"Invalid token"\}$/)
  // Bytes on the wire: a key in UTF-8 is known; a byte that is not UTF-8 is refused, also by a replay.
  const hits = replays!.stats.hits
  for (let i = 0; i < 2; i++) {
    const answer = await ask(`Authorization: Token ${asSent(UNICODE)}\r\n`)
    t.match(answer, /^HTTP\/1\.1 200 OK\r\n/)
    t.equal(bodyOf(answer), status, 'the same status, replayed')
  }
  t.equal(replays!.stats.hits, hits + 2, 'both replays')
  t.match(await ask(`Authorization: Token ${GOOD}\xa0\r\n`), /^HTTP\/1\.1 403 Forbidden\r\n[^]*\{"detail":"Invalid token header\. Token string should not contain invalid characters\."\}$/)
})

t.test('a tokens file may be a JSON list', async (t) => {
  const { app } = await locked(t, JSON.stringify([GOOD, OTHER]))
  t.equal((await get(app, '/api/status/', { authorization: `Token ${OTHER}` })).statusCode, 200)
  t.equal((await get(app, '/api/status/', { authorization: 'Token x' })).statusCode, 403)
})

t.test('without LOGIN_REQUIRED, the API is open, and a token presented is checked all the same, as the reference does', async (t) => {
  const open = await build(t)
  const known = await build(t, { env: { API_TOKENS_FILE: tokensFile(t, GOOD) } })
  const cases: Array<[string | undefined, number, string | undefined]> = [
    [undefined, 200, undefined],
    ['Basic dXNlcjpwYXNz', 200, undefined],
    [`Bearer ${GOOD}`, 200, undefined],
    [`Token ${GOOD}`, 200, undefined],
    ['Token wrong', 403, 'Invalid token'],
    ['Token', 403, 'Invalid token header. No credentials provided.'],
    ['Token a b', 403, 'Invalid token header. Token string should not contain spaces.'],
  ]
  const body = (await get(open.app, '/api/status/')).body
  for (const [authorization, status, message] of cases) {
    const headers = authorization === undefined ? {} : { authorization }
    const res = await get(known.app, '/api/status/', headers)
    t.same([res.statusCode, res.body], [status, message === undefined ? body : detail(message)], `a tokens file, ${authorization}`)
  }
  // Without a tokens file no key is known, as on a reference with no tokens.
  const unknown = await get(open.app, '/api/status/', { authorization: `Token ${GOOD}` })
  t.same([unknown.statusCode, unknown.body], [403, detail('Invalid token')], 'no tokens file: every key is unknown')
  t.equal((await get(open.app, '/api/status/', { authorization: `Bearer ${GOOD}` })).statusCode, 200, 'another scheme is no credentials')
})

t.test('a replay checks the token as Fastify does, login required or not', async (t) => {
  const { port, replays } = await build(t, { listen: true })
  const ask = (authorization: string) => raw(port, `GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n${authorization}Connection: close\r\n\r\n`)
  for (let i = 0; i < 3; i++) t.match(await ask(''), /^HTTP\/1\.1 200 OK\r\n/)
  t.equal(replays!.stats.hits, 1, 'kept and replayed')
  t.match(await ask('Authorization: Token nope\r\n'), /^HTTP\/1\.1 403 Forbidden\r\n[^]*\{"detail":"Invalid token"\}$/)
  t.equal(replays!.stats.hits, 1, 'not replayed')
})

t.test('a bad tokens file names the file and the problem, never a token', async (t) => {
  const dir = t.testdir()
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'cannot be read (ENOENT: no such file or directory'],
    ['\n# only a comment\n\n', 'holds no token'],
    [`${GOOD}\nsecret with-space\n`, 'line 2: a token cannot contain white space'],
    ['[ "secret-one", ', 'starts with [ but is not valid JSON at line 1, column 17'],
    ['[\n  "secret-one",\n  secret-two\n]', 'starts with [ but is not valid JSON at line 3, column 3'],
    ['[]', 'the list: at least one token'],
    ['["ok", "secret two"]', '/1: a token: no white space'],
    ['["ok", 7]', '/1: a token: no white space'],
  ]
  for (const [index, [text, problem]] of cases.entries()) {
    const file = join(dir, `tokens-${index}`)
    if (text !== undefined) writeFileSync(file, text)
    let message = ''
    try {
      t.fail(`${new ApiTokens(file, true).count} tokens read`)
    } catch (error) {
      message = (error as Error).message
    }
    t.ok(message.startsWith(`Bad tokens file ${file}: ${problem}`), message)
    t.notMatch(message, 'secret')
  }
})

t.test('API_TOKENS_FILE is read with or without LOGIN_REQUIRED; LOGIN_REQUIRED needs it (test/config.test.ts)', async (t) => {
  t.same(Object.entries(loadConfig({ API_TOKENS_FILE: '/etc/tokens' })).filter(([name]) => name === 'apiTokensFile' || name === 'loginRequired'),
    [['loginRequired', false], ['apiTokensFile', '/etc/tokens']])
  t.equal(loadConfig({ LOGIN_REQUIRED: 'true', API_TOKENS_FILE: '/etc/tokens' }).loginRequired, true)
})

t.test('a known token never survives in a URL as a log writes it, in any encoding, quoting, separator or prefix', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'tokens')
  const TOKENS = ['0123456789abcdef0123456789abcdef01234567', 'zZ9_-.~+/=tok', 'clé-secrète-ü']
  writeFileSync(file, TOKENS.join('\n'))
  const tokens = new ApiTokens(file, false)
  await fc.assert(fc.property(fc.constantFrom(...TOKENS).chain((token) => urlWith(token).map((url) => [token, url] as const)), ([token, url]) => {
    const redacted = tokens.redact(url)
    const latin1 = Buffer.from(token).toString('latin1')
    for (const reading of readings(redacted)) {
      if (reading.includes(latin1)) throw new Error(`${url} was logged as ${redacted}, which reads ${reading}`)
    }
    if (!redacted.includes('[token]')) throw new Error(`${url}: nothing masked`)
  }), { numRuns: 2000 })
  t.equal(tokens.redact('/api/status/?q=dcim&limit=5'), '/api/status/?q=dcim&limit=5', 'a URL without a token is written as it came')
  t.equal(tokens.redact(`/api/status/?auth=Token%20${TOKENS[0]}`), '/api/status/?auth=Token%20[token]', 'a token sent as it is, found again once the URL is decoded: masked once')
  t.equal(tokens.redact(`/api/?a=${TOKENS[1]}%${Buffer.from(TOKENS[1]!).toString('hex').replace(/(..)/g, '%$1').slice(1)}`), '/api/?a=[token][token]', 'two tokens side by side')
  t.equal(tokens.redact(`/api/status/?auth=Token%20${TOKENS[0]}&x=${TOKENS[0]!.slice(0, 10)}`), '/api/status/?auth=Token%20[token]&x=0123456789', 'only the token: a part of one is no token')
  const overlapping = join(dir, 'overlapping')
  writeFileSync(overlapping, 'abcdefgh12\nfgh12ijklm\n')
  t.equal(new ApiTokens(overlapping, false).redact('/api/?q=abcdefgh12ijklm&x=1'), '/api/?q=[token]&x=1', 'two known tokens that overlap: one mask over both')
  t.equal(new ApiTokens(undefined, false).redact(`/api/?${TOKENS[0]}`), `/api/?${TOKENS[0]}`, 'no token known: nothing to mask')
})
