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

  constructor (shared: string) {
    lanes[0] = 0x811c9dc5
    lanes[1] = 0x2f1b3c5d
    step(shared)
    this.#a = lanes[0]
    this.#b = lanes[1]
  }

  /** The tag, quoted, of an answer made from the seed's inputs, this base URL and this request URL. */
  tag (base: string, url: string): string {
    lanes[0] = this.#a
    lanes[1] = this.#b
    step(base)
    step(' ')
    step(url)
    return '"' + hex(mix(lanes[0]!)) + hex(mix(lanes[1]!)) + '"'
  }
}

/** The two lanes between steps (one thread runs them). */
const lanes = new Uint32Array(2)

/** Hashes `text` onto the lanes: FNV-1a, and a lane with MurmurHash2's multiplier. */
function step (text: string): void {
  let a = lanes[0]!
  let b = lanes[1]!
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    a = Math.imul(a ^ char, 0x01000193)
    b = Math.imul(b ^ char, 0x5bd1e995)
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

/** A byte's two hex digits, by its value: a number's toString(16) is a call into V8's runtime. */
const BYTE_HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))
const hex = (n: number) => BYTE_HEX[n >>> 24]! + BYTE_HEX[(n >>> 16) & 0xff]! + BYTE_HEX[(n >>> 8) & 0xff]! + BYTE_HEX[n & 0xff]!
