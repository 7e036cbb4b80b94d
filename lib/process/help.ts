import { setting, VARIABLES } from '../../schemas/config.ts'
import { COMMANDS, PROGRAM } from './command.ts'

/** `help`: the commands and every environment variable, from the same declarations as the checks. */
export function help (): string {
  const commands = Object.values(COMMANDS).map(({ usage, summary }) => `  ${usage}\n      ${summary}\n`)
  const variables = VARIABLES.map((name) => {
    const { default: fallback, unset, description, accepts } = setting(name)
    const when = fallback === undefined ? `unset: ${unset}` : `default: ${fallback}`
    return `  ${name.padEnd(22)}${when}\n      ${description}\n      accepts ${accepts}\n`
  })
  return [
    `${PROGRAM}: the inventory service's read-only status and object-type API\n\n`,
    `usage: ${PROGRAM} [command]   (serve when none is given)\n`,
    '  in the image, the command follows the image\'s name; in a clone, node dist/service/main.js [command]\n\n',
    'commands:\n', ...commands,
    '\nenvironment variables of serve:\n', ...variables,
  ].join('')
}

/**
 * `<command> --help` and `help <command>`: the command's usage and what it does; serve's is the
 * whole help, with its variables.
 */
export function commandHelp (command: keyof typeof COMMANDS): string {
  if (command === 'serve') return help()
  const { usage, summary } = COMMANDS[command]
  return `usage: ${PROGRAM} ${usage}\n  ${summary}\n`
}
