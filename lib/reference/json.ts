/**
 * JSON text as the reference's renderer writes it: compact, UTF-8, with U+2028
 * and U+2029 escaped so the output is also a valid JavaScript literal.
 */
export function toJson (value: unknown): string {
  if (typeof value === 'string' && AS_IT_IS.test(value)) return '"' + value + '"'
  const json = JSON.stringify(value)
  // A test first: on text without either, replace() cost twice as much.
  return LINE_SEPARATOR.test(json) ? json.replace(LINE_SEPARATORS, (char) => '\\u' + char.charCodeAt(0).toString(16)) : json
}

/** Text JSON writes as it is: printable ASCII but `"` and `\` (a page's links, most names). */
const AS_IT_IS = /^[ !#-[\]-~]*$/

const LINE_SEPARATOR = /[\u2028\u2029]/
const LINE_SEPARATORS = /[\u2028\u2029]/g

/** A JSON object with its keys in the given order (a JS object would put integer-like keys first). */
export function orderedObject (entries: Iterable<readonly [string, string]>): string {
  const members: string[] = []
  for (const [key, value] of entries) members.push(toJson(key) + ':' + value)
  return '{' + members.join(',') + '}'
}
