/**
 * What the response cache really holds against what it counts: fills a cache of CACHE_MAX_MB
 * (16, the default's cap) with pages rendered as the service renders them, each asked for twice
 * so that the doorkeeper lets it in, and compares the heap and Buffer memory it took with the
 * bytes it counts. Prints figures; asserts nothing.
 *
 *   npm run bench:cache [-- --mb 16 --limit 50]
 */
import { parseArgs } from 'node:util'
import { etagOf, represent } from '../lib/answer/answer.ts'
import { ResponseCache } from '../lib/answer/cache.ts'
import { cacheKey } from '../lib/answer/cache-key.ts'
import { ENDPOINTS } from '../lib/api/endpoints.ts'
import { apiHeaders } from '../lib/api/headers.ts'
import { Catalog } from '../lib/inventory/catalog.ts'
import { DEFAULT_PROFILE_FILE, loadProfile } from '../lib/inventory/profile.ts'
import { parseQuery } from '../lib/reference/query.ts'

const { values: options } = parseArgs({ options: { mb: { type: 'string', default: '16' }, limit: { type: 'string', default: '50' } } })
const MiB = 1024 * 1024
const catalog = new Catalog(loadProfile(DEFAULT_PROFILE_FILE))
const list = ENDPOINTS.find((endpoint) => endpoint.path === '/api/extras/object-types/')!
const sizes = { paginateCount: 50, maxPageSize: 1000 }
const base = 'http://bench.test'

/** Heap in use and memory outside it (Buffers), after full collections. */
function memory (): number {
  for (let i = 0; i < 3; i++) globalThis.gc!()
  const { heapUsed, external } = process.memoryUsage()
  return heapUsed + external
}

const cache = new ResponseCache(Number(options.mb) * MiB)
const before = memory()
for (let n = 0; cache.stats.evictions === 0; n++) {
  const url = `/api/extras/object-types/?limit=${options.limit}&offset=${n % 100}&n=${n}`
  const body = list.render({ base, path: '/api/extras/object-types/', query: parseQuery(url.split('?')[1]!), params: {}, itemTail: '/', catalog, sizes })
  const representation = represent(list.path, body, etagOf(catalog.digest, '50 1000', base, url), apiHeaders(catalog).endpoint)
  // Twice: the doorkeeper keeps a page the second time it is asked for.
  cache.set(cacheKey('bench.test', url), representation)
  cache.set(cacheKey('bench.test', url), representation)
}
const held = memory() - before
const pages = cache.stats.admissions - cache.stats.evictions
console.log(`node ${process.version}; a cache of ${options.mb} MiB filled with ${pages} pages of ${options.limit} items`)
console.log(`counted: ${(cache.bytes / MiB).toFixed(1)} MiB; heap and Buffers taken: ${(held / MiB).toFixed(1)} MiB: ${(held / cache.bytes).toFixed(2)}x what it counts (${held >= cache.bytes ? '+' : ''}${((held - cache.bytes) / pages).toFixed(0)} bytes a page)`)
