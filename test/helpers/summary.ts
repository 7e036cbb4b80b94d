import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { failedChecks } from './tap-results.ts'

/**
 * The last lines of `npm test`: the slowest files, the coverage, what was skipped for want of a
 * program (test/programs.ts), every test file that did not finish and every check that failed (by
 * file and line, test and check, with what it expected and found), and then, alone on the last
 * line, how many tests (the t.test()s of every file, from tap's results of this run) passed, failed
 * and were skipped, so that a long run ends with its verdict. A file that did not finish counts as
 * failed.
 */
const ROOT = new URL('../..', import.meta.url).pathname
const files = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.test.ts')).sort()
let passed = 0
let failed = 0
let skipped = 0
const reasons = new Set<string>()
const unfinished: string[] = []
const failures: string[] = []
const seconds: Array<[string, number]> = []
for (const file of files) {
  const results = join(ROOT, '.tap/test-results/test', `${file}.tap`)
  const text = existsSync(results) ? readFileSync(results, 'utf8') : ''
  // A file that ran to its end closes with its plan and its time.
  if (!/^1\.\.\d+$/m.test(text) || !/^# time=/m.test(text)) {
    unfinished.push(`test/${file}`)
    failed++
  }
  failures.push(...failedChecks(`test/${file}`, text))
  for (const line of text.split('\n')) {
    const skip = /# SKIP (needs .*)$/.exec(line)
    if (skip !== null) reasons.add(skip[1]!)
    if (line.startsWith('ok ')) skip === null ? passed++ : skipped++
    else if (line.startsWith('not ok ')) failed++
  }
  seconds.push([file, Number(/^# time=([0-9.]+)ms$/m.exec(text)?.[1] ?? 0) / 1000])
}
const slowest = seconds.sort((a, b) => b[1] - a[1]).slice(0, 5).map(([file, s]) => `${file} ${s.toFixed(0)} s`)
console.log(`slowest test files: ${slowest.join(', ')}`)
// Exits 1 when coverage is short of the gate, which the line below reports.
spawnSync('npx', ['tap', 'report', 'json-summary'], { cwd: ROOT, stdio: 'ignore' })
const summary = join(ROOT, '.tap/report/coverage-summary.json')
if (existsSync(summary)) {
  const { total } = JSON.parse(readFileSync(summary, 'utf8'))
  console.log(`coverage: ${(['statements', 'branches', 'functions', 'lines'] as const).map((kind) => `${total[kind].pct} % ${kind}`).join(', ')} (${files.length} test files)`)
}
if (reasons.size > 0) console.log(`${skipped} skipped: ${[...reasons].join('; ')}`)
if (unfinished.length > 0) console.log(`did not finish, counted as failed: ${unfinished.join(', ')}`)
for (const failure of failures) console.log(`failed: ${failure}`)
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`)
