import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator'

/** The standard normal's 99th percentile: a lognormal's p99 is its median times e^(Z99·σ). */
const Z99 = 2.3263478740408408

/**
 * Every chance a faults file leaves to chance, from one seeded generator: the same seed and the
 * same requests in the same order give the same faults.
 */
export class Draws {
  readonly #random: RandomGenerator

  constructor (seed: number) {
    this.#random = xoroshiro128plus(seed)
  }

  /** True for `percent` in a hundred draws. */
  chance (percent: number): boolean {
    return uniformFloat64(this.#random) * 100 < percent
  }

  /** A number from `min` to `max`, every one as likely. */
  between (min: number, max: number): number {
    return min + uniformFloat64(this.#random) * (max - min)
  }

  /** A lognormal number of the given median and 99th percentile (a latency's usual shape). */
  lognormal (median: number, p99: number): number {
    const sigma = Math.log(p99 / median) / Z99
    // Box-Muller: one standard normal from two uniforms (1 - u keeps the logarithm finite).
    const normal = Math.sqrt(-2 * Math.log(1 - uniformFloat64(this.#random))) * Math.cos(2 * Math.PI * uniformFloat64(this.#random))
    return median * Math.exp(sigma * normal)
  }
}
