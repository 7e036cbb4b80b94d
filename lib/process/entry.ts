import { COMMANDS, wrongUsage } from './command.ts'

/**
 * The commands of both entry points, main.js and the start-up snapshot (snapshot.ts): `serve`
 * (the default) starts the service; `capture` and `validate` are the profile tools; `help` lists
 * them all. Each is loaded only when asked for, so serving loads nothing of the others.
 * `entry` is what follows Node's flags to run this process's entry point, which a cluster's
 * workers run with `serve`.
 */
export async function run (entry: string[], [command = 'serve', ...args]: string[]): Promise<void> {
  switch (command) {
    case 'serve':
      if (args.length > 0) process.exitCode = wrongUsage(`serve takes no arguments (configuration comes from the environment), got ${args.join(' ')}`, COMMANDS.serve.usage)
      else await (await import('./server.ts')).serve([...entry, 'serve'])
      break
    case 'capture':
      process.exitCode = await (await import('./capture.ts')).captureCommand(args)
      break
    case 'validate':
      process.exitCode = (await import('./validate.ts')).validateCommand(args)
      break
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write((await import('./help.ts')).help())
      break
    default:
      process.exitCode = wrongUsage(`unknown command ${JSON.stringify(command)}`, Object.values(COMMANDS).map((c) => c.usage).join(' | '))
  }
}
