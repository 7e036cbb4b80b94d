import type { IncomingHttpHeaders } from 'node:http'
import { FaultsFile, type ConnectionFault, type Delay, type Rule, type Schedule } from '../../schemas/faults.ts'
import { v8 } from '../builtins.ts'
import { readJsonFile, schemaProblem } from '../json-file.ts'
import { lastValue, type QueryParams } from '../reference/query.ts'
import { Draws } from './draws.ts'
import { headerFaults } from './envoy-headers.ts'

export class FaultsError extends Error {
  /** `source`: the file, or where a faults file not yet written came from. */
  constructor (source: string, problem: string) {
    super(`Bad faults file ${source}: ${problem}`)
    this.name = 'FaultsError'
  }
}

/** What a request gets instead of its plain answer; `source` says why, for the log (`rule 2`, `headers`). */
export interface Fault {
  source: string
  /** Milliseconds before anything else happens; 0 for none. */
  delayMs: number
  abort?: { status: number, retryAfter: number }
  connection?: ConnectionFault
  /** The answer's body dribbled out at this rate. */
  bytesPerSecond?: number
}

/** A 503's or 429's Retry-After when the rule does not say. */
const DEFAULT_RETRY_AFTER = 5

/** A rule ready to match: its values to match as lists (header names in lower case); `number` counts from 1, as people read a file. */
interface Compiled {
  number: number
  rule: Rule
  query: ReadonlyArray<readonly [string, string]>
  header: ReadonlyArray<readonly [string, string]>
}

/**
 * One reading of a faults file: its rules by path template, tried in the file's order (the
 * first that matches a request applies; a rule outside its schedule does not match), and the
 * generator their chances are drawn from. A schedule counts seconds from this reading.
 */
export class Rules {
  readonly seed: number
  /** Whether Envoy's fault headers are honoured. */
  readonly headers: boolean
  readonly count: number
  readonly #byPath: Map<string, Compiled[]>
  readonly #draws: Draws
  readonly #readAt = performance.now()

  constructor (file: FaultsFile, seed: number) {
    this.seed = seed
    this.#draws = new Draws(seed)
    this.headers = file.headers === true
    const rules = file.rules ?? []
    this.count = rules.length
    this.#byPath = new Map()
    for (const [index, rule] of rules.entries()) {
      const compiled: Compiled = {
        number: index + 1,
        rule,
        query: Object.entries(rule.query ?? {}),
        header: Object.entries(rule.header ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const),
      }
      const ofPath = this.#byPath.get(rule.path)
      if (ofPath === undefined) this.#byPath.set(rule.path, [compiled])
      else ofPath.push(compiled)
    }
  }

  /** Whether a rule matches a request now (before its chances are drawn). */
  matches (path: string, headers: IncomingHttpHeaders, query: () => QueryParams): boolean {
    return this.#first(path, headers, query) !== undefined
  }

  /**
   * The fault a request gets, if any: the first matching rule's, with the headers' (when honoured
   * and `withHeaders`) in place of the same kind. Chances are drawn in a fixed order: delay,
   * abort, connection, slow body.
   */
  draw (path: string, headers: IncomingHttpHeaders, query: () => QueryParams, withHeaders: boolean): Fault | undefined {
    const found = this.#first(path, headers, query)
    const asked = withHeaders && this.headers ? headerFaults(headers) : undefined
    if (found === undefined && asked === undefined) return undefined
    const rule = found?.rule
    const draws = this.#draws
    const fault: Fault = { source: asked === undefined ? `rule ${found!.number}` : found === undefined ? 'headers' : `rule ${found.number} and headers`, delayMs: 0 }
    if (asked?.delay !== undefined) {
      if (draws.chance(asked.delay.percent)) fault.delayMs = asked.delay.ms
    } else if (rule?.delay !== undefined && draws.chance(rule.delay.percent ?? 100)) {
      fault.delayMs = delayOf(rule.delay, draws)
    }
    if (asked?.abort !== undefined) {
      if (draws.chance(asked.abort.percent)) fault.abort = { status: asked.abort.status, retryAfter: DEFAULT_RETRY_AFTER }
    } else if (rule?.abort !== undefined && draws.chance(rule.abort.percent ?? 100)) {
      fault.abort = { status: rule.abort.status, retryAfter: rule.abort.retryAfter ?? DEFAULT_RETRY_AFTER }
    }
    if (rule?.connection !== undefined && draws.chance(rule.connection.percent ?? 100)) fault.connection = rule.connection.fault
    if (asked?.slowBody !== undefined) {
      if (draws.chance(asked.slowBody.percent)) fault.bytesPerSecond = asked.slowBody.bytesPerSecond
    } else if (rule?.slowBody !== undefined && draws.chance(rule.slowBody.percent ?? 100)) {
      fault.bytesPerSecond = rule.slowBody.bytesPerSecond
    }
    return fault.delayMs === 0 && fault.abort === undefined && fault.connection === undefined && fault.bytesPerSecond === undefined ? undefined : fault
  }

