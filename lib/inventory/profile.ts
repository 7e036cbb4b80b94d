import { url } from '../builtins.ts'
import { readJsonFile, schemaProblem } from '../json-file.ts'
import { Profile } from '../../schemas/profile.ts'

/**
 * The profile served when PROFILE is not set, in the package's data/: two folders up from this
 * module's source (lib/inventory/) as from the bundle's files (dist/service/).
 */
export const DEFAULT_PROFILE_FILE = url.fileURLToPath(new URL('../../data/default-inventory.json', import.meta.url))

export class ProfileError extends Error {
  /** `source`: the file, or where a profile not yet written came from. */
  constructor (source: string, problem: string) {
    super(`Bad profile ${source}: ${problem}`)
    this.name = 'ProfileError'
  }
}

/** The largest profile file read: a deployment of 100,000 object types takes some 12 MiB. */
export const MAX_PROFILE_BYTES = 64 * 1024 * 1024

/** Reads and fully validates a profile file; throws a ProfileError naming the file, field and problem. */
export function loadProfile (file: string): Profile {
  return checkProfile(readJsonFile(file, MAX_PROFILE_BYTES, (problem) => new ProfileError(file, problem)), file)
}

/** Fully validates a profile's data; throws a ProfileError naming the source, field and problem. */
export function checkProfile (data: unknown, source: string): Profile {
  const problem = schemaProblem(Profile, data, 'the profile') ?? consistencyProblem(data as Profile)
  if (problem !== undefined) throw new ProfileError(source, problem)
  return data as Profile
}

/** What a schema cannot say: ids and (app_label, model) pairs are unique, a plugin has one version. */
function consistencyProblem (profile: Profile): string | undefined {
  const ids = new Map<number, number>()
  const pairs = new Map<string, number>()
  for (const [index, type] of profile.objectTypes.entries()) {
    const sameId = ids.get(type.id)
    if (sameId !== undefined) return `/objectTypes/${index}/id must be unique; got ${type.id}, the id of /objectTypes/${sameId}`
    ids.set(type.id, index)
    const pair = `${type.app_label}.${type.model}`
    const samePair = pairs.get(pair)
    if (samePair !== undefined) {
      return `/objectTypes/${index} must be a unique app_label and model; got "${type.app_label}" and "${type.model}", as /objectTypes/${samePair}`
    }
    pairs.set(pair, index)
  }
  const installed = profile.status['installed-apps']
  for (const [name, version] of Object.entries(profile.status.plugins)) {
    if (Object.hasOwn(installed, name) && installed[name] !== version) {
      return `/status/plugins/${name} must be the version in /status/installed-apps/${name} ("${installed[name]}"); got "${version}"`
    }
  }
  return undefined
}
