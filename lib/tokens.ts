import type { IncomingMessage } from 'node:http'
import { Errors } from '@sinclair/typebox/errors'
import { TokenList } from '../schemas/tokens.ts'
import { crypto, fs } from './builtins.ts'
import { parseJson, type JsonSyntaxError } from './json-file.ts'
import { headerOf } from './http/headers.ts'
import { MESSAGES } from './errors.ts'

export class TokensError extends Error {
  constructor (file: string, problem: string) {
    super(`Bad tokens file ${file}: ${problem}`)
    this.name = 'TokensError'
  }
}

/** The reference's only scheme (DRF's TokenAuthentication keyword); any other is no credentials. */
const SCHEME = 'token'

/** A word of the header as Python's bytes.split() finds them: between runs of ASCII white space only. */
const WORD = /[^ \t\n\v\f\r]+/g

/** Node reads a header's bytes as Latin-1; the reference decodes the token's as UTF-8, and refuses it when they are not. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const NON_ASCII = /[\x80-\xff]/

/** The token as the reference reads it, or undefined when its bytes are not UTF-8. */
function decodedToken (word: string): string | undefined {
  if (!NON_ASCII.test(word)) return word
  try {
    return UTF8.decode(Buffer.from(word, 'latin1'))
  } catch {
    return undefined
  }
}

const digest = (token: string) => crypto().createHash('sha256').update(token).digest()

/**
 * Token authentication as the reference does it (DRF's, keyword `Token`): every API request that
 * presents a token is checked, login required or not, and an unknown one refused. The known
 * tokens come from a file (none without one), re-read on demand (SIGHUP). A presented token's
 * SHA-256 digest is compared with every known one in constant time, so neither the comparison nor
 * a lookup tells how close a guess came; the tokens themselves serve only to find them in the URLs
 * a log writes.
 */
export class ApiTokens {
  #digests: readonly Buffer[]
  /** Each token's UTF-8 bytes as Latin-1 text: how it reads in a URL once percent-decoded. */
  #texts: readonly string[]

  readonly file: string | undefined
  readonly loginRequired: boolean

  constructor (file: string | undefined, loginRequired: boolean) {
    this.file = file
    this.loginRequired = loginRequired
    ;[this.#digests, this.#texts] = file === undefined ? [[], []] : readTokens(file)
  }

  get count (): number {
    return this.#digests.length
  }

  /** Re-reads the file; on any problem, throws a TokensError and keeps the tokens it had. */
  reload (): void {
    if (this.file !== undefined) [this.#digests, this.#texts] = readTokens(this.file)
  }

  /**
   * undefined when the request may be answered: a known token, or none presented where login is
   * not required; otherwise the reference's 403 message.
   */
  refusal (request: IncomingMessage): string | undefined {
    const words = headerOf(request, 'authorization')?.match(WORD) ?? []
    if (words.length === 0 || words[0]!.toLowerCase() !== SCHEME) return this.loginRequired ? MESSAGES.noCredentials : undefined
    if (words.length === 1) return MESSAGES.noTokenKey
    if (words.length > 2) return MESSAGES.tokenWithSpaces
    const token = decodedToken(words[1]!)
    if (token === undefined) return MESSAGES.tokenNotUtf8
    return this.#isKnown(token) ? undefined : MESSAGES.invalidToken
  }

  /**
   * A request URL as a log may show it: every stretch of it that reads as a known token, as sent
   * or percent-decoded up to three times over (`%20`, `%252B`), replaced by `[token]`, whatever
   * surrounds it (a prefix, quotes, a separator).
   */
  redact (url: string): string {
    if (this.#texts.length === 0) return url
    const found: Array<[number, number]> = []
    let text = url
    // Where each character of `text` came from in the URL: from `from[i]` up to `to[i]`.
    let from = Array.from(text, (_, i) => i)
    let to = from.map((i) => i + 1)
    for (let round = 0; ; round++) {
      for (const token of this.#texts) {
        for (let at = text.indexOf(token); at !== -1; at = text.indexOf(token, at + 1)) found.push([from[at]!, to[at + token.length - 1]!])
      }
      if (round === 3 || !ESCAPE.test(text)) break
      ;[text, from, to] = percentDecoded(text, from, to)
    }
    if (found.length === 0) return url
    found.sort((a, b) => a[0] - b[0])
    let redacted = ''
    let done = 0
    for (const [start, end] of found) {
      if (end <= done) continue
      redacted += url.slice(done, Math.max(start, done)) + (start >= done ? '[token]' : '')
      done = end
    }
    return redacted + url.slice(done)
  }

  /** Compared with every known digest in constant time, so that no timing tells how close a guess came. */
  #isKnown (token: string): boolean {
    // No known token: nothing to compare, and nothing a timing could tell.
    if (this.#digests.length === 0) return false
    const presented = digest(token)
    const { timingSafeEqual } = crypto()
    let known = false
    for (const candidate of this.#digests) known = timingSafeEqual(presented, candidate) || known
    return known
  }
}

const ESCAPE = /%[0-9a-fA-F]{2}/

/** One round of percent-decoding, each escape a byte (as a Latin-1 character), with where each character came from. */
function percentDecoded (text: string, from: number[], to: number[]): [string, number[], number[]] {
  let decoded = ''
  const decodedFrom: number[] = []
  const decodedTo: number[] = []
  for (let i = 0; i < text.length; i++) {
    const escaped = text[i] === '%' && ESCAPE.test(text.slice(i, i + 3))
    decoded += escaped ? String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16)) : text[i]
    decodedFrom.push(from[i]!)
    decodedTo.push(to[escaped ? i + 2 : i]!)
    if (escaped) i += 2
  }
  return [decoded, decodedFrom, decodedTo]
}

/** One token a line (blank lines and `#` comments skipped), or a JSON list of tokens: their digests, and their bytes as Latin-1 text. */
function readTokens (file: string): [Buffer[], string[]] {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new TokensError(file, `cannot be read (${(error as Error).message})`)
  }
  const tokens = text.trimStart().startsWith('[') ? jsonTokens(file, text) : lineTokens(file, text)
  return [tokens.map(digest), tokens.map((token) => Buffer.from(token).toString('latin1'))]
}

function jsonTokens (file: string, text: string): string[] {
  let data: unknown
  try {
    data = parseJson(text)
  } catch (error) {
    // Where, not what: the words name the character found, which may be a token's.
    const { line, column } = error as JsonSyntaxError
    throw new TokensError(file, `starts with [ but is not valid JSON at line ${line}, column ${column}`)
  }
  const first = Errors(TokenList, data).First()
  if (first !== undefined) throw new TokensError(file, `${first.path === '' ? 'the list' : first.path}: ${first.schema.description}`)
  return data as string[]
}

function lineTokens (file: string, text: string): string[] {
  const tokens: string[] = []
  for (const [index, line] of text.split('\n').entries()) {
    const token = line.trim()
    if (token === '' || token.startsWith('#')) continue
    if (/\s/.test(token)) throw new TokensError(file, `line ${index + 1}: a token cannot contain white space`)
    tokens.push(token)
  }
  if (tokens.length === 0) throw new TokensError(file, 'holds no token')
  return tokens
}
