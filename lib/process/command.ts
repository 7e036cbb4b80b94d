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

/** The command a user types: package.json's `bin`, which an install and npx put on the PATH. */
export const PROGRAM = 'inventory-status-api'

/** Reports a wrong command line, the problem and the usage on stderr; the exit code, 2. */
export function wrongUsage (problem: string, usage: string): number {
  process.stderr.write(`${problem}\nusage: ${PROGRAM} ${usage}\n`)
  return 2
}

/** The commands of the entry point, as the usage lines and `help` give them. */
export const COMMANDS = {
  serve: { usage: 'serve', summary: 'serve the API (the default), configured by the environment variables below' },
  capture: {
    usage: 'capture <base-url> [--token <key>] [--out <file>] [--timeout <seconds>] [--faults-out <file> [--samples <n>]]',
    summary: 'write the profile of a running deployment to stdout or --out, and with --faults-out a faults file of its latencies, timed over n more requests of each endpoint; the token may come from INVENTORY_TOKEN instead',
  },
  validate: { usage: 'validate <profile-file>', summary: 'check a profile file as start-up does' },
  help: { usage: 'help [command]', summary: 'this text (also --help, -h); of one command, its usage (also <command> --help)' },
  version: { usage: 'version', summary: 'the version of the service (also --version)' },
} as const
