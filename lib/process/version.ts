import { fs } from '../builtins.ts'

/**
 * The service's version, from its package.json: two folders up from this module's source
 * (lib/process/) and from the bundle's chunks (dist/service/) alike, as the image lays them out.
 */
export function version (): string {
  return (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
}
