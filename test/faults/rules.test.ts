import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FAULT_PATHS } from '../../lib/paths.ts'
import { Draws } from '../../lib/faults/draws.ts'
import { headerFaults, MAX_HEADER_DELAY_MS } from '../../lib/faults/envoy-headers.ts'
import { readRules, Rules } from '../../lib/faults/rules.ts'
import { command } from '../helpers/process.ts'
import { thrown } from '../helpers/thrown.ts'

const NO_QUERY = () => new Map<string, string[]>()

t.test('a bad faults file is refused with the file, the field and the problem', async (t) => {
  const dir = t.testdir()
  const cases: Array<[unknown, string]> = [
    ['{"rules": [', 'is not valid JSON at line 1, column 12: Unexpected end of JSON input'],
    ['{\n  "rules": [\n    {"path": "/api/status/", "abort": {"status": 503}},\n  ]\n}', 'is not valid JSON at line 4, column 3: Unexpected token \']\''],
    [[], 'the faults file must be an object of seed, headers and rules, each optional; got []'],
    [{ rule: [] }, '/rule is not expected; the object around it must be an object of seed, headers and rules, each optional'],
    [{ seed: -1 }, '/seed must be a whole number from 0 to 4294967295; got -1'],
    [{ headers: 'yes' }, '/headers must be true or false; got "yes"'],
    [{ rules: [{ path: '/api/status', delay: { ms: 1 } }] }, `/rules/0/path must be one of ${FAULT_PATHS.join(', ')}; got "/api/status"`],
    [{ rules: [{ path: '/api/extras/object-types/:id/', delay: { ms: 1 } }] }, `/rules/0/path must be one of ${FAULT_PATHS.join(', ')}; got "/api/extras/object-types/:id/"`],
    [{ rules: [{ path: '/api/status/' }] }, '/rules/0 injects nothing; it must have one or more of delay, abort, connection and slowBody'],
    [{ rules: [{ path: '/api/status/', delay: { ms: '300' } }] },
      '/rules/0/delay must be a delay: {"ms"} fixed, {"min", "max"} uniform or {"median", "p99"} lognormal, each with an optional "percent"; got {"ms":"300"}'],
    [{ rules: [{ path: '/api/status/', delay: { min: 300, max: 100 } }] }, '/rules/0/delay/max must be at least min (300); got 100'],
    [{ rules: [{ path: '/api/status/', delay: { median: 300, p99: 100 } }] }, '/rules/0/delay/p99 must be at least the median (300); got 100'],
    [{ rules: [{ path: '/api/status/', delay: { median: 0, p99: 100 } }] }, '/rules/0/delay/median must be above 0 for a lognormal delay; got 0'],
    [{ rules: [{ path: '/api/status/', abort: { status: 404 } }] }, '/rules/0/abort/status must be one of 429, 500, 502, 503; got 404'],
    [{ rules: [{ path: '/api/status/', abort: { status: 503, percent: 101 } }] }, '/rules/0/abort/percent must be a number from 0 to 100 (the share of matching requests; 100 when absent); got 101'],
    [{ rules: [{ path: '/api/status/', connection: { fault: 'timeout' } }] },
      '/rules/0/connection/fault must be reset (a TCP reset, no answer), close (closed with no answer) or cut (the body cut short); got "timeout"'],
    [{ rules: [{ path: '/api/status/', slowBody: { bytesPerSecond: 0 } }] }, '/rules/0/slowBody/bytesPerSecond must be a whole number of bytes per second from 1 to 1073741824; got 0'],
    [{ rules: [{ path: '/api/status/', abort: { status: 503 }, schedule: { every: 60 } }] }, '/rules/0/schedule must have both every and for, or neither; got {"every":60}'],
    [{ rules: [{ path: '/api/status/', abort: { status: 503 }, schedule: { from: 60, to: 30 } }] }, '/rules/0/schedule/to must be after from (60); got 30'],
    [{ rules: [{ path: '/api/status/', abort: { status: 503 }, schedule: { to: 0 } }] }, '/rules/0/schedule/to must be after from (0); got 0'],
    [{ rules: [{ path: '/api/status/', abort: { status: 503 }, query: { limit: 1 } }] }, '/rules/0/query/limit must be the text the query parameter must be; got 1'],
    [{ rules: [{ path: '/api/status/', abort: { status: 503 }, header: 'x-tenant' }] }, '/rules/0/header must be an object of header names and the texts they must be; got "x-tenant"'],
  ]
  for (const [index, [content, problem]] of cases.entries()) {
    const file = join(dir, `${index}.json`)
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
    const error = thrown(() => readRules(file, FAULT_PATHS))
    t.same([error?.name, error?.message], ['FaultsError', `Bad faults file ${file}: ${problem}`], problem)
  }
  t.throws(() => readRules(join(dir, 'none.json'), FAULT_PATHS), { message: new RegExp(`^Bad faults file ${join(dir, 'none.json')}: cannot be read \\(ENOENT`) })
})

t.test('a bad FAULTS stops the start: one line that names the file, the field and the problem, exit 1', async (t) => {
  const file = join(t.testdir(), 'faults.json')
  writeFileSync(file, JSON.stringify({ rules: [{ path: '/api/status/', abort: { status: 418 } }] }))
  const { code, stdout, stderr } = await command([], { FAULTS: file, PORT: '0', HOST: '127.0.0.1' })
  t.same([code, stdout, stderr], [1, '', `Bad faults file ${file}: /rules/0/abort/status must be one of 429, 500, 502, 503; got 418\n`])
})

