/** What the benchmarks share: the load generator, process figures from /proc, medians. */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { fetchRaw } from './fetch.ts'
import { IMAGE_ENV, IMAGE_NODE_FLAGS } from './image.ts'

const haveCommand = (name: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
export const WRK = haveCommand('wrk')
export const CORES = Number(execFileSync('nproc').toString())
export const TASKSET = haveCommand('taskset') && CORES >= 2
/** A command pinned to one core where taskset exists; `undefined`: not pinned. */
export const pinned = (core: string | undefined, command: string[]) =>
  TASKSET && core !== undefined ? ['taskset', '-c', core, ...command] : command

/** The Host every benchmark request carries. */
export const HOST = 'bench.test'
export const fetchPage = (port: number, path: string) => fetchRaw(port, path, HOST)

/** How long a server may take to answer its first request before the run gives up on it. */
const START_DEADLINE_MS = 30_000

/**
 * Resolves once the server answers `path` with 200. One that exits first (a bad --node, a broken
 * build) or has not answered within 30 s stops the run with a message saying which, and is killed.
 */
export async function waitFor200 (server: ChildProcess, port: number, path: string): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS
  for (;;) {
    try {
      if ((await fetchPage(port, path)).status === 200) return
    } catch {}
    const exited = server.exitCode ?? server.signalCode
    if (exited !== null || Date.now() > deadline) {
      server.kill('SIGKILL')
      const why = exited !== null ? `exited (${exited}) before it answered` : `did not answer within ${START_DEADLINE_MS / 1000} s`
      throw new Error(`the server on port ${port} (${server.spawnargs.join(' ')}) ${why}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString())
/** User + system CPU time of a process, in µs. */
export function cpuMicros (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
}
export function rssMiB (pid: number): number {
  return statusMiB(pid, 'VmRSS')
}
/** The part of RSS that is the process's own memory, not files mapped (Node's binary, most of them). */
export function anonMiB (pid: number): number {
  return statusMiB(pid, 'RssAnon')
}
/** The most RSS the process has had since it started or since resetPeakRss (the kernel's high-water mark). */
export function peakRssMiB (pid: number): number {
  return statusMiB(pid, 'VmHWM')
}
/** Starts the process's high-water mark of RSS again from its RSS now (Linux's clear_refs). */
export function resetPeakRss (pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5')
}
function statusMiB (pid: number, field: string): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(match![1]) / 1024
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * A path ending in this gets a number appended on every request (wrk only), digits only: the
 * bench's reference server strips `&n=<digits>`. A number never sent before: each run's
 * numbers begin with six digits of its own, and each wrk thread's count is spread by the
 * thread's number (up to 1000 threads). With `repeatAfter`, each thread counts to that many
 * and starts again, every run alike, as a load test that replays its list of queries does.
 */
export const UNIQUE_SUFFIX = '&n='
const UNIQUE_SCRIPT = join(mkdtempSync(join(tmpdir(), 'bench-')), 'unique.lua')
writeFileSync(UNIQUE_SCRIPT, `local threads = 0
function setup (thread)
  thread:set('id', threads)
  threads = threads + 1
end
local prefix, period
function init (args)
  prefix, period = args[1], tonumber(args[2])
end
local counter = 0
request = function ()
  counter = counter % period + 1
  return wrk.format(nil, wrk.path .. prefix .. (counter * 1000 + id))
end
`)
/** A wrk script that writes `depth` requests of the URL at a time on each connection (HTTP pipelining). */
const PIPELINE_SCRIPT = join(tmpdir(), `bench-pipeline-${process.pid}.lua`)
writeFileSync(PIPELINE_SCRIPT, `local requests
function init (args)
  local depth = tonumber(args[1])
  local one = wrk.format()
  requests = one:rep(depth)
end
request = function ()
  return requests
end
`)
const execFileAsync = promisify(execFile)

/** Runs with new numbers so far: the next one's prefix (0 is the prefix of repeated lists). */
let uniqueRuns = 0

export interface Load {
  port: number
  path: string
  seconds: number
  connections: number
  /** wrk threads (autocannon has one). */
  threads?: number
  /** The core of the load generator, if pinned. */
  core?: string
  /** Further request headers, as `Name: value`. */
  headers?: string[]
  /** The answers asked for are 304s (If-None-Match): autocannon counts those as non-2xx. */
  notModified?: boolean
  /** With UNIQUE_SUFFIX: each thread's numbers start again after this many requests. */
  repeatAfter?: number
  /** Requests written at a time on each connection, before their answers are read (HTTP pipelining). */
  pipeline?: number
}

export interface LoadFigures { requests: number, rps: number, p50: number, p99: number, errors: number }

/** Loads one URL with wrk, or autocannon without it; latencies in ms. A request unanswered after 10 s failed. */
export async function load ({ port, path, seconds, connections, threads = 1, core, headers = [], notModified = false, repeatAfter, pipeline }: Load): Promise<LoadFigures> {
  const url = `http://127.0.0.1:${port}${path}`
  const run = async (command: string, args: string[]) => {
    const [pinnedCommand, ...pinnedArgs] = pinned(core, [command, ...args])
    return (await execFileAsync(pinnedCommand!, pinnedArgs, { maxBuffer: 16 * 1024 * 1024 })).stdout
  }
  if (WRK) {
    const args = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '--latency', ...[`Host: ${HOST}`, ...headers].flatMap((header) => ['-H', header])]
    // The script's arguments: the numbers' prefix, and after how many a thread's count starts again.
    const out = await run('wrk', pipeline !== undefined
      ? [...args, '-s', PIPELINE_SCRIPT, url, '--', String(pipeline)]
      : !path.endsWith(UNIQUE_SUFFIX)
          ? [...args, url]
          : [...args, '-s', UNIQUE_SCRIPT, url, '--', ...repeatAfter === undefined ? [String(++uniqueRuns).padStart(6, '0'), '1e9'] : ['000000', String(repeatAfter)]])
    const ms = (label: string) => {
      const [, value, unit] = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)`).exec(out)!
      return Number(value) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[unit!]!
    }
    // wrk's "Non-2xx or 3xx responses" are those that are neither: 4xx and 5xx.
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
  const headerArgs = [`host: ${HOST}`, ...headers].flatMap((header) => ['-H', header.replace(/: /, '=')])
  const result = JSON.parse(await run(bin, ['--json', '--timeout', '10', '-c', String(connections), '-p', String(pipeline ?? 1), '-d', String(seconds), ...headerArgs, url]))
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx - (notModified ? result['3xx'] : 0),
  }
}

export interface Target { pid: number, port: number }

/**
 * Loads every target at the same time, each with its own load generator, for the same seconds:
 * servers that share one core (and load generators that share another) are measured under the
 * same drift of a shared machine, so the ratio of what each answered is their ratio of cost.
 * Each one's figures, with the CPU its process spent on a request, in µs.
 */
export async function loadTogether (targets: readonly Target[], spec: Omit<Load, 'port'>): Promise<Array<LoadFigures & { cpuPerRequest: number }>> {
  const before = targets.map(({ pid }) => cpuMicros(pid))
  const figures = await Promise.all(targets.map(({ port }) => load({ ...spec, port })))
  return figures.map((each, i) => ({ ...each, cpuPerRequest: (cpuMicros(targets[i]!.pid) - before[i]!) / each.requests }))
}

/** The built service, the bundle the image ships (dist/service/main.js), after the image's Node flags. */
export const SERVICE = [...IMAGE_NODE_FLAGS, fileURLToPath(new URL('../service/main.js', import.meta.url))]

/** A bare node:http server answering every request with a constant: the floor of start-up and memory. */
export const BARE_SERVER = ['-e', "require('node:http').createServer((request, response) => response.end('{}')).listen(process.env.PORT, process.env.HOST)"]

export interface Started { child: ChildProcess, startupMs: number }

/** Starts `node` with these arguments (in the project's folder) on 127.0.0.1:port: from spawn to its first 200 of /api/status/. */
export async function startServer (node: string, port: number, args: string[]): Promise<Started> {
  const started = process.hrtime.bigint()
  const child = spawn(node, args, {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, ...IMAGE_ENV, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: 'inherit',
  })
  await waitFor200(child, port, '/api/status/')
  return { child, startupMs: Number(process.hrtime.bigint() - started) / 1e6 }
}

export async function stopServer ({ child }: Started): Promise<void> {
  child.kill('SIGKILL')
  await once(child, 'exit')
}

/** The service's first answers, asked of every build before its idle RSS is read. */
const FIRST_ANSWERS = ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/7/', '/api/nothing/']

/** Start-up and RSS idle after the first answers of each build (Node arguments); starts alternating between the builds. */
export async function startsAndIdle (node: string, port: number, builds: Record<string, string[]>, starts: number) {
  const figures = Object.fromEntries(Object.keys(builds).map((name) => [name, { startup: [] as number[], idle: [] as number[], idleAnon: [] as number[] }]))
  for (let i = 0; i < starts; i++) {
    for (const [name, args] of Object.entries(builds)) {
      const server = await startServer(node, port, args)
      for (const path of FIRST_ANSWERS) await fetchPage(port, path)
      await sleep(500)
      figures[name]!.startup.push(server.startupMs)
      figures[name]!.idle.push(rssMiB(server.child.pid!))
      figures[name]!.idleAnon.push(anonMiB(server.child.pid!))
      await stopServer(server)
    }
  }
  return figures
}
