/**
 * Side-by-side benchmark: the service against a bare node:http server that writes the
 * same bytes from memory (the ceiling for Node.js). Prints figures; asserts nothing.
 *
 *   npm run bench [-- --rounds 5 --seconds 5 --connections 50]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { fetchRaw } from './fetch.ts'

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
  },
})
const ROUNDS = Number(options.rounds)
const SECONDS = Number(options.seconds)
const CONNECTIONS = Number(options.connections)
const HOST = 'bench.test'
const SERVICE_PORT = 18080
const REFERENCE_PORT = 18081

const CANONICAL = '/api/extras/object-types/?limit=50&offset=50'
const CASES: Record<string, string> = {
  'canonical page': CANONICAL,
  'first page': '/api/extras/object-types/',
  'format=api': '/api/extras/object-types/?format=api&limit=50&offset=50',
  'filtered (q=dcim)': '/api/extras/object-types/?q=dcim',
  'unknown parameter': '/api/extras/object-types/?limit=50&offset=50&utm_source=probe',
  'one item': '/api/extras/object-types/112/',
  status: '/api/status/',
}
/**
 * The uncached path: every request a new query (`&n=<counter>`, counted by a wrk script),
 * so each one is rendered and pushes the bounded cache to evict. The reference answers
 * these with the canonical page (see reference-server.ts): same size, no rendering.
 */
const UNCACHED_CASE = 'uncached page (new query each time)'
const UNIQUE_SUFFIX = '&n='

