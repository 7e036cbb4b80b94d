import { fs } from './builtins.ts'

/**
 * The service's version, from the nearest package.json above this module: one folder up from its
 * source (lib/), two from the bundle's files (dist/service/), as the image lays them out.
 */
export function version (): string {
  const file = ['../package.json', '../../package.json'].map((up) => new URL(up, import.meta.url)).find((url) => fs.existsSync(url))!
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version
}
