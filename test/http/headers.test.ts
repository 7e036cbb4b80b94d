import t from 'tap'
import { requestId } from '../../lib/http/headers.ts'

t.test('a request id is a fresh random UUID v4: each random digit takes every value, the variant digit 8 to b', async (t) => {
  const ids = Array.from({ length: 10_000 }, () => requestId())
  t.equal(new Set(ids).size, ids.length, 'no two alike')
  // The values each of the 36 places took, over all the ids.
  const seen = Array.from({ length: 36 }, () => new Set<string>())
  for (const id of ids) for (let i = 0; i < 36; i++) seen[i]!.add(id[i] ?? '')
  const HEX = '0123456789abcdef'
  t.same(seen.map((values) => [...values].sort().join('')), [...'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'].map((place) => place === 'x' ? HEX : place === 'y' ? '89ab' : place))
  t.same(ids.filter((id) => id.length !== 36), [], 'each 36 characters long')
})
