/** The longest account of what a failed check expected and found that its line carries. */
const FOUND_CHARACTERS = 600

/**
 * Each failed check in the TAP a test file wrote, as summary.ts prints it:
 * `<file>:<line> › <test> › <check>`, and for a comparison `: expected … · found …`.
 */
export function failedChecks (file: string, tap: string): string[] {
  return failedIn(tap).map(({ names, line, diff }) => `${file}${line} › ${names.join(' › ')}${diff}`)
}

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
