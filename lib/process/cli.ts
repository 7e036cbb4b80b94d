import { captureCommand } from './capture.ts'
import { COMMANDS, wrongUsage } from './command.ts'
import { commandHelp, help } from './help.ts'
import { serve } from './serve.ts'
import { validateCommand } from './validate.ts'
import { version } from '../version.ts'

/**
 * Runs the command a command line names: `serve` (the default) starts the service; `capture`
 * and `validate` are the profile tools; `help` lists them all, and `help <command>` or
 * `<command> --help` gives one's usage. A cluster worker runs the entry point again with the
 * primary's arguments, and so serves too. `keepCode`: the bundle's, which keeps V8's code of it
 * for the next start (code-cache.ts), called once the service has answered.
 */
export async function run ([command = 'serve', ...args]: string[], keepCode = () => {}): Promise<void> {
  if (isCommand(command) && (args.includes('--help') || args.includes('-h'))) {
    process.stdout.write(commandHelp(command))
    return
  }
  switch (command) {
    case 'serve':
      if (args.length > 0) process.exitCode = wrongUsage(`serve takes no arguments (configuration comes from the environment), got ${args.join(' ')}`, COMMANDS.serve.usage)
      else await serve(keepCode)
      break
    case 'capture':
      process.exitCode = await captureCommand(args)
      break
    case 'validate':
      process.exitCode = validateCommand(args)
      break
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(isCommand(args[0]) ? commandHelp(args[0]) : help())
      break
    case 'version':
    case '--version':
      process.stdout.write(`${version()}\n`)
      break
    default:
      process.exitCode = wrongUsage(`unknown command ${JSON.stringify(command)}`, `[${Object.values(COMMANDS).map((c) => c.usage).join(' | ')}]`)
  }
}

function isCommand (name: string | undefined): name is keyof typeof COMMANDS {
  return name !== undefined && Object.hasOwn(COMMANDS, name)
}
