import type { Worker } from 'node:cluster'
import type { Logger } from 'pino'
import { cluster } from '../builtins.ts'
import { ctrlCNotice, shutdownBudgetMs, stopAtOnceOnSecondCtrlC, type Timing } from './stopping.ts'

/** Beyond the workers' own shutdown budget, before the primary kills them. */
const KILL_MARGIN_MS = 5000

/**
 * What the primary and its workers tell each other. A worker with reusePort binds its own sockets
 * (listen.ts), which the cluster module does not see: the worker's 'listening' event never fires.
 * The primary leads the shutdown, so that no worker tells its clients to leave while another still
 * accepts: they would connect to that one and be reset when it closes its sockets (shutdown.ts).
 */
const MESSAGE = {
  /** Worker: it serves (a Listening message, with what its `serving` line would say). */
  listening: 'inventory-status-api:listening',
  /** Worker: it got this signal (`…:SIGTERM`), which is the primary's to act on. */
  signalled: 'inventory-status-api:signalled:',
  /** Primary: drain and stop. */
  drain: 'inventory-status-api:drain',
  /** Worker: its listening sockets are closed. */
  stoppedAccepting: 'inventory-status-api:stopped-accepting',
  /** Primary: every worker's are: clients may be told to leave. */
  noneAccepts: 'inventory-status-api:none-accepts',
} as const

/** The signals that stop the service. */
type Stopping = 'SIGTERM' | 'SIGINT'

/** A worker that has just died may have no channel left: its exit is handled on its own. */
function tell (worker: Worker, message: string): void {
  if (worker.isConnected()) worker.send(message)
}

/** A worker's word that it serves, and what it serves. */
interface Listening { type: typeof MESSAGE.listening, serving: Record<string, unknown> }
const isListening = (message: unknown): message is Listening => (message as Listening | null)?.type === MESSAGE.listening

/** In a worker: tells the primary that this worker now serves, and what. */
export function reportListening (serving: Record<string, unknown>): void {
  process.send!({ type: MESSAGE.listening, serving } satisfies Listening)
}

/** In a worker whose sockets are closed: called once the primary says that no worker accepts. */
let noneAccepts: () => void

/**
 * In a worker: SIGTERM and SIGINT go to the primary, and `drain` runs once the primary says so.
 * (A signal to the process group reaches every process; the primary acts on it once.)
 */
export function drainWhenPrimarySays (drain: () => void): void {
  const signalled = (signal: NodeJS.Signals) => process.send!(MESSAGE.signalled + signal)
  process.on('SIGTERM', signalled)
  process.on('SIGINT', signalled)
  // Not the only messages a worker gets: prom-client's aggregation has its own.
  process.on('message', (message) => {
    if (message === MESSAGE.drain) drain()
    else if (message === MESSAGE.noneAccepts) noneAccepts()
  })
}

/** In a worker whose sockets are closed: resolves once no worker accepts any more. */
export function noWorkerAccepts (): Promise<void> {
  return new Promise((resolve) => {
    noneAccepts = resolve
    process.send!(MESSAGE.stoppedAccepting)
  })
}

/**
 * The primary of a multi-process service: forks `count` workers that share `port`, replaces
 * a worker that dies after it was serving, and on SIGTERM/SIGINT (its own or a worker's) has
 * every worker drain, then exits 0; workers still there after their shutdown budget (plus a
 * margin) are killed: exit 1. A second Ctrl-C kills them at once. A worker that dies before it ever
 * listened is a start-up failure: all stop, exit 1. Port 0 is the first worker's to be given: the
 * others are forked once it listens, to bind the same one (front/listen.ts: firstWorkerPort).
 */
