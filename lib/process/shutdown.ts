import closeWithGrace from 'close-with-grace'
import type { Service } from '../service.ts'
import { cluster, timers } from '../builtins.ts'
import { drainWhenPrimarySays, noWorkerAccepts } from './cluster.ts'
import { collectForStopping } from './collector.ts'
import { ctrlCNotice, LAST_ANSWER_GRACE_MS, shutdownBudgetMs, stopAtOnceOnSecondCtrlC, type Timing } from './stopping.ts'

/**
 * A fault's signals end the process as Node ends it. Caught, a handler returns to the instruction
 * that faulted, which faults again: V8's fatal errors end in a trap instruction, and a process
 * whose heap ran out spun on it at full CPU, deaf to SIGTERM, instead of exiting.
 */
export const FAULT_SIGNALS = ['SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGTRAP', 'SIGABRT'] as const

/**
 * On SIGTERM or SIGINT, leave without dropping a request (exit 0); what is still open when the
 * shutdown timeout is up is cut (exit 1). SIGTERM again changes nothing: a supervisor that will
 * not wait sends SIGKILL. A second Ctrl-C (SIGINT) stops at once. A cluster worker leaves the
 * signals to the primary and drains when the primary says so (cluster.ts).
 */
export function closeOnSignal (service: Service, timing: Timing): void {
  const { logger } = service
  /** When the drain began: it runs once, whatever asks for it again. */
  let drainingSince: number | undefined
  const grace = closeWithGrace({
    delay: shutdownBudgetMs(timing),
    logger,
    onTimeout: () => logger.error({ exitCode: 1, shutdownTimeoutMs: timing.shutdownTimeoutMs },
      `stopped: requests were still running when SHUTDOWN_TIMEOUT_MS (${timing.shutdownTimeoutMs} ms) was up, after the drain delay and the last answers; they were cut (exit code 1)`),
    // The signals are read below; SIGHUP means "re-read your files" here, not "stop".
    skip: ['SIGHUP', 'SIGINT', 'SIGTERM', ...FAULT_SIGNALS],
  }, async ({ err }) => {
    drainingSince = Date.now()
    /* c8 ignore next: only an uncaught exception, which no test can cause, gets here with an error */
    if (err !== undefined) logger.error({ err }, 'closing after an unexpected error')
    await drainAndClose(service, timing)
  })
  const drain = (signal?: NodeJS.Signals) => {
    if (drainingSince !== undefined) return
    logger.info({ signal, drainDelayMs: timing.drainDelayMs }, signal === 'SIGINT' ? `draining: ${ctrlCNotice(timing)}` : 'draining')
    grace.close()
  }
  if (cluster.isWorker) return drainWhenPrimarySays(drain)
  process.on('SIGTERM', drain)
  process.on('SIGINT', (signal) => {
    if (drainingSince === undefined) return drain(signal)
    stopAtOnceOnSecondCtrlC(drainingSince, logger)
  })
}

/**
 * The order that drops nothing. Stopping to accept comes before any client is told to leave:
 * a client told to leave connects again at once, and a connection still waiting in a listening
 * socket's queue when that socket closes is reset by the kernel, its request written and lost.
 */
async function drainAndClose (service: Service, { drainDelayMs }: Timing): Promise<void> {
  // 1. /readyz answers 503 and the API goes on serving: load balancers take the process out.
  // V8 marks incrementally again: otherwise the exit at the end may wait for ever on a compiler thread (collector.ts).
  collectForStopping()
  const { lifecycle } = service
  lifecycle.ready = false
  await timers.setTimeout(drainDelayMs)
  // 2. Every listening socket closes: a new connect is refused, none is cut. Every worker's.
  await lifecycle.stopAccepting()
  if (cluster.isWorker) await noWorkerAccepts()
  // 3. Every answer carries `Connection: close`: busy connections get their last answer and leave.
  lifecycle.closing = true
  await timers.setTimeout(LAST_ANSWER_GRACE_MS)
  // 4. Idle connections are closed, requests in flight finish, then what the service started stops.
  service.logger.info('closing')
  await service.close()
  service.logger.info({ exitCode: 0 }, 'stopped: every request answered (exit code 0)')
}
