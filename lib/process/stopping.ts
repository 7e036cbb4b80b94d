import type { Logger } from 'pino'
import type { Config } from '../config.ts'

/**
 * How long busy connections get to receive their `Connection: close` before the idle ones are
 * closed: a client with requests in flight sends its next one well within this, so only
 * connections idle for the whole second are closed without a last answer.
 */
export const LAST_ANSWER_GRACE_MS = 1000
/**
 * A signal to a process group reaches the service itself and again through its parent (npm
 * forwards SIGINT and SIGTERM, a cluster's primary sends SIGTERM): one within this time of the
 * first is a copy of it, not a person pressing Ctrl-C again.
 */
const SAME_SIGNAL_MS = 500
/** The exit code when a second Ctrl-C stops the service at once: 128 + SIGINT, as a shell reports it. */
export const STOPPED_AT_ONCE = 130

export type Timing = Pick<Config, 'drainDelayMs' | 'shutdownTimeoutMs'>

/** From the signal until the process must be gone (what a supervisor should wait). */
export const shutdownBudgetMs = ({ drainDelayMs, shutdownTimeoutMs }: Timing) =>
  drainDelayMs + LAST_ANSWER_GRACE_MS + shutdownTimeoutMs

/** What the first Ctrl-C says to the person who pressed it: how long the stop takes, and how to cut it short. */
export const ctrlCNotice = (timing: Timing) =>
  `stopping in ${seconds(timing.drainDelayMs + LAST_ANSWER_GRACE_MS)} (the drain delay, then the last answers; ` +
  `up to ${seconds(shutdownBudgetMs(timing))} while requests are still running); press Ctrl-C again to stop at once`

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`

/**
 * A Ctrl-C while stopping since `since`: a second one stops at once (after `before`), a copy of the
 * first changes nothing.
 */
export function stopAtOnceOnSecondCtrlC (since: number, logger: Logger, before?: () => void): void {
  if (Date.now() - since < SAME_SIGNAL_MS) return
  logger.warn('second Ctrl-C: stopping at once')
  before?.()
  logger.warn({ exitCode: STOPPED_AT_ONCE }, `stopped: at once, on a second Ctrl-C; requests still running were cut (exit code ${STOPPED_AT_ONCE})`)
  process.exit(STOPPED_AT_ONCE)
}