  #first (path: string, headers: IncomingHttpHeaders, query: () => QueryParams): Compiled | undefined {
    const rules = this.#byPath.get(path)
    if (rules === undefined) return undefined
    const seconds = (performance.now() - this.#readAt) / 1000
    return rules.find(({ rule: { schedule }, header, query: values }) =>
      (schedule === undefined || scheduled(schedule, seconds)) &&
      header.every(([name, value]) => headers[name] === value) &&
      (values.length === 0 || values.every(([name, value]) => lastValue(query(), name) === value)))
  }
}

/** When a schedule is on, `seconds` after the file was read. */
function scheduled ({ from = 0, to = Infinity, every, for: length = 0 }: Schedule, seconds: number): boolean {
  return seconds >= from && seconds < to && (every === undefined || (seconds - from) % every < length)
}

function delayOf (delay: Delay, draws: Draws): number {
  if ('ms' in delay) return delay.ms
  if ('min' in delay) return draws.between(delay.min, delay.max)
  return draws.lognormal(delay.median, delay.p99)
}

/**
 * The largest faults file read: 16 MiB, and no more than a sixteenth of V8's heap limit (4.8 MiB
 * under the Kubernetes base's 64 MiB), since its rules take some five times the file's size and a
 * reload holds the rules in use beside the new ones. And the most rules it may hold. More is
 * refused: no rehearsal needs it.
 */
export const MAX_FAULTS_FILE_BYTES = Math.min(16 * 1024 * 1024, Math.floor(v8.getHeapStatistics().heap_size_limit / 16))
export const MAX_RULES = 100_000

/**
 * Reads and checks a faults file against its schema and `paths`, the templates a rule may name;
 * throws a FaultsError that names the file, the field and the problem. Without a seed, one is
 * drawn (and logged by the caller, so that the run can be repeated).
 */
export function readRules (file: string, paths: readonly string[]): Rules {
  const faults = checkFaults(readJsonFile(file, MAX_FAULTS_FILE_BYTES, (problem) => new FaultsError(file, problem)), file, paths)
  return new Rules(faults, faults.seed ?? Math.floor(Math.random() * 2 ** 32))
}

/** Fully validates a faults file's data; throws a FaultsError naming the source, field and problem. */
export function checkFaults (data: unknown, source: string, paths: readonly string[]): FaultsFile {
  const problem = schemaProblem(FaultsFile, data, 'the faults file') ?? consistencyProblem(data as FaultsFile, paths)
  if (problem !== undefined) throw new FaultsError(source, problem)
  return data as FaultsFile
}

/** What the schema cannot say. */
function consistencyProblem (file: FaultsFile, paths: readonly string[]): string | undefined {
  const count = file.rules?.length ?? 0
  if (count > MAX_RULES) return `/rules holds ${count} rules; at most ${MAX_RULES} are accepted`
  for (const [index, rule] of (file.rules ?? []).entries()) {
    const at = `/rules/${index}`
    if (!paths.includes(rule.path)) return `${at}/path must be one of ${paths.join(', ')}; got ${JSON.stringify(rule.path)}`
    if (rule.delay === undefined && rule.abort === undefined && rule.connection === undefined && rule.slowBody === undefined) {
      return `${at} injects nothing; it must have one or more of delay, abort, connection and slowBody`
    }
    const { delay, schedule } = rule
    if (delay !== undefined && 'min' in delay && delay.max < delay.min) return `${at}/delay/max must be at least min (${delay.min}); got ${delay.max}`
    if (delay !== undefined && 'median' in delay) {
      if (delay.median === 0) return `${at}/delay/median must be above 0 for a lognormal delay; got 0`
      if (delay.p99 < delay.median) return `${at}/delay/p99 must be at least the median (${delay.median}); got ${delay.p99}`
    }
    if (schedule !== undefined) {
      if ((schedule.every === undefined) !== (schedule.for === undefined)) return `${at}/schedule must have both every and for, or neither; got ${JSON.stringify(schedule)}`
      if (schedule.to !== undefined && schedule.to <= (schedule.from ?? 0)) return `${at}/schedule/to must be after from (${schedule.from ?? 0}); got ${schedule.to}`
    }
  }
  return undefined
}
