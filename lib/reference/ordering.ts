import { compareCodePoints, lastValue, pyStrip, type QueryParams } from './query.ts'

/** What an ordering compares: the fields it may name. */
export interface Ordered {
  readonly id: number
  readonly appLabel: string
  readonly model: string
}

type Compare = (a: Ordered, b: Ordered) => number

/** The fields the reference lets `ordering` name, and how they compare. */
const FIELDS: Readonly<Record<string, Compare>> = {
  id: (a, b) => a.id - b.id,
  app_label: (a, b) => compareCodePoints(a.appLabel, b.appLabel),
  model: (a, b) => compareCodePoints(a.model, b.model),
}

/**
 * `ordering` as the reference's ordering filter reads it: the last parameter, split at commas,
 * each term stripped, `-` for descending, unknown terms dropped. undefined: the default order.
 */
export function orderingOf (params: QueryParams): Compare | undefined {
  const value = lastValue(params, 'ordering')
  if (value === undefined || value === '') return undefined
  const terms: Compare[] = []
  // A field named again changes nothing: ties on it were already ties. So a sort compares at
  // most three terms, however long the ordering.
  const named = new Set<string>()
  for (const term of value.split(',').map(pyStrip)) {
    const descending = term.startsWith('-')
    const field = descending ? term.slice(1) : term
    if (!Object.hasOwn(FIELDS, field) || named.has(field)) continue
    named.add(field)
    const compare = FIELDS[field]!
    terms.push(descending ? (a, b) => compare(b, a) : compare)
  }
  if (terms.length === 0) return undefined
  return (a, b) => {
    for (const compare of terms) {
      const order = compare(a, b)
      if (order !== 0) return order
    }
    return 0
  }
}

/** The items in this ordering; a stable sort, so ties keep the default order they come in. */
export function ordered<Item extends Ordered> (items: readonly Item[], compare: Compare | undefined): readonly Item[] {
  return compare === undefined ? items : [...items].sort(compare)
}
