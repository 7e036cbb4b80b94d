/**
 * What the response cache really holds against what it counts: fills a cache of CACHE_MAX_MB
 * with the answers Fastify makes to pages, each asked for twice so that the doorkeeper lets it
 * in, and compares the heap and Buffer memory it took with the bytes it counts. Prints figures;
 * asserts nothing.
 *
 *   npm run bench:cache [-- --mb 16 --limit 50]
 */
import type { IncomingMessage } from 'node:http'
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { loadConfig } from '../lib/config.ts'
import { Catalog } from '../lib/inventory/catalog.ts'
import { PageBuffer } from '../lib/inventory/page-buffer.ts'
import { DEFAULT_PROFILE_FILE, loadProfile } from '../lib/inventory/profile.ts'
import { Served } from '../lib/inventory/served.ts'
import { parseQuery } from '../lib/reference/query.ts'
import { Replays } from '../lib/replay/replays.ts'
import { OBJECT_TYPE_LIST as list } from '../lib/routes/object-types.ts'
import { createService, load } from '../lib/service.ts'

const { values: options } = parseArgs({ options: { mb: { type: 'string', default: '16' }, limit: { type: 'string', default: '50' } } })
const MiB = 1024 * 1024
const config = loadConfig({ CACHE_MAX_MB: options.mb })
const served = new Served(new Catalog(loadProfile(DEFAULT_PROFILE_FILE)))
const replays = new Replays(served, config.cacheBytes, false)
const base = 'http://bench.test'
// The headers Fastify gives a page (its tag aside, the same for every page), as the keep hook reads them.
const { app } = await createService(config, await load(config), pino({ level: 'silent' }))
const { headers } = await app.inject({ url: '/api/extras/object-types/', headers: { host: 'bench.test' } })

/** Heap in use and memory outside it (Buffers), after full collections. */
function memory (): number {
  for (let i = 0; i < 3; i++) globalThis.gc!()
  const { heapUsed, external } = process.memoryUsage()
  return heapUsed + external
}

const { catalog } = served.current
const pageBuffer = new PageBuffer()
const before = memory()
// Until full: then the cache takes a new page in only at its eighth miss (replay/cache.ts), and this one is refused.
for (let n = 0, admitted = -1; replays.stats.admissions > admitted; n++) {
  admitted = replays.stats.admissions
  const url = `/api/extras/object-types/?limit=${options.limit}&offset=${n % 100}&n=${n}`
  const request = { url, rawHeaders: ['Host', 'bench.test'] } as unknown as IncomingMessage
  const { body } = list.render({ base, path: '/api/extras/object-types/', query: parseQuery(url.split('?')[1]!), params: {}, format: undefined, catalog, sizes: config, statusKeys: 'neutral', pageBuffer, app }) as { body: string }
  // Twice: the doorkeeper keeps a page the second time it is asked for. (Each with its own tag, as Fastify's.)
  for (let twice = 0; twice < 2; twice++) replays.keep(request, served.current, list.path, () => ({ ...headers, etag: `"${n}-${'x'.repeat(25)}"` }), body)
}
const held = memory() - before
const pages = replays.stats.admissions - replays.stats.evictions
console.log(`node ${process.version}; a cache of ${options.mb} MiB filled with ${pages} pages of ${options.limit} items`)
console.log(`counted: ${(replays.bytes / MiB).toFixed(1)} MiB; heap and Buffers taken: ${(held / MiB).toFixed(1)} MiB: ${(held / replays.bytes).toFixed(2)}x what it counts (${held >= replays.bytes ? '+' : ''}${((held - replays.bytes) / pages).toFixed(0)} bytes a page)`)
await app.close()
