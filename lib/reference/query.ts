/**
 * Query strings read and written the way the reference (Python's urllib, under
 * Django REST framework) reads and writes them, so links match it byte for byte.
 */

/** Parameter name -> its values in request order; names keep first-appearance order. */
export type QueryParams = Map<string, string[]>

/** urllib.parse.parse_qs(query, keep_blank_values=True). */
export function parseQuery (query: string): QueryParams {
  const params: QueryParams = new Map()
  // Field by field, without split()'s array, which is slower. Each field is cut out before
  // looking for its '=': a search from the field on across a query of fields without one
  // (`a&a&…`) grew with the square of its length.
  for (let start = 0; start < query.length;) {
    let end = query.indexOf('&', start)
    if (end === -1) end = query.length
    if (end > start) {
      const field = query.slice(start, end)
      const eq = field.indexOf('=')
      const name = unquotePlus(eq === -1 ? field : field.slice(0, eq))
      const value = eq === -1 ? '' : unquotePlus(field.slice(eq + 1))
      const values = params.get(name)
      if (values === undefined) params.set(name, [value])
      else values.push(value)
    }
    start = end + 1
  }
  return params
}

/** The value a Django QueryDict lookup gives: the last one. */
export function lastValue (params: QueryParams, name: string): string | undefined {
  const values = params.get(name)
  return values?.[values.length - 1]
}

/** urllib.parse.urlencode(sorted(params.items()), doseq=True). */
export function encodeQuery (params: QueryParams): string {
  return sortedNames(params).map((name) => encodeFields(name, params.get(name)!)).join('&')
}

/** Up to this many names are sorted by insertion: fewer steps than Array.sort, and no work array. */
const FEW_NAMES = 8

/** The parameter names in urlencode's order. */
export function sortedNames (params: QueryParams): string[] {
  const names = [...params.keys()]
  // Beyond a few, Array.sort: insertion takes time with the square of the names' number.
  if (names.length > FEW_NAMES) return names.sort(compareCodePoints)
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!
    let at = i
    for (; at > 0 && compareCodePoints(names[at - 1]!, name) > 0; at--) names[at] = names[at - 1]!
    names[at] = name
  }
  return names
}

/** One parameter's fields as urlencode writes them: `name=value`, joined by `&`. */
export function encodeFields (name: string, values: readonly string[]): string {
  const encodedName = quotePlus(name) + '='
  let fields = encodedName + quotePlus(values[0]!)
  for (let i = 1; i < values.length; i++) fields += '&' + encodedName + quotePlus(values[i]!)
  return fields
}

/** Python's str ordering: by code point, where JavaScript's `<` compares UTF-16 units. */
export function compareCodePoints (a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(i)!
    if (x !== y) return x - y
    if (x > 0xffff) i++
  }
  return a.length - b.length
}

const HEX = /^[0-9A-Fa-f]{2}$/

/**
 * urllib.parse.unquote_plus: '+' is a space, valid %XX runs are UTF-8 with U+FFFD
 * for bad bytes, malformed escapes stay literal. Node's parser refuses non-ASCII
 * bytes in a request target, so the text is ASCII.
 */
export function unquotePlus (text: string): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text
  if (!spaced.includes('%')) return spaced
  const bytes: number[] = []
  for (let i = 0; i < spaced.length; i++) {
    if (spaced.charCodeAt(i) === 0x25 && HEX.test(spaced.slice(i + 1, i + 3))) {
      bytes.push(parseInt(spaced.slice(i + 1, i + 3), 16))
      i += 2
    } else {
      bytes.push(spaced.charCodeAt(i))
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

const SAFE = /^[A-Za-z0-9_.~-]*$/

/** urllib.parse.quote_plus with its default safe set. */
function quotePlus (text: string): string {
  if (SAFE.test(text)) return text
  let encoded = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte)
    if (byte === 0x20) encoded += '+'
    else if (SAFE.test(char)) encoded += char
    else encoded += '%' + byte.toString(16).toUpperCase().padStart(2, '0')
  }
  return encoded
}

// Python's white space (str.isspace), which str.strip() and int() skip.
const PY_SPACE_CLASS = '[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]'
const PY_WHITESPACE = PY_SPACE_CLASS + '*'
const PY_SPACE = new RegExp(`^${PY_SPACE_CLASS}$`)
const isPySpace = (text: string, at: number) => PY_SPACE.test(text[at]!)

/** Python's str.strip(), in a walk from each end: a pattern for the end tried every position of a long blank run. */
export function pyStrip (text: string): string {
  let start = 0
  let end = text.length
  while (start < end && isPySpace(text, start)) start++
  while (end > start && isPySpace(text, end - 1)) end--
  return start === 0 && end === text.length ? text : text.slice(start, end)
}

// Python's int(): optional surrounding whitespace and sign, digits with single
// underscores between them; more than 4300 digits is a ValueError.
const PY_INT = new RegExp(`^${PY_WHITESPACE}([+-]?)([0-9](?:_?[0-9])*)${PY_WHITESPACE}$`)
const PY_MAX_DIGITS = 4300
const DIGITS = new RegExp(`^[0-9]{1,${PY_MAX_DIGITS}}$`)

/** The integer Python's int(text) gives, or undefined where it raises. */
export function parseInteger (text: string): bigint | undefined {
  // Plain digits, the usual case: up to 15, read as a double, which holds them exactly.
  if (text.length <= 15) {
    let value = 0
    let at = 0
    for (; at < text.length; at++) {
      const digit = text.charCodeAt(at) - 0x30
      if (digit < 0 || digit > 9) break
      value = value * 10 + digit
    }
    if (at === text.length && at > 0) return BigInt(value)
  }
  if (DIGITS.test(text)) return BigInt(text)
  const match = PY_INT.exec(text)
  if (match === null) return undefined
  const digits = match[2]!.replaceAll('_', '')
  if (digits.length > PY_MAX_DIGITS) return undefined
  const value = BigInt(digits)
  return match[1] === '-' ? -value : value
}
