import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The last line of `npm test`: how many tests passed and failed (the t.test()s of every test
 * file, from tap's results of this run) and the coverage, so that a long run ends with its verdict.
 */
const ROOT = new URL('..', import.meta.url).pathname
const files = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.test.ts'))
let passed = 0
let failed = 0
const seconds: Array<[string, number]> = []
for (const file of files) {
  const results = join(ROOT, '.tap/test-results/test', `${file}.tap`)
  if (!existsSync(results)) {
    failed++
    continue
  }
  const text = readFileSync(results, 'utf8')
  for (const line of text.split('\n')) {
    if (line.startsWith('ok ')) passed++
    else if (line.startsWith('not ok ')) failed++
  }
  seconds.push([file, Number(/^# time=([0-9.]+)ms$/m.exec(text)?.[1] ?? 0) / 1000])
}
const slowest = seconds.sort((a, b) => b[1] - a[1]).slice(0, 5).map(([file, s]) => `${file} ${s.toFixed(0)} s`)
console.log(`slowest test files: ${slowest.join(', ')}`)
// Exits 1 when coverage is short of the gate, which the line below reports.
spawnSync('npx', ['tap', 'report', 'json-summary'], { cwd: ROOT, stdio: 'ignore' })
const { total } = JSON.parse(readFileSync(join(ROOT, '.tap/report/coverage-summary.json'), 'utf8'))
const coverage = (['statements', 'branches', 'functions', 'lines'] as const).map((kind) => `${total[kind].pct} % ${kind}`).join(', ')
console.log(`${passed} passed, ${failed} failed (${files.length} test files); coverage ${coverage}`)