t.test('the first matching rule applies: path, query, header and schedule narrow it', async (t) => {
  // The rules' clock, stopped: a schedule counts from the moment they are read (a whole number of
  // milliseconds, so that the seconds after it are exact at the bounds).
  const now = performance.now
  const readAt = 1_000_000
  let clock = readAt
  performance.now = () => clock
  t.teardown(() => { performance.now = now })
  const rules = new Rules({
    seed: 1,
    rules: [
      { path: '/api/status/', query: { limit: '1' }, header: { 'X-Tenant': 'a' }, abort: { status: 500 } },
      { path: '/api/status/', abort: { status: 502 }, schedule: { from: 10, to: 100, every: 30, for: 5 } },
      { path: '/api/status/', abort: { status: 503 } },
    ],
  }, 1)
  const status = (headers = {}, query: [string, string[]][] = []) => rules.draw('/api/status/', headers, () => new Map(query), false)?.abort?.status
  t.equal(status({ 'x-tenant': 'a' }, [['limit', ['5', '1']]]), 500, 'the query\'s last value and the header (any case in the file)')
  t.equal(status({ 'x-tenant': 'a' }, [['limit', ['1', '5']]]), 503)
  t.equal(status({}, [['limit', ['1']]]), 503)
  t.equal(rules.draw('/api/extras/object-types/', {}, NO_QUERY, false), undefined, 'no rule names the path')
  const both = new Rules({ headers: true, rules: [{ path: '/api/status/', delay: { ms: 5 }, abort: { status: 500 } }] }, 1)
  t.same(both.draw('/api/status/', { 'x-envoy-fault-abort-request': '502' }, NO_QUERY, true), { source: 'rule 1 and headers', delayMs: 5, abort: { status: 502, retryAfter: 5 } },
    'a header replaces the rule\'s fault of its kind, the rule\'s others stay')
  t.same(both.draw('/api/status/', { 'x-envoy-fault-abort-request': '502' }, NO_QUERY, false), { source: 'rule 1', delayMs: 5, abort: { status: 500, retryAfter: 5 } },
    'where headers may not fault (a probe), the rule alone')
  for (const [seconds, expected] of [[0, 503], [9.99, 503], [10, 502], [14.99, 502], [15, 503], [39.99, 503], [40, 502], [70, 502], [75, 503], [99.99, 503], [100, 503], [1000, 503]] as const) {
    clock = readAt + seconds * 1000
    t.equal(status(), expected, `${seconds} s after the file was read`)
  }
})

t.test('draws: a percentage is the share it says; the same seed draws the same; a lognormal has its median and p99', async (t) => {
  const draws = new Draws(42)
  const hits = Array.from({ length: 100_000 }, () => draws.chance(30)).filter(Boolean).length
  t.ok(Math.abs(hits - 30_000) < 1000, `30 %: ${hits} of 100000`)
  t.equal(Array.from({ length: 1000 }, () => draws.chance(0)).filter(Boolean).length, 0, '0 %: never')
  t.equal(Array.from({ length: 1000 }, () => draws.chance(100)).filter(Boolean).length, 1000, '100 %: always')
  const sequence = (seed: number) => { const d = new Draws(seed); return Array.from({ length: 20 }, () => d.between(0, 1000)) }
  t.same(sequence(7), sequence(7))
  t.not(sequence(7).join(), sequence(8).join())
  const samples = Array.from({ length: 100_000 }, () => draws.lognormal(80, 400)).sort((a, b) => a - b)
  const [median, p99] = [samples[50_000]!, samples[99_000]!]
  t.ok(Math.abs(median - 80) < 80 * 0.03, `median ${median.toFixed(1)}, configured 80`)
  t.ok(Math.abs(p99 - 400) < 400 * 0.05, `p99 ${p99.toFixed(1)}, configured 400`)
  t.ok(samples.every((value) => value > 0 && Number.isFinite(value)))
  t.equal(new Draws(1).lognormal(50, 50), 50, 'a p99 equal to the median: always the median')
})

t.test('Envoy\'s headers are read as Envoy reads them', async (t) => {
  t.equal(headerFaults({}), undefined)
  t.same(headerFaults({ 'x-envoy-fault-delay-request': '200', 'x-envoy-fault-delay-request-percentage': '250' }), { delay: { ms: 200, percent: 100 } }, 'a percentage is capped at 100')
  t.same(headerFaults({ 'x-envoy-fault-abort-request': ' 503 ', 'x-envoy-fault-abort-request-percentage': 'half' }), { abort: { status: 503, percent: 100 } }, 'a percentage that is no whole number: 100')
  t.same(headerFaults({ 'x-envoy-fault-throughput-response': '2', 'x-envoy-fault-throughput-response-percentage': '10' }), { slowBody: { bytesPerSecond: 2048, percent: 10 } }, 'KiB per second')
  t.same(headerFaults({ 'x-envoy-fault-delay-request': '9999999999' }), { delay: { ms: MAX_HEADER_DELAY_MS, percent: 100 } }, 'a delay capped at 60 s')
  t.equal(MAX_HEADER_DELAY_MS, 60_000)
  for (const [name, value] of [['x-envoy-fault-abort-request', '199'], ['x-envoy-fault-abort-request', '600'], ['x-envoy-fault-abort-request', '5xx'],
    ['x-envoy-fault-delay-request', '0'], ['x-envoy-fault-delay-request', '-5'], ['x-envoy-fault-throughput-response', '0']] as const) {
    t.equal(headerFaults({ [name]: value }), undefined, `${name}: ${value} asks for nothing`)
  }
})
