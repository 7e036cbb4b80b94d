import { HEX_DIGITS } from './hex.ts'

/**
 * Strong entity tags of answers: a 64-bit hash (two 32-bit lanes, each finished by MurmurHash3's
 * mixer) of what a body is made from. The part one profile shares (its digest and the settings) is
 * hashed once, into a seed; a request's own part (base URL and request URL) is hashed onto it.
 * Equal inputs give equal tags on any replica. A tag only has to differ from the other tags of the
 * same URL (RFC 9110, 8.8.3), and those differ in the seed.
 */
export class TagSeed {
  readonly #a: number
  readonly #b: number
  /** The last base URL, and the lanes once it is hashed onto the seed: a load mostly asks of one. */
  #base: string | undefined
  #baseA = 0
  #baseB = 0

  constructor (shared: string) {
    lanes[0] = START_A
    lanes[1] = START_B
    step(shared)
    this.#a = lanes[0]
    this.#b = lanes[1]
  }

  /** The tag, quoted, of an answer made from the seed's inputs, this base URL and this request URL. */
  tag (base: string, url: string): string {
    if (base !== this.#base) {
      lanes[0] = this.#a
      lanes[1] = this.#b
      step(base)
      step(' ')
      this.#base = base
      this.#baseA = lanes[0]
      this.#baseB = lanes[1]
    }
    lanes[0] = this.#baseA
    lanes[1] = this.#baseB
    step(url)
    return quoted(mix(lanes[0]!), mix(lanes[1]!))
  }
}

/**
 * A text's 64-bit hash as 16 hex digits, the lanes' way over its UTF-8 bytes four at a time: a name
 * for data a seed is made of (a profile's JSON), the same for the same text on any replica. A step
 * a character would make a start's loop long enough for V8 to bring in its optimizing compiler, and
 * the memory its code takes.
 */
export function digestOf (text: string): string {
  const utf8 = Buffer.from(text)
  const bytes = new Uint8Array((utf8.length + 3) & ~3)
  bytes.set(utf8)
  let a = START_A
  let b = START_B
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)
    a = Math.imul(a ^ word, PRIME_A)
    b = Math.imul(b ^ word, PRIME_B)
    b ^= b >>> 15
  }
  // The length, which the zeros padding the last word leave out.
  return hex8(mix(a)) + hex8(mix(b ^ utf8.length))
}

const hex8 = (lane: number) => lane.toString(16).padStart(8, '0')

/** The two lanes between steps (one thread runs them). */
const lanes = new Uint32Array(2)

/** Where the lanes start: FNV-1a's offset basis, and another. */
const START_A = 0x811c9dc5
const START_B = 0x2f1b3c5d
/** What each step multiplies them by: FNV's prime, and MurmurHash2's multiplier. */
const PRIME_A = 0x01000193
const PRIME_B = 0x5bd1e995

/** Hashes `text` onto the lanes: FNV-1a, and a lane with MurmurHash2's multiplier. */
function step (text: string): void {
  let a = lanes[0]!
  let b = lanes[1]!
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    a = Math.imul(a ^ char, PRIME_A)
    b = Math.imul(b ^ char, PRIME_B)
    b ^= b >>> 15
  }
  lanes[0] = a
  lanes[1] = b
}

/** MurmurHash3's fmix32: every bit of the lane moves every bit of the result. */
function mix (h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

const QUOTE = 0x22

/**
 * Two lanes as 16 hex digits between quotes, made as one flat string: joined pieces would be
 * flattened when the header is written, and a number's toString(16) is a call into V8's runtime.
 */
function quoted (a: number, b: number): string {
  return String.fromCharCode(QUOTE,
    HEX_DIGITS[a >>> 28]!, HEX_DIGITS[(a >>> 24) & 15]!, HEX_DIGITS[(a >>> 20) & 15]!, HEX_DIGITS[(a >>> 16) & 15]!,
    HEX_DIGITS[(a >>> 12) & 15]!, HEX_DIGITS[(a >>> 8) & 15]!, HEX_DIGITS[(a >>> 4) & 15]!, HEX_DIGITS[a & 15]!,
    HEX_DIGITS[b >>> 28]!, HEX_DIGITS[(b >>> 24) & 15]!, HEX_DIGITS[(b >>> 20) & 15]!, HEX_DIGITS[(b >>> 16) & 15]!,
    HEX_DIGITS[(b >>> 12) & 15]!, HEX_DIGITS[(b >>> 8) & 15]!, HEX_DIGITS[(b >>> 4) & 15]!, HEX_DIGITS[b & 15]!,
    QUOTE)
}
