import './supported-node.mjs'
import { COMMANDS, wrongUsage } from './command.ts'

/**
 * The one entry point, of `npm start`, the npm scripts and the image: `serve` (the default)
 * starts the service; `capture` and `validate` are the profile tools; `help` lists them all.
 * Each is loaded only when asked for, so serving loads nothing of the others. A cluster worker
 * runs this file again with the primary's arguments, and so serves too.
 */
const [command = 'serve', ...args] = process.argv.slice(2)
switch (command) {
  case 'serve':
    if (args.length > 0) process.exitCode = wrongUsage(`serve takes no arguments (configuration comes from the environment), got ${args.join(' ')}`, COMMANDS.serve.usage)
    else await import('./server.ts')
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
