import cluster from 'node:cluster'
import { setTimeout as sleep } from 'node:timers/promises'
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from '../config.ts'

/**
 * How long connections that are busy get to receive their `Connection: close` before the
 * idle ones are closed: a connection with requests in flight gets its next one well within
 * this, so only connections idle for the whole second are cut without a last answer.
 */
export const LAST_ANSWER_GRACE_MS = 1000

type Timing = Pick<Config, 'drainDelayMs' | 'shutdownTimeoutMs'>

/** From the signal until the process must be gone (what a supervisor should wait). */
export const shutdownBudgetMs = ({ drainDelayMs, shutdownTimeoutMs }: Timing) =>
  drainDelayMs + LAST_ANSWER_GRACE_MS + shutdownTimeoutMs

/**
 * On SIGTERM or SIGINT, leave without dropping a request: /readyz turns 503 while the API
 * keeps serving for the drain delay (load balancers stop sending), then every answer carries
 * `Connection: close`, then the listener and idle connections close and in-flight requests
 * finish: exit 0. Whatever is still open when the shutdown timeout is up is cut: exit 1.
 */
export function closeOnSignal (app: FastifyInstance, timing: Timing, logger: Logger): void {
  // Ctrl-C in a terminal signals the whole process group: a worker leaves SIGINT to the primary,
  // which stops every worker with SIGTERM, so that each stops once (a second signal would cut it).
  if (cluster.isWorker) process.on('SIGINT', () => {})
  closeWithGrace({
    delay: shutdownBudgetMs(timing),
    logger,
    // SIGHUP means "re-read your files" here, not "stop".
    skip: cluster.isWorker ? ['SIGHUP', 'SIGINT'] : ['SIGHUP'],
  }, async ({ signal, err }) => {
    /* c8 ignore next: only an uncaught exception, which no test can cause, gets here with an error */
    if (err !== undefined) logger.error({ err }, 'closing after an unexpected error')
    else logger.info({ signal, drainDelayMs: timing.drainDelayMs }, 'draining')
    app.lifecycle.ready = false
    await sleep(timing.drainDelayMs)
    app.lifecycle.closing = true
    await sleep(LAST_ANSWER_GRACE_MS)
    logger.info('closing')
    await app.close()
  })
}
