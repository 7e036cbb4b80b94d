import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Logger } from 'pino'

/** V8's collector as `--expose-gc` exposes it; Node's typings do not declare its options. */
type Collect = (options: { type: 'major', execution: 'sync', flavor: 'last-resort' }) => void

/**
 * Gives back, before the first connection, the memory start-up grew and no longer uses.
 * Parsing the profile and building the catalog and the app grow V8's young generation to
 * 6–8 MiB with the image's flags (32–64 MiB without), of which some 0.2 MiB is live once idle, and V8
 * shrinks it only in a collection that aims to reduce memory, which an idle process never
 * starts. This is one, a "last resort" full collection: 10–30 ms, and idle RSS 82 → 76 MiB on
 * Node 26, 79 → 70 MiB on Node 22.12 (README, Memory). Node 20's V8 knows no such collection
 * and does a young one, in 1–2 ms, which gives nothing back. V8 offers it as `gc`, which exists
 * in contexts created while `--expose-gc` is set: set here for one context, so that no way of
 * starting the service needs the flag and its own code never sees a global `gc`.
 */
export function collectStartupGarbage (logger: Logger): void {
  const before = heapSizes()
  const started = process.hrtime.bigint()
  setFlagsFromString('--expose-gc')
  const collect = runInNewContext('gc') as Collect
  setFlagsFromString('--no-expose-gc')
  collect({ type: 'major', execution: 'sync', flavor: 'last-resort' })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  logger.debug({ before, after: heapSizes(), ms }, 'start-up garbage collected')
}

/** What V8's heap and its young generation hold, in bytes, in use or not. */
function heapSizes (): { heapBytes: number, youngBytes: number } {
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!
  return { heapBytes: getHeapStatistics().total_heap_size, youngBytes: young.space_size }
}
