import { fs, path } from '../builtins.ts'
import { capture, CaptureError, sampleLatencies, type Latencies, type Progress } from '../inventory/capture.ts'
import { checkProfile } from '../inventory/profile.ts'
import { COMMANDS, commandArgs, UsageError, wrongUsage } from './command.ts'
import { plural } from '../plural.ts'

const USAGE = `${COMMANDS.capture.usage} (the token may come from INVENTORY_TOKEN instead)`

/** The seed of a captured faults file: a rehearsal from it can be repeated. */
const CAPTURED_SEED = 1

/**
 * `capture`: reads a live deployment (this service or the real one) into a profile, checks it as
 * the service checks one at start-up, and writes it to --out (atomically: a file appears only
 * whole, and only on success) or to stdout. With --faults-out, it also writes the median and p99
 * of each endpoint's latency, from its own requests and --samples more of each, as a faults file
 * of lognormal delays. Progress and problems go to stderr. The token is never printed or written.
 * Exit 0, 1 when the capture fails, 2 for a wrong command line.
 */
export async function captureCommand (args: string[]): Promise<number> {
  const progress = progressOn(process.stderr)
  try {
    const { base, token, out, timeoutMs, faultsOut, samples } = readArgs(args)
    const latencies: Latencies = new Map()
    const options = { ...(token !== undefined && { token }), timeoutMs, progress, latencies }
    const profile = await capture(base, options)
    checkProfile(profile, `captured from ${base.href}`)
    // The faults file is checked before anything is written: a capture writes all or nothing.
    let faults: string | undefined
    if (faultsOut !== undefined) {
      await sampleLatencies(base, profile.objectTypes[0]?.id, samples, options)
      faults = `${JSON.stringify(await latencyFaults(latencies, base, progress), null, 2)}\n`
    }
    const text = `${JSON.stringify(profile, null, 2)}\n`
    if (out === undefined) {
      process.stdout.write(text)
    } else {
      await writeWhole(out, text)
      progress.line(`wrote ${out}: ${plural(profile.objectTypes.length, 'object type')}`)
    }
    if (faultsOut !== undefined) {
      await writeWhole(faultsOut, faults!)
      progress.line(`wrote ${faultsOut}: the latencies of ${plural(latencies.size, 'endpoint')}`)
    }
    return 0
  } catch (error) {
    if (error instanceof UsageError) return wrongUsage(error.message, USAGE)
    progress.line(`capture failed: ${(error as Error).message}`)
    return 1
  }
}

function readArgs (args: string[]) {
  const { values, positionals } = commandArgs(args, {
    token: { type: 'string' },
    out: { type: 'string' },
    timeout: { type: 'string', default: '10' },
    'faults-out': { type: 'string' },
    samples: { type: 'string' },
  })
  if (positionals.length !== 1) throw new UsageError(`expected one base URL, got ${positionals.length}`)
  let base: URL
  try {
    base = new URL(positionals[0]!)
  } catch {
    throw new UsageError(`${JSON.stringify(positionals[0])} is not a URL`)
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError(`${base.href} is not an http or https URL`)
  if (base.search !== '' || base.hash !== '') throw new UsageError(`${base.href}: the base URL has no query or fragment`)
  // The API is under the base URL: https://host/netbox means https://host/netbox/api/….
  if (!base.pathname.endsWith('/')) base.pathname += '/'
  const seconds = Number(values.timeout)
  if (!(seconds > 0 && seconds <= 600)) throw new UsageError(`--timeout must be a number of seconds, more than 0 and at most 600; got ${JSON.stringify(values.timeout)}`)
  const token = values.token ?? process.env.INVENTORY_TOKEN
  if (token === '') throw new UsageError('the token is empty')
  if (values.samples !== undefined && values['faults-out'] === undefined) throw new UsageError('--samples times requests for --faults-out, which is missing')
  const samples = Number(values.samples ?? 0)
  if (!/^[0-9]{1,6}$/.test(values.samples ?? '0') || samples > 100_000) throw new UsageError(`--samples must be a whole number from 0 to 100000; got ${JSON.stringify(values.samples)}`)
  return { base, token, out: values.out, timeoutMs: seconds * 1000, faultsOut: values['faults-out'], samples }
}

/**
 * A faults file that delays each endpoint timed as the deployment answered it: a lognormal delay
 * of its median and p99 (the nearest ranks), in milliseconds to a tenth.
 */
async function latencyFaults (latencies: Latencies, base: URL, progress: Progress) {
  const rules = [...latencies].map(([path, times]) => {
    const sorted = times.toSorted((a, b) => a - b)
    const rank = (share: number) => Math.round(sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)]! * 10) / 10
    const [median, p99] = [Math.max(rank(0.5), 0.1), Math.max(rank(0.99), 0.1)]
    progress.line(`latency of ${path}: median ${median} ms, p99 ${p99} ms (${plural(sorted.length, 'request')})`)
    return { path, delay: { median, p99 } }
  })
  // Loaded only for --faults-out: serving starts without them.
  const [{ checkFaults }, { FAULT_PATHS }] = await Promise.all([import('../faults/rules.ts'), import('../paths.ts')])
  return checkFaults({ seed: CAPTURED_SEED, rules }, `captured from ${base.href}`, FAULT_PATHS)
}

/** A terminal's progress line is rewritten at most this often. */
const REDRAW_MS = 100

/**
 * Progress on stderr. On a terminal, a step's line is rewritten in place as it goes and stays once
 * finished; elsewhere (a log, a pipe) only its finished line is written.
 */
export function progressOn (stream: Pick<NodeJS.WriteStream, 'isTTY' | 'write'>): Progress {
  /** A step's line is on the terminal, unfinished: the next line starts below it. */
  let drawn = false
  let drawnAt = -REDRAW_MS
  return {
    line (text) {
      stream.write(`${drawn ? '\n' : ''}${text}\n`)
      drawn = false
    },
    step (text, finished) {
      if (stream.isTTY !== true) {
        if (finished) stream.write(`${text}\n`)
        return
      }
      const now = performance.now()
      if (!finished && now - drawnAt < REDRAW_MS) return
      // The next step's first update is drawn at once.
      drawnAt = finished ? -REDRAW_MS : now
      // Back to the start of the line, and clear it.
      stream.write(`\r\x1b[K${text}${finished ? '\n' : ''}`)
      drawn = !finished
    },
  }
}

/** Writes beside the target, then renames: a reader sees the old file or the whole new one, never a part. */
async function writeWhole (file: string, text: string): Promise<void> {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  try {
    await fs.promises.writeFile(temporary, text, { flag: 'wx' })
    await fs.promises.rename(temporary, file)
  } catch (error) {
    await fs.promises.rm(temporary, { force: true })
    throw new CaptureError(`cannot write ${file} (${(error as Error).message})`)
  }
}
