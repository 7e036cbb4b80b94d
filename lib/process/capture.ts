import { fs, path } from '../builtins.ts'
import { capture, CaptureError } from '../inventory/capture.ts'
import { checkProfile } from '../inventory/profile.ts'
import { COMMANDS, commandArgs, UsageError, wrongUsage } from './command.ts'
import { counted } from '../words.ts'

const USAGE = `${COMMANDS.capture.usage} (the token may come from INVENTORY_TOKEN instead)`

/**
 * `capture`: reads a live deployment (this service or the real one) into a profile, checks it as
 * the service checks one at start-up, and writes it to --out (atomically: a file appears only
 * whole, and only on success) or to stdout. Progress and problems go to stderr. The token is
 * never printed or written. Exit 0, 1 when the capture fails, 2 for a wrong command line.
 */
export async function captureCommand (args: string[]): Promise<number> {
  const progress = (line: string) => process.stderr.write(`${line}\n`)
  try {
    const { base, token, out, timeoutMs } = readArgs(args)
    const profile = await capture(base, { ...(token !== undefined && { token }), timeoutMs, progress })
    checkProfile(profile, `captured from ${base.href}`)
    const text = `${JSON.stringify(profile, null, 2)}\n`
    if (out === undefined) {
      process.stdout.write(text)
    } else {
      await writeWhole(out, text)
      progress(`wrote ${out}: ${counted(profile.objectTypes.length, 'object type')}`)
    }
    return 0
  } catch (error) {
    if (error instanceof UsageError) return wrongUsage(error.message, USAGE)
    progress(`capture failed: ${(error as Error).message}`)
    return 1
  }
}

function readArgs (args: string[]) {
  const { values, positionals } = commandArgs(args, {
    token: { type: 'string' },
    out: { type: 'string' },
    timeout: { type: 'string', default: '10' },
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
  return { base, token, out: values.out, timeoutMs: seconds * 1000 }
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
