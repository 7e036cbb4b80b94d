import { Errors, ValueErrorType } from '@sinclair/typebox/errors'
import { Check } from '@sinclair/typebox/value'
import { fs, url } from '../builtins.ts'
import { Profile } from '../../schemas/profile.ts'

/** The profile served when PROFILE is not set. */
export const DEFAULT_PROFILE_FILE = url.fileURLToPath(import.meta.resolve('#data/default-inventory.json'))

export class ProfileError extends Error {
  /** `source`: the file, or where a profile not yet written came from. */
  constructor (source: string, problem: string) {
    super(`Bad profile ${source}: ${problem}`)
    this.name = 'ProfileError'
  }
}

/** Reads and fully validates a profile file; throws a ProfileError naming the file, field and problem. */
export function loadProfile (file: string): Profile {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new ProfileError(file, `cannot be read (${(error as Error).message})`)
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    throw new ProfileError(file, `is not valid JSON (${(error as Error).message})`)
  }
  return checkProfile(data, file)
}

/** Fully validates a profile's data; throws a ProfileError naming the source, field and problem. */
export function checkProfile (data: unknown, source: string): Profile {
  const problem = schemaProblem(data) ?? consistencyProblem(data as Profile)
  if (problem !== undefined) throw new ProfileError(source, problem)
  return data as Profile
}

/** The first problem, in words: where (a JSON pointer), what is there, and what belongs there. */
function schemaProblem (data: unknown): string | undefined {
  // Check is the faster pass over valid data; Errors goes over it again only to word a problem.
  if (Check(Profile, data)) return undefined
  const first = Errors(Profile, data).First()!
  const where = first.path === '' ? 'the profile' : first.path
  const { accepts } = first.schema as unknown as { accepts: string }
  if (first.type === ValueErrorType.ObjectRequiredProperty) return `${where} is missing; it must be ${accepts}`
  // The schema is the object's: it says what the object holds.
  if (first.type === ValueErrorType.ObjectAdditionalProperties) return `${where} is not expected; the object around it must be ${accepts}`
  return `${where} must be ${accepts}; got ${shown(first.value)}`
}

/** A value as JSON, cut short: a whole list in a message helps nobody. */
function shown (value: unknown): string {
  const json = JSON.stringify(value)
  return json.length > 60 ? `${json.slice(0, 59)}…` : json
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
