import type { ParseArgsConfig } from 'node:util'
import { util } from '../builtins.ts'

/** A command line the command cannot take. */
export class UsageError extends Error {
  constructor (problem: string) {
    super(problem)
    this.name = 'UsageError'
  }
}

/** node:util's parseArgs, whose complaints (an unknown option, a missing value) become UsageErrors. */
export function commandArgs<Options extends NonNullable<ParseArgsConfig['options']>> (args: string[], options: Options) {
  try {
    return util.parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** Reports a wrong command line, the problem and the usage on stderr; the exit code, 2. */
export function wrongUsage (problem: string, usage: string): number {
  process.stderr.write(`${problem}\nusage: ${usage}\n`)
  return 2
}
