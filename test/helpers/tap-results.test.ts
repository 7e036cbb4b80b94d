import t from 'tap'
import { readFileSync } from 'node:fs'
import { failedChecks } from './tap-results.ts'

// The failed checks the run's last lines name (summary.ts), read from what tap 21 wrote for a test
// file with a failed comparison in a subtest, an equal, a plain ok, a match, a deep comparison and
// a plan not met (test/fixtures/failed-checks.tap). A subtest that failed by its checks is not
// named again; one whose plan was not met is.
const TAP = readFileSync(new URL('../fixtures/failed-checks.tap', import.meta.url), 'utf8')

t.test('each failed check: its file and line, the tests around it, its name, and what it expected and found', async (t) => {
  t.same(failedChecks('test/checks.test.ts', TAP), [
    'test/checks.test.ts:4 › outer › inner › every answer a 200: expected Array [] · found Array [ "HTTP/1.1 408 Request Timeout: {\\"detail\\":\\"Request timeout.\\"}", ]',
    'test/checks.test.ts:7 › outer › should be equal: expected 0 · found 1',
    'test/checks.test.ts:8 › outer › plain',
    'test/checks.test.ts:9 › outer › should match pattern: expected /x/ · found "abc"',
    'test/checks.test.ts:10 › outer › should be equivalent: expected "a": 2, · found "a": 1, 3,',
    'test/checks.test.ts:12 › plan › test count(1) != plan(2): expected 2 · found 1',
  ])
})

t.test('a file whose checks all passed has none', async (t) => {
  t.same(failedChecks('test/checks.test.ts', '# Subtest: a\n    ok 1 - fine\n    1..1\nok 1 - a # time=1ms\n1..1\n'), [])
})

t.test('what a check found is cut short, so that its line stays a line', async (t) => {
  const found = 'x'.repeat(2000)
  const tap = `not ok 1 - long\n  ---\n  diff: |\n    --- expected\n    +++ actual\n    -""\n    +"${found}"\n  ...\n1..1\n`
  const [line] = failedChecks('test/long.test.ts', tap)
  t.equal(line!.length, 'test/long.test.ts › long'.length + 600)
  t.ok(line!.endsWith('x…'))
})
