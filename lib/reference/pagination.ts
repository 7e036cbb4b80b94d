import { compareCodePoints, encodeFields, lastValue, parseInteger, sortedNames, type QueryParams } from './query.ts'

export interface PageSizes {
  /** Used when `limit` is absent or invalid. */
  paginateCount: number
  /** Used for `limit=0` and as the cap. */
  maxPageSize: number
}

export interface PageWindow {
  limit: number
  /** A bigint: any integer a client sends is honoured in links, as the reference does. */
  offset: bigint
}

/** The reference's limit/offset rules: anything invalid falls back rather than failing. */
export function pageWindow (params: QueryParams, sizes: PageSizes): PageWindow {
  const limitText = lastValue(params, 'limit')
  const limit = limitText === undefined ? undefined : parseInteger(limitText)
  const offsetText = lastValue(params, 'offset')
  const offset = offsetText === undefined ? undefined : parseInteger(offsetText)
  return {
    limit: limit === undefined || limit < 0n
      ? sizes.paginateCount
      : limit === 0n || limit > sizes.maxPageSize ? sizes.maxPageSize : Number(limit),
    offset: offset === undefined || offset < 0n ? 0n : offset,
  }
}

/** The slice of `count` items the window selects, as array indexes. */
export function pageRange ({ limit, offset }: PageWindow, count: number): [number, number] {
  if (offset >= count) return [count, count]
  const start = Number(offset)
  return [start, Math.min(start + limit, count)]
}

/**
 * The `next` and `previous` links: the request's own query with `limit` set to the
 * effective limit and `offset` moved, keys sorted; `previous` drops `offset` at the start.
 * The other parameters are encoded once, in the three runs that sort before `limit`,
 * between it and `offset`, and after `offset`: the links are those runs and the window.
 */
export function pageLinks (pageUrl: string, params: QueryParams, { limit, offset }: PageWindow, count: number): [string | null, string | null] {
  const size = BigInt(limit)
  const hasNext = offset + size < count
  if (!hasNext && offset <= 0n) return [null, null]
  let before = ''
  let between = ''
  let after = ''
  for (const name of sortedNames(params)) {
    if (name === 'limit' || name === 'offset') continue
    const fields = encodeFields(name, params.get(name)!)
    if (compareCodePoints(name, 'limit') < 0) before += fields + '&'
    else if (compareCodePoints(name, 'offset') < 0) between += '&' + fields
    else after += '&' + fields
  }
  const start = `${pageUrl}?${before}limit=${limit}${between}`
  const withOffset = (linkOffset: bigint) => linkOffset <= 0n ? start + after : `${start}&offset=${linkOffset}${after}`
  return [hasNext ? withOffset(offset + size) : null, offset <= 0n ? null : withOffset(offset - size)]
}
