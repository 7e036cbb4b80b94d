/**
 * How the service ships: `npm start` (package.json), the image (Dockerfile) and the npm package's
 * command (the entry point's `#!` line) start Node with this environment and these flags
 * (test/process/bundle.test.ts holds them equal), so that the benchmarks measure the service as it
 * ships. Both are read only at start-up.
 */

/**
 * glibc's malloc gives each thread that allocates an arena of its own, up to 8 per core, and
 * each keeps what it freed: two arenas held the peak under 1000 connections 3–4 MiB lower
 * (docs/performance.md).
 */
export const IMAGE_ENV = { MALLOC_ARENA_MAX: '2' } as const

/**
 * V8's young generation at most 4 MiB a semi-space: bounded, since Node 26 grows it to 64 MiB
 * under load whatever the heap limit. It starts at 1 MiB and grows to 4 under load: an idle
 * process holds less, a loaded one collects as often. No memory reducer: after its first
 * memory-reducing collection (an idle spell), every process.nextTick stays several times dearer,
 * and Node's HTTP server makes four a request (docs/performance.md).
 */
export const IMAGE_NODE_FLAGS = ['--max-semi-space-size=4', '--min-semi-space-size=1', '--no-memory-reducer']
