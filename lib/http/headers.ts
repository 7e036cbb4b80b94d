import type { IncomingMessage } from 'node:http'
import { HEX_DIGITS as HEX } from './hex.ts'

/** Every JSON answer: the reference's Content-Type carries no charset. */
export const JSON_HEADERS = { 'content-type': 'application/json', vary: 'Accept' } as const

/** The header every answer under /api/ carries a new value of, also when replayed. */
export const REQUEST_ID = 'x-request-id'

/**
 * A fresh random UUID v4 (RFC 9562), made as one flat string. Its 122 random bits come from
 * Math.random, V8's xorshift128+, which each process seeds from the system: an id that follows an
 * answer through the logs must be unique, not secret, and node:crypto is the built-in that takes
 * Node longest to load (docs/performance.md).
 */
export function requestId (): string {
  const a = random32()
  const b = random32()
  const c = random32()
  const d = random32()
  return String.fromCharCode(
    HEX[a >>> 28]!, HEX[(a >>> 24) & 15]!, HEX[(a >>> 20) & 15]!, HEX[(a >>> 16) & 15]!,
    HEX[(a >>> 12) & 15]!, HEX[(a >>> 8) & 15]!, HEX[(a >>> 4) & 15]!, HEX[a & 15]!, DASH,
    HEX[b >>> 28]!, HEX[(b >>> 24) & 15]!, HEX[(b >>> 20) & 15]!, HEX[(b >>> 16) & 15]!, DASH,
    VERSION, HEX[(b >>> 8) & 15]!, HEX[(b >>> 4) & 15]!, HEX[b & 15]!, DASH,
    HEX[VARIANT | (c >>> 30)]!, HEX[(c >>> 24) & 15]!, HEX[(c >>> 20) & 15]!, HEX[(c >>> 16) & 15]!, DASH,
    HEX[(c >>> 12) & 15]!, HEX[(c >>> 8) & 15]!, HEX[(c >>> 4) & 15]!, HEX[c & 15]!,
    HEX[d >>> 28]!, HEX[(d >>> 24) & 15]!, HEX[(d >>> 20) & 15]!, HEX[(d >>> 16) & 15]!,
    HEX[(d >>> 12) & 15]!, HEX[(d >>> 8) & 15]!, HEX[(d >>> 4) & 15]!, HEX[d & 15]!)
}

const DASH = 0x2d
/** The version digit, `4`. */
const VERSION = HEX[4]!
/** The variant's two high bits, `10`: the digit after the third dash is 8 to b. */
const VARIANT = 0b1000

/** 32 of the 52 random bits of a Math.random(). */
const random32 = () => (Math.random() * 0x1_0000_0000) >>> 0

/**
 * Where a header of this (lower-case) name is in the raw list, from `from` on: its name's index, or
 * -1. The one reader of request headers below Fastify: cheaper than building `request.headers`,
 * and the same reading of a repeated header by Fastify and by a replay.
 */
export function headerIndex (request: IncomingMessage, name: string, from = 0): number {
  const raw = request.rawHeaders
  for (let i = from; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) return i
  }
  return -1
}

/** The first header of this (lower-case) name. */
export function headerOf (request: IncomingMessage, name: string): string | undefined {
  const at = headerIndex(request, name)
  return at === -1 ? undefined : request.rawHeaders[at + 1]
}

/** Whether the request's If-None-Match names this tag: `*`, or a list of tags compared weakly, as RFC 9110 says. */
export function ifNoneMatches (request: IncomingMessage, etag: string): boolean {
  const ifNoneMatch = headerOf(request, 'if-none-match')
  if (ifNoneMatch === undefined) return false
  for (const tag of ifNoneMatch.split(',')) {
    const trimmed = tag.trim()
    if (trimmed === '*' || trimmed === etag || (trimmed.startsWith('W/') && trimmed.slice(2) === etag)) return true
  }
  return false
}
