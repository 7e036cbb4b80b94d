import './supported-node.mjs'
import { wrongUsage } from './command.ts'

/**
 * The one entry point, of `npm start`, the npm scripts and the image: `serve` (the default)
 * starts the service; `capture` and `validate` are the profile tools. Each is loaded only when
 * asked for, so serving loads nothing of the tools. A cluster worker runs this file again with
 * the primary's arguments, and so serves too.
 */
const [command = 'serve', ...args] = process.argv.slice(2)
switch (command) {
  case 'serve':
    if (args.length > 0) process.exitCode = wrongUsage(`serve takes no arguments (configuration comes from the environment), got ${args.join(' ')}`, 'serve')
    else await import('./server.ts')
    break
  case 'capture':
    process.exitCode = await (await import('./capture.ts')).captureCommand(args)
    break
  case 'validate':
    process.exitCode = (await import('./validate.ts')).validateCommand(args)
    break
  default:
    process.exitCode = wrongUsage(`unknown command ${JSON.stringify(command)}`, 'serve | capture <base-url> … | validate <profile-file>')
}
