import { loadProfile } from '../inventory/profile.ts'
import { COMMANDS, commandArgs, UsageError, wrongUsage } from './command.ts'
import { plural } from '../plural.ts'

/**
 * `validate`: checks a profile file exactly as the service does at start-up (the same functions,
 * the same message), for a user's CI. Exit 0 when the service would serve it, 1 when it would
 * refuse it, 2 for a wrong command line.
 */
export function validateCommand (args: string[]): number {
  try {
    const { positionals } = commandArgs(args, {})
    if (positionals.length !== 1) throw new UsageError(`expected one profile file, got ${positionals.length}`)
    const file = positionals[0]!
    const profile = loadProfile(file)
    process.stdout.write(`${file}: a valid profile, service-version ${profile.status['service-version']}, ${plural(profile.objectTypes.length, 'object type')}\n`)
    return 0
  } catch (error) {
    if (error instanceof UsageError) return wrongUsage(error.message, COMMANDS.validate.usage)
    process.stderr.write(`${(error as Error).message}\n`)
    return 1
  }
}
