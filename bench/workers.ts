/**
 * WORKERS=1 against WORKERS=2 (or more), load generator on the same machine, nothing
 * pinned: what node:cluster buys when the load generator competes for the same cores.
 * Prints figures; asserts nothing.
 *
 *   npm run bench:workers [-- --rounds 3 --seconds 5 --connections 50 --workers 2]
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { IMAGE_ENV } from './image.ts'
import { CORES, cpuMicros, load, median, SERVICE, UNIQUE_SUFFIX, waitFor200, WRK, type LoadFigures } from './load.ts'

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    workers: { type: 'string', default: '2' },
  },
})
const ROUNDS = Number(options.rounds)
const SECONDS = Number(options.seconds)
const CONNECTIONS = Number(options.connections)
const PORT = 18082
const CASES: Record<string, string> = {
  'canonical page (cached)': '/api/extras/object-types/?limit=50&offset=50',
  ...(WRK && { 'uncached page': '/api/extras/object-types/?limit=50&offset=50' + UNIQUE_SUFFIX }),
}

/** The primary and its workers: CPU time of exited processes is not counted, none exit here. */
function serviceCpuMicros (primary: number): number {
  const children = readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)
  return [primary, ...children.map(Number)].reduce((sum, pid) => sum + cpuMicros(pid), 0)
}

async function measure (workers: number, path: string): Promise<LoadFigures & { cpuPerRequest: number }> {
  const service = spawn(process.execPath, SERVICE, {
    env: { ...process.env, ...IMAGE_ENV, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', WORKERS: String(workers) },
    stdio: 'inherit',
  })
  await waitFor200(service, PORT, '/api/status/')
  // Every worker has to be listening before the load starts.
  await new Promise((resolve) => setTimeout(resolve, 500))
  const run = (seconds: number) => load({ port: PORT, path, seconds, connections: CONNECTIONS, threads: Math.min(CORES, 2) })
  await run(1)
  const before = serviceCpuMicros(service.pid!)
  const figures = await run(SECONDS)
  const cpuPerRequest = (serviceCpuMicros(service.pid!) - before) / figures.requests
  service.kill('SIGTERM')
  await once(service, 'exit')
  return { ...figures, cpuPerRequest }
}

const WORKER_COUNTS = [1, Number(options.workers)]
console.log(`${CORES} cores, load generator: ${WRK ? `wrk, ${Math.min(CORES, 2)} threads` : 'autocannon'}, ${CONNECTIONS} connections,` +
  ` ${ROUNDS} rounds x ${SECONDS} s, nothing pinned; node ${process.version}`)
console.log('case                     workers      rps  p50 ms  p99 ms  CPU µs/req  errors')
for (const [name, path] of Object.entries(CASES)) {
  const results = new Map(WORKER_COUNTS.map((count) => [count, [] as Array<LoadFigures & { cpuPerRequest: number }>]))
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so drift on a shared machine hits both alike.
    for (const count of round % 2 === 0 ? WORKER_COUNTS : [...WORKER_COUNTS].reverse()) {
      results.get(count)!.push(await measure(count, path))
    }
  }
  for (const [count, figures] of results) {
    const m = (key: 'rps' | 'p50' | 'p99' | 'cpuPerRequest') => median(figures.map((f) => f[key]))
    console.log([
      name.padEnd(23), String(count).padStart(7), m('rps').toFixed(0).padStart(8), m('p50').toFixed(2).padStart(6),
      m('p99').toFixed(2).padStart(6), m('cpuPerRequest').toFixed(1).padStart(10),
      String(figures.reduce((sum, f) => sum + f.errors, 0)).padStart(6),
    ].join('  '))
  }
}
