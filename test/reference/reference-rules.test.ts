import t from 'tap'
import fc from 'fast-check'
import { filterOf } from '../../lib/reference/filters.ts'
import { orderingOf } from '../../lib/reference/ordering.ts'
import { encodeQuery, pyStrip, sortedNames } from '../../lib/reference/query.ts'
import type { CatalogItem } from '../../lib/inventory/catalog.ts'

// The reference's rules (lib/reference) as pure functions, held to oracles written another way.

/** The largest id a profile may hold: a value past it matches nothing, however it is written. */
const MAX_ID = 2 ** 31 - 1
const TOO_LARGE = 'Ensure this value is less than or equal to 1e+50.'
/** An id the filter read, as what it matches: that id, or nothing. */
const matched = (id: string) => Math.abs(Number(id)) <= MAX_ID ? String(Number(id)) : 'nothing'

/** What the id filter reads from a value, worked out exactly with bigints: the id it matches, nothing, or the reference's message. */
function idOracle (sign: string, whole: string, fraction: string, exponent: bigint): string {
  const digits = BigInt((whole + fraction) || '0')
  const scale = exponent - BigInt(fraction.length)
  if (digits === 0n) return '0'
  const negative = sign === '-'
  // Far beyond any id: past the bound when positive, nothing when negative; below 1 it is 0.
  if (scale > 400n) return negative ? 'nothing' : TOO_LARGE
  if (scale < -400n - BigInt(whole.length + fraction.length)) return '0'
  const max = BigInt(1e50)
  const aboveMax = scale >= 0n ? digits * 10n ** scale > max : digits > max * 10n ** -scale
  if (!negative && aboveMax) return TOO_LARGE
  const truncated = scale >= 0n ? digits * 10n ** scale : digits / 10n ** -scale
  return truncated > BigInt(MAX_ID) ? 'nothing' : String(negative ? -Number(truncated) : Number(truncated))
}

t.test('the id filter reads a decimal of any size, sign or exponent as the reference does, and never throws otherwise', async (t) => {
  const digits = (max: number) => fc.stringMatching(new RegExp(`^[0-9]{0,${max}}$`))
  const exponent = fc.oneof(fc.bigInt({ min: -60n, max: 60n }), fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), fc.constantFrom(999999999n, -999999999n, 400n, -400n, 51n, 50n))
  await fc.assert(fc.property(fc.constantFrom('', '+', '-'), digits(60), digits(20), fc.option(exponent), fc.constantFrom('e', 'E'),
    (sign, whole, fraction, exponent, e) => {
      fc.pre(whole !== '' || fraction !== '')
      const text = `${sign}${whole}${fraction === '' ? '' : '.' + fraction}${exponent === null ? '' : e + exponent}`
      const expected = idOracle(sign, whole, fraction, exponent ?? 0n)
      let read: string
      try {
        read = matched(filterOf(new Map([['id', [text]]])).id!)
      } catch (error) {
        read = (error as { fields: { id: string[] } }).fields.id[0]!
      }
      if (read !== expected) throw new Error(`${text}: ${read}, not ${expected}`)
    }), { numRuns: 20000 })
  t.pass()
})

/** Python's order of strings: their code points, compared in turn. */
function byCodePoints (a: string, b: string): number {
  const [x, y] = [[...a].map((char) => char.codePointAt(0)!), [...b].map((char) => char.codePointAt(0)!)]
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

t.test('a query\'s names sort by code point, however many and in whatever order', async (t) => {
  // A few names are sorted one way, more another (query.ts): both are held to the oracle.
  for (const lengths of [{ maxLength: 8 }, { minLength: 9, maxLength: 300 }]) {
    fc.assert(fc.property(fc.uniqueArray(fc.string({ unit: 'grapheme', maxLength: 4 }), lengths), (names) => {
      const sorted = sortedNames(new Map(names.map((name) => [name, ['']])))
      const expected = [...names].sort(byCodePoints)
      if (JSON.stringify(sorted) !== JSON.stringify(expected)) throw new Error(JSON.stringify(names))
    }))
  }
  const descending = Array.from({ length: 4050 }, (_, i) => (4049 - i).toString(36).padStart(3, '0'))
  t.equal(encodeQuery(new Map(descending.map((name) => [name, ['']]))), [...descending].reverse().map((name) => name + '=').join('&'), '4050 names given in descending order')
})

t.test('an ordering that names a field again orders as the first naming alone', async (t) => {
  const items = Array.from({ length: 60 }, (_, i): CatalogItem => ({ id: (i * 37) % 61, appLabel: `app${i % 3}`, model: `m${i % 7}` }) as CatalogItem)
  const order = (ordering: string) => [...items].sort(orderingOf(new Map([['ordering', [ordering]]]))!).map((item) => item.id)
  t.same(order(['app_label', '-model', ...Array(1400).fill('-app_label,model,id')].join(',')), order('app_label,-model,id'))
  t.same(order(Array(1400).fill('-id').join(',')), order('-id'))
})

t.test('strip() as Python\'s: white space of either end, none inside', async (t) => {
  t.equal(pyStrip(' \t\u3000a b\u00a0\n'), 'a b')
  t.equal(pyStrip(' '.repeat(20000) + 'x' + ' '.repeat(20000)), 'x')
  t.equal(pyStrip('\u200b'), '\u200b', 'a zero-width space is not white space to Python')
  t.equal(pyStrip(''), '')
})
