/**
 * Faults (FAULTS), measured: what a faults file costs the requests no rule matches, replays and
 * new queries, side by side with the same build without one (loaded at once, sharing one core, a
 * ratio being the median of the rounds'); and what wrk sees through a lognormal delay, beside its
 * configured median and p99. Prints figures; asserts nothing. Needs wrk.
 *
 *   npm run bench:faults [-- --rounds 5 --seconds 5 --node <binary>]
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { IMAGE_ENV } from './image.ts'
import { load, loadTogether, median, pinned, SERVICE, UNIQUE_SUFFIX, waitFor200, WRK } from './load.ts'

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    node: { type: 'string', default: process.execPath },
  },
})
const ROUNDS = Number(options.rounds)
const SECONDS = Number(options.seconds)
const CONNECTIONS = 50

const CASES: Record<string, string> = {
  'replayed page': '/api/extras/object-types/?limit=50&offset=50',
  'replayed status': '/api/status/',
  'uncached page (new query each time)': `/api/extras/object-types/?limit=50&offset=50${UNIQUE_SUFFIX}`,
  'uncached status': `/api/status/?format=json${UNIQUE_SUFFIX}`,
}

/** A file whose rules match none of the cases: a delay of the schema, and Envoy's headers honoured. */
const ELSEWHERE = { seed: 1, headers: true, rules: [{ path: '/api/schema/', delay: { ms: 100 } }] }
/** The delay wrk is run through. */
const LOGNORMAL = { median: 50, p99: 200 }

function startService (port: number, env: Record<string, string>): ChildProcess {
  const [command, ...args] = pinned('1', [options.node, ...SERVICE])
  return spawn(command!, args, { env: { ...process.env, ...IMAGE_ENV, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env }, stdio: 'inherit' })
}

function faultsFile (name: string, faults: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'bench-faults-')), name)
  writeFileSync(file, JSON.stringify(faults))
  return file
}

async function main (): Promise<void> {
  if (!WRK) throw new Error('bench:faults needs wrk')
  const servers = [
    { name: 'no FAULTS', port: 18090, child: startService(18090, {}) },
    { name: 'FAULTS, no rule matching', port: 18091, child: startService(18091, { FAULTS: faultsFile('elsewhere.json', ELSEWHERE) }) },
  ]
  for (const { child, port } of servers) await waitFor200(child, port, '/api/status/')
  console.log(`${CONNECTIONS} connections, ${ROUNDS} rounds x ${SECONDS} s per case, the servers loaded at once on core 1, their wrk on core 0`)
  console.log(`the faults file: ${JSON.stringify(ELSEWHERE)}`)
  const rows = [['case', ...servers.map(({ name }) => `${name} rps`), 'ratio', ...servers.map(({ name }) => `${name} µs/req`), 'ratio']]
  for (const [name, path] of Object.entries(CASES)) {
    const targets = servers.map(({ child, port }) => ({ pid: child.pid!, port }))
    await loadTogether(targets, { path, seconds: 1, connections: CONNECTIONS, core: '0' })
    const rounds: Array<Awaited<ReturnType<typeof loadTogether>>> = []
    for (let round = 0; round < ROUNDS; round++) rounds.push(await loadTogether(targets, { path, seconds: SECONDS, connections: CONNECTIONS, core: '0' }))
    const [off, on] = servers.map((_, i) => ({ rps: median(rounds.map((each) => each[i]!.rps)), cpu: median(rounds.map((each) => each[i]!.cpuPerRequest)) }))
    const ratio = median(rounds.map(([first, second]) => second!.rps / first!.rps))
    rows.push([name, off!.rps.toFixed(0), on!.rps.toFixed(0), `${ratio.toFixed(2)}x`, off!.cpu.toFixed(1), on!.cpu.toFixed(1), `${(on!.cpu / off!.cpu).toFixed(2)}x`])
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows) console.log(row.map((cell, i) => i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)).join('  '))

  const delayed = { name: 'lognormal', port: 18092, child: startService(18092, { FAULTS: faultsFile('lognormal.json', { seed: 1, rules: [{ path: '/api/status/', delay: LOGNORMAL }] }) }) }
  await waitFor200(delayed.child, delayed.port, '/api/status/')
  const { p50, p99, requests } = await load({ port: delayed.port, path: '/api/status/', seconds: SECONDS * 2, connections: CONNECTIONS, core: '0' })
  console.log(`wrk through a lognormal delay of median ${LOGNORMAL.median} ms and p99 ${LOGNORMAL.p99} ms (/api/status/, ${requests} requests): ` +
    `median ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`)

  const all = [...servers, delayed].map(({ child }) => child)
  for (const child of all) child.kill('SIGTERM')
  await Promise.all(all.map((child) => once(child, 'exit')))
}

await main()