const haveCommand = (name: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const WRK = haveCommand('wrk')
const TASKSET = haveCommand('taskset') && Number(execFileSync('nproc').toString()) >= 2
/** Servers on the last core, the load generator on the first, where taskset exists. */
const pinned = (core: string, command: string[]) => TASKSET ? ['taskset', '-c', core, ...command] : command

function startService (): ChildProcess {
  const [command, ...args] = pinned('1', [process.execPath, fileURLToPath(new URL('../lib/server.js', import.meta.url))])
  return spawn(command!, args, {
    env: { ...process.env, PORT: String(SERVICE_PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: 'inherit',
  })
}

function startReference (): ChildProcess {
  const script = fileURLToPath(new URL('reference-server.js', import.meta.url))
  const [command, ...args] = pinned('1', [process.execPath, script, String(REFERENCE_PORT), String(SERVICE_PORT), HOST, ...Object.values(CASES)])
  return spawn(command!, args, { stdio: 'inherit' })
}

const fetchPage = (port: number, path: string) => fetchRaw(port, path, HOST)

async function waitFor200 (port: number, path: string): Promise<void> {
  for (;;) {
    try {
      if ((await fetchPage(port, path)).status === 200) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString())
/** User + system CPU time of a process, in µs. */
function cpuMicros (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
}
function rssMiB (pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(match![1]) / 1024
}

interface Figures { rps: number, p50: number, p99: number, cpuPerRequest: number, errors: number }

/** Runs a command on core 0 (the load generator's) where taskset exists; its standard output. */
const onLoadCore = (command: string, args: string[]) => {
  const [pinnedCommand, ...pinnedArgs] = pinned('0', [command, ...args])
  return execFileSync(pinnedCommand!, pinnedArgs, { stdio: ['ignore', 'pipe', 'ignore'] }).toString()
}

const UNIQUE_SCRIPT = join(mkdtempSync(join(tmpdir(), 'bench-')), 'unique.lua')
writeFileSync(UNIQUE_SCRIPT,
  'local counter = 0\nrequest = function()\n  counter = counter + 1\n  return wrk.format(nil, wrk.path .. counter)\nend\n')

function load (port: number, path: string, seconds: number): { requests: number, rps: number, p50: number, p99: number, errors: number } {
  const url = `http://127.0.0.1:${port}${path}`
  if (WRK) {
    const script = path.endsWith(UNIQUE_SUFFIX) ? ['-s', UNIQUE_SCRIPT] : []
    const out = onLoadCore('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-H', `Host: ${HOST}`, ...script, url])
    const ms = (label: string) => {
      const [, value, unit] = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)`).exec(out)!
      return Number(value) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[unit!]!
    }
    const errors = [...out.matchAll(/(?:Non-2xx or 3xx responses|connect|read|write|timeout)[: ]+(\d+)/g)]
      .reduce((sum, match) => sum + Number(match[1]), 0)
    return {
      requests: Number(/(\d+) requests in/.exec(out)![1]),
      rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]),
      p50: ms(' 50%'),
      p99: ms(' 99%'),
      errors,
    }
  }
  const bin = fileURLToPath(new URL('../../node_modules/.bin/autocannon', import.meta.url))
  const result = JSON.parse(onLoadCore(bin, ['--json', '-c', String(CONNECTIONS), '-d', String(seconds), '-H', `host=${HOST}`, url]))
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  }
}

function measure (pid: number, port: number, path: string): Figures {
  const before = cpuMicros(pid)
  const { requests, rps, p50, p99, errors } = load(port, path, SECONDS)
  return { rps, p50, p99, cpuPerRequest: (cpuMicros(pid) - before) / requests, errors }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

async function main (): Promise<void> {
  const started = process.hrtime.bigint()
  const service = startService()
  await waitFor200(SERVICE_PORT, '/api/status/')
  const startupMs = Number(process.hrtime.bigint() - started) / 1e6

  const reference = startReference()
  await waitFor200(REFERENCE_PORT, '/api/status/')
  for (const path of Object.values(CASES)) {
    const [ours, theirs] = await Promise.all([fetchPage(SERVICE_PORT, path), fetchPage(REFERENCE_PORT, path)])
    if (ours.status !== 200 || !ours.body.equals(theirs.body)) throw new Error(`${path}: not a 200 served identically by both`)
  }

  const rssBefore = rssMiB(service.pid!)
  console.log(`load generator: ${WRK ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${ROUNDS} rounds x ${SECONDS} s per server and case,` +
    ` ${TASKSET ? 'servers on core 1, load on core 0' : 'not pinned (no taskset or one core)'}; node ${process.version}`)
  console.log(`start-up to first 200: ${startupMs.toFixed(0)} ms`)
  for (const path of Object.values(CASES)) {
    load(SERVICE_PORT, path, 1)
    load(REFERENCE_PORT, path, 1)
  }

  const header = ['case', 'service rps', 'ref rps', 'ratio', 'p50 ms', 'p99 ms', 'ref p99', 'CPU µs/req', 'ref µs', 'ratio', 'errors']
  const rows: string[][] = [header]
  const cases = Object.entries(CASES)
  // autocannon's command line cannot vary the query per request.
  if (WRK) cases.push([UNCACHED_CASE, CANONICAL + UNIQUE_SUFFIX])
  else console.log(`(${UNCACHED_CASE}: needs wrk)`)
  for (const [name, path] of cases) {
    const ours: Figures[] = []
    const theirs: Figures[] = []
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so drift on a shared machine hits both alike.
      if (round % 2 === 0) {
        ours.push(measure(service.pid!, SERVICE_PORT, path))
        theirs.push(measure(reference.pid!, REFERENCE_PORT, path))
      } else {
        theirs.push(measure(reference.pid!, REFERENCE_PORT, path))
        ours.push(measure(service.pid!, SERVICE_PORT, path))
      }
    }
    const m = (figures: Figures[], key: keyof Figures) => median(figures.map((f) => f[key]))
    rows.push([
      name,
      m(ours, 'rps').toFixed(0), m(theirs, 'rps').toFixed(0), (m(ours, 'rps') / m(theirs, 'rps')).toFixed(2) + 'x',
      m(ours, 'p50').toFixed(2), m(ours, 'p99').toFixed(2), m(theirs, 'p99').toFixed(2),
      m(ours, 'cpuPerRequest').toFixed(1), m(theirs, 'cpuPerRequest').toFixed(1),
      (m(ours, 'cpuPerRequest') / m(theirs, 'cpuPerRequest')).toFixed(2) + 'x',
      String(ours.reduce((sum, f) => sum + f.errors, 0) + theirs.reduce((sum, f) => sum + f.errors, 0)),
    ])
  }
  const widths = header.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows) console.log(row.map((cell, i) => i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)).join('  '))
  console.log(`service RSS: ${rssBefore.toFixed(1)} MiB before load, ${rssMiB(service.pid!).toFixed(1)} MiB after`)

  service.kill('SIGTERM')
  reference.kill('SIGTERM')
  await Promise.all([once(service, 'exit'), once(reference, 'exit')])
}

await main()
