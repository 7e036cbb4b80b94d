import type { TSchema } from '@sinclair/typebox'
import { Errors, ValueErrorType } from '@sinclair/typebox/errors'
import { Check } from '@sinclair/typebox/value'
import { parse, type ParseError } from 'jsonc-parser'
import { fs } from './builtins.ts'

/**
 * The JSON files the service reads (a profile, a faults file): read and parsed, or the problem
 * in words, for an error that names the file. A file larger than `maxBytes` is not read.
 */
export function readJsonFile (file: string, maxBytes: number, problem: (words: string) => Error): unknown {
  let text: string
  let descriptor: number | undefined
  try {
    descriptor = fs.openSync(file, 'r')
    const { size } = fs.fstatSync(descriptor)
    if (size > maxBytes) throw new TooLarge(size)
    text = fs.readFileSync(descriptor, 'utf8')
  } catch (error) {
    throw problem(error instanceof TooLarge
      ? `is ${mebibytes(error.size)}; at most ${mebibytes(maxBytes)} is accepted`
      : `cannot be read (${(error as Error).message})`)
  } finally {
    if (descriptor !== undefined) fs.closeSync(descriptor)
  }
  try {
    return parseJson(text)
  } catch (error) {
    const { line, column, words } = error as JsonSyntaxError
    throw problem(`is not valid JSON at line ${line}, column ${column}: ${words}`)
  }
}

/** Where JSON text breaks, as an editor counts (from 1), and what breaks there in V8's words, without its excerpt of the text. */
export class JsonSyntaxError extends Error {
  readonly line: number
  readonly column: number
  readonly words: string

  constructor (text: string, offset: number, words: string) {
    const before = text.slice(0, offset).split('\n')
    const [line, column] = [before.length, before.at(-1)!.length + 1]
    super(`line ${line}, column ${column}: ${words}`)
    this.line = line
    this.column = column
    this.words = words
  }
}

/**
 * JSON.parse, after a byte order mark an editor may have written; a JsonSyntaxError where it fails.
 * V8 gives the offset of most errors; of an unexpected token or the end of the text it gives none,
 * and jsonc-parser's reading of the same text finds it. V8's excerpt of the text around the error
 * (cut short with `...` on either side) is left out: it would break the one line the error is.
 */
export function parseJson (text: string): unknown {
  const json = text.replace(/^\uFEFF/, '')
  try {
    return JSON.parse(json)
  } catch (error) {
    const { message } = error as SyntaxError
    const offset = / at position (\d+)/.exec(message)?.[1]
    const words = message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '').replace(/(?: in JSON)? at position \d+.*$/s, '')
    if (offset !== undefined) throw new JsonSyntaxError(json, Number(offset), words)
    const errors: ParseError[] = []
    parse(json, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false })
    throw new JsonSyntaxError(json, errors[0]!.offset, words)
  }
}

/** A file over the size a reader takes. */
class TooLarge extends Error {
  readonly size: number

  constructor (size: number) {
    super(`${size} bytes`)
    this.size = size
  }
}

const mebibytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1).replace(/\.0$/, '')} MiB`

/**
 * The first way data breaks its schema, in words: where (a JSON pointer, or `whole` for the
 * whole), what is there, and what belongs there (each schema's `accepts`).
 */
export function schemaProblem (schema: TSchema, data: unknown, whole: string): string | undefined {
  // Check is the faster pass over valid data; Errors goes over it again only to word a problem.
  if (Check(schema, data)) return undefined
  const first = Errors(schema, data).First()!
  const where = first.path === '' ? whole : first.path
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