export function superviseWorkers (count: number, port: number, timing: Timing, logger: Logger): void {
  const env = { PORT: String(port) }
  /** When the stop began: it runs once, whatever asks for it again. */
  let stoppingSince: number | undefined
  const workers = new Set<Worker>()
  /** Whether the service's `serving` line is out. */
  let said = false
  /** The workers that have listened: they have their shutdown in place. */
  const serving = new Set<Worker>()
  const stoppedAccepting = new Set<Worker>()
  /** Once every worker left has closed its sockets, each may send its last answers. */
  const releaseWhenNoneAccepts = () => {
    if (stoppingSince === undefined || [...workers].some((worker) => !stoppedAccepting.has(worker))) return
    for (const worker of stoppedAccepting) tell(worker, MESSAGE.noneAccepts)
    stoppedAccepting.clear()
  }
  const fork = () => {
    const worker = cluster.fork(env)
    workers.add(worker)
    worker.on('message', (message) => {
      if (isListening(message)) {
        serving.add(worker)
        if (env.PORT === '0' && stoppingSince === undefined) {
          env.PORT = String(message.serving.port)
          for (let i = 1; i < count; i++) fork()
        }
        // One line for the service, once the first workers all serve; a replacement's adds nothing.
        if (!said && serving.size === count) {
          said = true
          logger.info({ ...message.serving, pids: [...serving].map((each) => each.process.pid) }, 'serving')
        }
        // Told to drain only once it can hear it: one still starting when the stop came, now.
        if (stoppingSince !== undefined) tell(worker, MESSAGE.drain)
      } else if (typeof message === 'string' && message.startsWith(MESSAGE.signalled)) {
        // As if the primary had it: whichever copy of a group's signal comes first.
        signalled(message.slice(MESSAGE.signalled.length) as Stopping)
      } else if (message === MESSAGE.stoppedAccepting) {
        stoppedAccepting.add(worker)
        releaseWhenNoneAccepts()
      }
    })
    worker.once('exit', (code, signal) => {
      workers.delete(worker)
      stoppedAccepting.delete(worker)
      const wasServing = serving.delete(worker)
      if (stoppingSince !== undefined) {
        if (code !== 0 && wasServing) workerCut = true
        if (workers.size === 0) return stopped()
        return releaseWhenNoneAccepts()
      }
      if (!wasServing) {
        logger.fatal({ worker: worker.process.pid, code, signal }, 'a worker failed to start')
        failedStart = true
        stop(1, 'stopping all workers')
        return
      }
      logger.error({ worker: worker.process.pid, code, signal }, 'a worker died; starting another')
      fork()
    })
  }

  const killWorkers = () => {
    for (const worker of workers) worker.process.kill('SIGKILL')
  }
  /** A worker that stopped with requests cut (its shutdown timeout, or killed), and one that never started. */
  let workerCut = false
  let failedStart = false
  /** Every worker is gone: the last line says how the stop ended, as a single process's does. */
  const stopped = () => {
    if (failedStart) return logger.error({ exitCode: 1 }, 'stopped: a worker failed to start (exit code 1)')
    if (workerCut) {
      process.exitCode = 1
      return logger.error({ exitCode: 1, shutdownTimeoutMs: timing.shutdownTimeoutMs },
        `stopped: requests were still running in a worker when SHUTDOWN_TIMEOUT_MS (${timing.shutdownTimeoutMs} ms) was up; they were cut (exit code 1)`)
    }
    logger.info({ exitCode: 0 }, 'stopped: every worker drained, every request answered (exit code 0)')
  }
  // Once stopping, the first reason stands: a signal after a failed start must not turn exit 1
  // into 0, nor start a second kill timer.
  function signalled (signal: Stopping): void {
    if (signal === 'SIGINT' && stoppingSince !== undefined) stopAtOnceOnSecondCtrlC(stoppingSince, logger, killWorkers)
    stop(0, `${signal}: closing all workers`, signal === 'SIGINT' ? `: ${ctrlCNotice(timing)}` : '')
  }
  const stop = (exitCode: number, why: string, notice = '') => {
    if (stoppingSince !== undefined) return logger.info(`${why}; already stopping`)
    logger.info(why + notice)
    stoppingSince = Date.now()
    const timer = setTimeout(() => {
      killWorkers()
      logger.error({ exitCode: 1 }, 'stopped: workers still running past their shutdown budget were killed (exit code 1)')
      process.exit(1)
    }, shutdownBudgetMs(timing) + KILL_MARGIN_MS)
    timer.unref()
    for (const worker of serving) tell(worker, MESSAGE.drain)
    process.exitCode = exitCode
  }
  // Each worker re-reads its files on SIGHUP; unhandled, SIGHUP would end the primary.
  process.on('SIGHUP', () => {
    for (const worker of workers) worker.process.kill('SIGHUP')
  })
  process.on('SIGTERM', signalled)
  process.on('SIGINT', signalled)

  logger.info({ workers: count }, 'starting workers')
  for (let i = 0; i < (port === 0 ? 1 : count); i++) fork()
}
