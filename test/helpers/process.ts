import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { DEADLINE_MS, until } from './wait.ts'

const MAIN = new URL('../../lib/process/main.ts', import.meta.url).pathname
/**
 * The service runs its TypeScript source on Node itself, which strips the types (by default from
 * Node 23.6 on; the flag is for 22, and changes nothing later): some 0.3 s a start, against 3 s
 * through a TypeScript loader.
 */
export const TYPESCRIPT = ['--experimental-strip-types', '--disable-warning=ExperimentalWarning']
/** Where tap gathers a run's coverage as V8's JSON files, which Node writes too; tap marks a run that counts it with this variable. */
const COVERAGE = process.env._TAPJS_PROCESSINFO_COVERAGE_ === '1' ? new URL('../../.tap/coverage', import.meta.url).pathname : undefined

/**
 * The test's environment for a child, less tap's NODE_OPTIONS, which loads its process-info module.
 * The token variable of `capture` is never inherited from the test's shell.
 */
export function childEnv (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS, INVENTORY_TOKEN, ...environment } = process.env
  return { ...environment, ...env }
}

export interface RunOptions {
  /** In its own process group, as a terminal's foreground job is. */
  group?: boolean
  /**
   * A built entry point to run instead of the source: with plain Node (no TypeScript loader) and
   * no coverage, which measures this repository's source, not what a build made of it.
   */
  script?: string
  /** The limit of open files (`ulimit -n`) it starts with. */
  maxFiles?: number
  /** No core file, whatever `ulimit -c` allows: for a process a fault's signal ends. */
  noCore?: true
  /** A cgroup's folder (helpers/cgroup.ts) it runs in from its start. */
  cgroup?: string
}

/**
 * A Node command line that runs without tap's process-info module, which tap adds to the
 * NODE_OPTIONS of every child it sees spawned: env(1) sets the child's own, `nodeOptions`.
 */
export function withoutTapModule (nodeArgs: string[], nodeOptions = ''): string[] {
  return ['env', `NODE_OPTIONS=${nodeOptions}`, process.execPath, ...nodeArgs]
}

/**
 * The real entry point as a child process: by default the source, whose coverage Node writes where
 * tap gathers it. Without tap's process-info module: on Node 22 its loader runs on a thread of its
 * own, and took 0.5 to 0.8 s of every start.
 */
function spawnMain (args: string[], env: NodeJS.ProcessEnv, { group = false, script, maxFiles, noCore, cgroup }: RunOptions) {
  const environment = childEnv(script === undefined && COVERAGE !== undefined ? { NODE_V8_COVERAGE: COVERAGE } : {})
  const node = withoutTapModule([...(script === undefined ? [...TYPESCRIPT, MAIN] : [script]), ...args], env.NODE_OPTIONS)
  // env and prlimit run the command in their own process, and the shell execs it in its own: the pid is the service's.
  const limits = [...maxFiles === undefined ? [] : [`--nofile=${maxFiles}`], ...noCore === undefined ? [] : ['--core=0']]
  const limited = limits.length === 0 ? node : ['prlimit', ...limits, '--', ...node]
  const [command, ...rest] = cgroup === undefined ? limited : ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, ...limited]
  return spawn(command!, rest, {
    // Its own process group, as a terminal's foreground job is: Ctrl-C signals the whole group.
    detached: group,
    // No compile cache, Node's or the bundle's (lib/process/code-cache.ts), unless a test asks for
    // one: nothing is written into the system's temporary folder, and coverage counts code that V8
    // compiled in the run.
    env: { ...environment, NODE_DISABLE_COMPILE_CACHE: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** The service, and what it logs. */
export function run (env: NodeJS.ProcessEnv, options: RunOptions = {}) {
  // No drain delay unless a test asks for one: nothing balances load in front of these.
  const child = spawnMain([], { HOST: '127.0.0.1', PORT: '0', DRAIN_DELAY_MS: '0', ...env }, options)
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  // 'close', not 'exit': the last of its output may come after it has exited.
  const exited = once(child, 'close').then(([code]) => ({ code: code as number | null, output }))
  return { child, exited, output: () => output }
}

export type Service = ReturnType<typeof run> & { port: number }

/**
 * Starts the service and resolves with its port once it serves (with WORKERS, once every worker
 * listens: the primary's `serving` line); stopped (SIGTERM) when the test ends.
 */
export async function start (t: Test, env: NodeJS.ProcessEnv = {}, options: RunOptions = {}): Promise<Service> {
  const service = run(env, options)
  // SIGTERM, not SIGKILL: the child writes its coverage on a clean exit. Not awaited: its drain
  // takes a second, which the next test need not wait for (its pipes keep this process alive, so
  // the test file still ends after it). One that has not exited by the deadline fails the file, named.
  t.teardown(() => {
    service.child.kill('SIGTERM')
    const hung = setTimeout(() => {
      service.child.kill('SIGKILL')
      process.exitCode = 1
      console.error(`${t.fullname}: the service (pid ${service.child.pid}) had not exited ${DEADLINE_MS} ms after SIGTERM; killed. Its last output:\n${service.output().slice(-2000)}`)
    }, DEADLINE_MS)
    const exited = () => clearTimeout(hung)
    service.exited.then(exited, exited)
  })
  let port: number | undefined
  await until('the service to serve', () => {
    if (service.child.exitCode !== null) throw new Error(`the service exited: ${service.output()}`)
    const serving = /"port":(\d+),[^\n]*"msg":"serving"/.exec(service.output())
    port = serving === null ? undefined : Number(serving[1])
    return port !== undefined
  })
  return { ...service, port: port! }
}

/** The pids of the workers that have logged that they listen, once there are `count`. */
export async function workerPids (server: ReturnType<typeof run>, count: number): Promise<number[]> {
  const pids = () => [...new Set([...server.output().matchAll(/"pid":(\d+),[^\n]*Server listening/g)].map((match) => Number(match[1])))]
  await until(`${count} workers listening`, () => pids().length >= count)
  return pids()
}

/** Resolves once the service has logged this text (at least `times` times). */
export function logged (service: ReturnType<typeof run>, text: string, times = 1): Promise<void> {
  return until(`the log to say ${JSON.stringify(text)}${times > 1 ? ` ${times} times` : ''}`, () => service.output().split(text).length - 1 >= times)
}

export interface CommandResult { code: number | null, stdout: string, stderr: string }

/** The entry point with a command line (`capture …`, `validate …`), run to its exit within a deadline. */
export async function command (args: string[], env: NodeJS.ProcessEnv = {}, options: Pick<RunOptions, 'script'> = {}): Promise<CommandResult> {
  const child = spawnMain(args, env, options)
  const deadline = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const [code, signal] = await once(child, 'close')
  clearTimeout(deadline)
  if (signal !== null) throw new Error(`${args.join(' ')}: killed by ${signal} (no exit in ${DEADLINE_MS} ms?)\n${stderr}`)
  return { code, stdout, stderr }
}
