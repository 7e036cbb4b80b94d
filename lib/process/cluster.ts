import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'

/** Beyond the workers' own shutdown budget, before the primary kills them. */
const KILL_MARGIN_MS = 5000
/**
 * What a worker tells the primary once it listens. A worker with reusePort binds its own sockets
 * (listen.ts), which the cluster module does not see: the worker's 'listening' event never fires.
 */
const LISTENING = 'inventory-status-api:listening'

/** In a worker: tells the primary that this worker now serves. */
export function reportListening (): void {
  process.send!(LISTENING)
}

/**
 * The primary of a multi-process service: forks `count` workers that share the port, replaces
 * a worker that dies after it was serving, and on SIGTERM/SIGINT has every worker drain, then
 * exits 0; workers still there `shutdownBudgetMs` (plus a margin) later are killed: exit 1.
 * A worker that dies before it ever listened is a start-up failure: all stop, exit 1.
 * `env` is added to the workers' environment.
 */
export function superviseWorkers (count: number, env: NodeJS.ProcessEnv, shutdownBudgetMs: number, logger: Logger): void {
  let stopping = false
  const workers = new Set<Worker>()
  const fork = () => {
    const worker = cluster.fork(env)
    workers.add(worker)
    let listening = false
    worker.on('message', (message) => { if (message === LISTENING) listening = true })
    worker.once('exit', (code, signal) => {
      workers.delete(worker)
      if (stopping) return
      if (!listening) {
        logger.fatal({ worker: worker.process.pid, code, signal }, 'a worker failed to start')
        stop(1, 'stopping all workers')
        return
      }
      logger.error({ worker: worker.process.pid, code, signal }, 'a worker died; starting another')
      fork()
    })
  }

  // Once stopping, the first reason stands: a signal after a failed start must not turn exit 1
  // into 0, nor start a second kill timer.
  const stop = (exitCode: number, why: string) => {
    if (stopping) return logger.info(`${why}; already stopping`)
    logger.info(why)
    stopping = true
    const timer = setTimeout(() => {
      logger.error('workers did not finish in time; killing them')
      for (const worker of workers) worker.process.kill('SIGKILL')
      process.exit(1)
    }, shutdownBudgetMs + KILL_MARGIN_MS)
    timer.unref()
    for (const worker of workers) worker.process.kill('SIGTERM')
    process.exitCode = exitCode
  }
  // Each worker re-reads its files on SIGHUP; unhandled, SIGHUP would end the primary.
  process.on('SIGHUP', () => {
    for (const worker of workers) worker.process.kill('SIGHUP')
  })
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => stop(0, `${signal}: closing all workers`))
  }

  logger.info({ workers: count }, 'starting workers')
  for (let i = 0; i < count; i++) fork()
}
