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
for (const file of files) {
  const results = join(ROOT, '.tap/test-results/test', `${file}.tap`)
  if (!existsSync(results)) {
    failed++
    continue
  }
  for (const line of readFileSync(results, 'utf8').split('\n')) {
    if (line.startsWith('ok ')) passed++
    else if (line.startsWith('not ok ')) failed++
  }
}
// Exits 1 when coverage is short of the gate, which the line below reports.
spawnSync('npx', ['tap', 'report', 'json-summary'], { cwd: ROOT, stdio: 'ignore' })
const { total } = JSON.parse(readFileSync(join(ROOT, '.tap/report/coverage-summary.json'), 'utf8'))
const coverage = (['statements', 'branches', 'functions', 'lines'] as const).map((kind) => `${total[kind].pct} % ${kind}`).join(', ')
console.log(`${passed} passed, ${failed} failed (${files.length} test files); coverage ${coverage}`)
