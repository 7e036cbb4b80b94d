import { lastValue, pyStrip, type QueryParams } from './query.ts'

/** Exact matches (an id in canonical decimal form) and `q`, all AND-ed. */
export interface Filter {
  readonly id?: string
  readonly appLabel?: string
  readonly model?: string
  /** Already upper-cased. */
  readonly q?: string
}

/** What the reference's form fields say of a value they refuse. */
export const FIELD_MESSAGES = {
  notANumber: 'Enter a number.',
  tooLarge: 'Ensure this value is less than or equal to 1e+50.',
  nullCharacter: 'Null characters are not allowed.',
} as const

/** Filter values the reference refuses: its messages by filter, in its order (the API answers a 400). */
export class InvalidFilters extends Error {
  readonly fields: Readonly<Record<string, readonly string[]>>

  constructor (fields: Record<string, string[]>) {
    super('Invalid filters.')
    this.name = 'InvalidFilters'
    this.fields = fields
  }
}

/** A text filter's last value, stripped; undefined when absent, empty or blank: no filter. */
function textOf (params: QueryParams, name: string): string | undefined {
  const value = lastValue(params, name)
  if (value === undefined) return undefined
  const stripped = pyStrip(value)
  return stripped === '' ? undefined : stripped
}

const NO_FILTER: Filter = Object.freeze({})

/**
 * The filters of a list or item request, read as the reference's filter set reads them: each
 * takes ONE value (the last of a repeated parameter); an empty one is no filter. Its form field
 * then strips the value: a blank text is no filter either, but a blank number is not a number.
 * Throws the reference's 400 naming every invalid one, in its order.
 */
export function filterOf (params: QueryParams): Filter {
  // Most requests filter nothing: no object, no checks.
  if (!params.has('id') && !params.has('app_label') && !params.has('model') && !params.has('q')) return NO_FILTER
  const problems: Record<string, string[]> = {}
  const id = lastValue(params, 'id')
  const appLabel = textOf(params, 'app_label')
  const model = textOf(params, 'model')
  const q = textOf(params, 'q')
  let idKey: string | undefined
  if (id !== undefined && id !== '') {
    const read = id.includes('\0') ? FIELD_MESSAGES.nullCharacter : decimalId(pyStrip(id))
    if (typeof read === 'string') problems.id = [read]
    else idKey = String(read)
  }
  for (const [name, value] of [['app_label', appLabel], ['model', model], ['q', q]] as const) {
    if (value?.includes('\0') === true) problems[name] = [FIELD_MESSAGES.nullCharacter]
  }
  if (Object.keys(problems).length > 0) throw new InvalidFilters(problems)
  return {
    ...(idKey !== undefined && { id: idKey }),
    ...(appLabel !== undefined && { appLabel }),
    ...(model !== undefined && { model }),
    // Matched like SQL's UPPER(column) LIKE UPPER('%value%'): `_` and `%` are literal here.
    ...(q !== undefined && { q: q.toUpperCase() }),
  }
}

// Python's Decimal(): sign, digits with an optional fraction (or a fraction alone), an optional
// exponent; underscores between digits. Infinity and NaN parse there too, but are not numbers to a form.
const DECIMAL = /^([+-]?)(?:([0-9](?:_?[0-9])*)(?:\.((?:[0-9](?:_?[0-9])*)?))?|\.([0-9](?:_?[0-9])*))(?:[eE]([+-]?[0-9](?:_?[0-9])*))?$/

/** The largest value the reference's number filter takes: the double nearest 1e50, exactly. */
const MAX_VALUE = BigInt(1e50)

/**
 * An id filter value as the reference reads it: a decimal number, at most 1e50, truncated
 * toward zero to an integer (what the database compares with). The integer, ±Infinity when
 * it is far past any id (it then matches nothing), or the reference's message.
 */
function decimalId (text: string): number | string {
  const match = DECIMAL.exec(text)
  if (match === null) return FIELD_MESSAGES.notANumber
  const [, sign, whole = '', fraction = '', fractionOnly, exponentText = '0'] = match
  const digits = (whole + (fractionOnly ?? fraction)).replaceAll('_', '').replace(/^0+/, '')
  if (digits === '') return 0
  // value = digits × 10^scale
  const exponent = Number(exponentText.replaceAll('_', ''))
  const scale = exponent - (fractionOnly ?? fraction).replaceAll('_', '').length
  const integerDigits = digits.length + scale
  if (integerDigits <= 0) return 0
  if (integerDigits <= 16) {
    const integer = scale >= 0 ? digits + '0'.repeat(scale) : digits.slice(0, integerDigits)
    return sign === '-' ? -Number(integer) : Number(integer)
  }
  // Past 2^53 an id cannot be stored here (a profile's ids are at most 2^31 - 1): it matches
  // nothing, unless it is past the reference's bound, which has no negative counterpart.
  if (sign === '-') return -Infinity
  if (integerDigits < 51) return Infinity
  if (integerDigits > 51) return FIELD_MESSAGES.tooLarge
  const excess = BigInt(scale >= 0 ? digits + '0'.repeat(scale) : digits.slice(0, 51)) - MAX_VALUE
  return excess > 0n || (excess === 0n && /[1-9]/.test(digits.slice(51))) ? FIELD_MESSAGES.tooLarge : Infinity
}
