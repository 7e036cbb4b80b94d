import fc from 'fast-check'

/** A text as Node reads a request's bytes: each byte one Latin-1 character. */
const asSent = (text: string) => Buffer.from(text).toString('latin1')

/**
 * A URL that carries a token somewhere, in the shapes people and tools write it: a prefix (`Token `),
 * quotes, separators around it, each character sent as it is (its bytes, as Node reads them) or
 * percent-encoded, and the whole encoded again once or twice (`%2520`).
 */
const ANY_CASE_HEX = (byte: number) => {
  const hex = byte.toString(16).padStart(2, '0')
  return `%${hex.toUpperCase()}`
}
export function urlWith (token: string) {
  const encodedChar = fc.tuple(fc.boolean(), fc.boolean()).map(([encode, lower]) => (char: string) =>
    encode ? [...Buffer.from(char)].map((byte) => lower ? ANY_CASE_HEX(byte).toLowerCase() : ANY_CASE_HEX(byte)).join('') : asSent(char))
  const encodedToken = fc.array(encodedChar, { minLength: token.length, maxLength: token.length })
    .map((encoders) => [...token].map((char, i) => encoders[i]!(char)).join(''))
  const wrapped = fc.tuple(
    fc.constantFrom('', 'Token ', 'Token%20', 'Token+', 'Bearer:', '"', "'", '(', '[', 'key,'),
    encodedToken,
    fc.constantFrom('', '"', "'", ';', ',other', ')', ']', '&x=1', '%00', '/')
  ).map(([before, middle, after]) => before + middle + after)
  const twice = (text: string) => text.replaceAll('%', '%25')
  const placed = fc.tuple(wrapped, fc.nat(2)).map(([text, rounds]) => rounds === 0 ? text : rounds === 1 ? twice(text) : twice(twice(text)))
  return fc.tuple(
    fc.constantFrom('/api/status/', '/api/extras/object-types/', '/api/'),
    fc.constantFrom('?auth=', '?key=', '?tokens=', '?', '?a=1&q=', ''),
    placed
  ).map(([path, query, value]) => query === '' ? `${path}${value}/` : `${path}${query}${value}`)
}

/** Every way a reader could decode a logged URL: as it is, and percent-decoded up to three times. */
export function readings (url: string): string[] {
  const texts = [url]
  for (let round = 0; round < 3; round++) texts.push(texts.at(-1)!.replace(/%[0-9a-f]{2}/gi, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16))))
  return texts
}
