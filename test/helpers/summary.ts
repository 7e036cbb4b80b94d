import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The last lines of `npm test`: the slowest files, the coverage, what was skipped for want of a
 * program (test/programs.ts), every test file that did not finish and every check that failed (by
 * file and line, test and check, with what it expected and found), and then, alone on the last
 * line, how many tests (the t.test()s of every file, from tap's results of this run) passed, failed
 * and were skipped, so that a long run ends with its verdict. A file that did not finish counts as
 * failed.
 */
const ROOT = new URL('../..', import.meta.url).pathname
/** The longest account of what a failed check expected and found that its line carries. */
const FOUND_CHARACTERS = 600
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
  failures.push(...failedIn(text).map(({ names, line, diff }) => `test/${file}${line} › ${names.join(' › ')}${diff}`))
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

/** A failed check: the names of the tests around it and its own, its line (`:46`), and `: expected … found …`. */
interface Failure { names: string[], line: string, diff: string }

/**
 * Each failed check of a file's TAP. A subtest is four spaces deeper than its `# Subtest:` line,
 * which its closing `ok`/`not ok` line repeats; a failed subtest whose own checks all passed (a plan
 * not met) is named itself. The YAML block right under a `not ok` line, two spaces deeper, gives
 * the check's line number (`at:`) and, for a comparison, a diff: its `-` lines expected, `+` found.
 */
function failedIn (tap: string): Failure[] {
  const subtests: string[] = []
  const failed: Failure[] = []
  /** The YAML block being read, the failure it belongs to (none for a closing line), and its diff. */
  let yaml: { indent: string, opened: boolean, key?: string, failure?: Failure, expected: string[], found: string[] } | undefined
  for (const line of tap.split('\n')) {
    if (yaml !== undefined && !yaml.opened) {
      yaml.opened = line === `${yaml.indent}---`
      if (yaml.opened) continue
      yaml = undefined
    }
    if (yaml !== undefined) {
      const { indent, failure, expected, found } = yaml
      if (line === `${indent}...`) {
        if (failure !== undefined && expected.length + found.length > 0) failure.diff = shortened(`: expected ${expected.join(' ')} · found ${found.join(' ')}`)
        yaml = undefined
      } else if (failure !== undefined) {
        // A key of the block, or a line of the value under the last key.
        const key = new RegExp(`^${indent}(\\w+):`).exec(line)?.[1]
        if (key !== undefined) yaml.key = key
        const number = new RegExp(`^${indent}  lineNumber: (\\d+)$`).exec(line)
        if (yaml.key === 'at' && number !== null) failure.line = `:${number[1]}`
        const [, sign, text] = new RegExp(`^${indent}  ([-+])(?!-- expected$|\\+\\+ actual$)(.*)$`).exec(line) ?? []
        if (yaml.key === 'diff' && sign !== undefined) (sign === '-' ? expected : found).push(text!.trim())
      }
      continue
    }
    const [, indent = '', subtest] = /^(\s*)# Subtest: (.*)$/.exec(line) ?? []
    const depth = indent.length / 4
    if (subtest !== undefined) {
      subtests.length = depth
      subtests.push(subtest)
      continue
    }
    const [, notOkIndent, name] = /^(\s*)not ok \d+ - (.*?)(?: # (?:time=|TODO|SKIP).*)?$/.exec(line) ?? []
    if (name === undefined) continue
    yaml = { indent: `${notOkIndent}  `, opened: false, expected: [], found: [] }
    const around = subtests.slice(0, notOkIndent!.length / 4)
    const closing = subtests[notOkIndent!.length / 4] === name
    if (closing && failed.some(({ names }) => names.length > around.length && names[around.length] === name)) continue
    yaml.failure = { names: [...around, name], line: '', diff: '' }
    failed.push(yaml.failure)
  }
  return failed
}

function shortened (text: string): string {
  return text.length <= FOUND_CHARACTERS ? text : `${text.slice(0, FOUND_CHARACTERS - 1)}…`
}
