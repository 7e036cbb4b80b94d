import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { Errors } from '@sinclair/typebox/errors'
import { TokenList } from '../../schemas/tokens.ts'
import { fs } from '../builtins.ts'
import { headerOf } from '../replay/headers.ts'
import { unquotePlus } from '../reference/query.ts'
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

const digest = (token: string) => createHash('sha256').update(token).digest()

/**
 * Token authentication as the reference does it (DRF's, keyword `Token`): every API request that
 * presents a token is checked, login required or not, and an unknown one refused. The known
 * tokens come from a file (none without one), re-read on demand (SIGHUP). Only their SHA-256
 * digests are kept, and a presented token is compared with every one of them in constant time,
 * so neither the comparison nor a lookup tells how close a guess came.
 */
export class ApiTokens {
  #digests: readonly Buffer[]

  readonly file: string | undefined
  readonly loginRequired: boolean

  constructor (file: string | undefined, loginRequired: boolean) {
    this.file = file
    this.loginRequired = loginRequired
    this.#digests = file === undefined ? [] : readTokens(file)
  }

  get count (): number {
    return this.#digests.length
  }

  /** Re-reads the file; on any problem, throws a TokensError and keeps the tokens it had. */
  reload (): void {
    if (this.file !== undefined) this.#digests = readTokens(this.file)
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
   * A request URL as a log may show it: every path segment, query name and query value that
   * is a known token (as sent or decoded) replaced by `[token]`.
   */
  redact (url: string): string {
    const queryAt = url.indexOf('?')
    const path = (queryAt === -1 ? url : url.slice(0, queryAt)).split('/').map((segment) => this.#masked(segment, decodedSegment)).join('/')
    if (queryAt === -1) return path
    const fields = url.slice(queryAt + 1).split('&').map((field) => {
      const eq = field.indexOf('=')
      return eq === -1 ? this.#masked(field, unquotePlus) : this.#masked(field.slice(0, eq), unquotePlus) + '=' + this.#masked(field.slice(eq + 1), unquotePlus)
    })
    return path + '?' + fields.join('&')
  }

  #masked (part: string, decode: (text: string) => string): string {
    return part !== '' && (this.#isKnown(part) || this.#isKnown(decode(part))) ? '[token]' : part
  }

  /** Compared with every known digest in constant time, so that no timing tells how close a guess came. */
  #isKnown (token: string): boolean {
    const presented = digest(token)
    let known = false
    for (const candidate of this.#digests) known = timingSafeEqual(presented, candidate) || known
    return known
  }
}

/** A path segment percent-decoded, or as it is when its escapes are malformed. */
function decodedSegment (segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** One token a line (blank lines and `#` comments skipped), or a JSON list of tokens. */
function readTokens (file: string): Buffer[] {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new TokensError(file, `cannot be read (${(error as Error).message})`)
  }
  return (text.trimStart().startsWith('[') ? jsonTokens(file, text) : lineTokens(file, text)).map(digest)
}

function jsonTokens (file: string, text: string): string[] {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    // Not the parser's message: it quotes the text around the error, which may be a token.
    throw new TokensError(file, 'starts with [ but is not valid JSON')
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
