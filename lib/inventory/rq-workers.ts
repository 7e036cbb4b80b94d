import { Redis } from 'ioredis'
import type { Logger } from 'pino'

/** The inventory service's registry of RQ workers: a Redis set with one member per worker. */
const WORKERS_KEY = 'rq:workers'
/** Reconnect attempts back off to this; the poll goes on meanwhile and keeps the last count. */
const MAX_RECONNECT_DELAY_MS = 2000

export interface RqWorkerPoll {
  /** Stops polling and closes the connection. */
  close: () => Promise<void>
}

export interface RqWorkerListener {
  /** The count differs from the last one read (or is the first). */
  changed: (count: number) => void
  /** After every poll: the count read, or undefined when Redis could not be reached. */
  polled?: (count: number | undefined) => void
}

/**
 * Reads the number of RQ workers (SCARD rq:workers) every `intervalMs`, in the background:
 * requests never wait on Redis. While Redis cannot be reached, the last count stays; the
 * outage and the recovery are logged once each.
 */
export function pollRqWorkers (url: string, intervalMs: number, logger: Logger, listener: RqWorkerListener): RqWorkerPoll {
  const redis = new Redis(url, {
    // A command sent while disconnected waits for the next connection attempt, and fails
    // if that fails: the first poll waits for the first connection, an outage is one error.
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
  })
  // The poll logs an outage once; what the connection itself met says why (ECONNREFUSED…),
  // where the failed command only says it was not sent.
  let connectionError: Error | undefined
  redis.on('error', (error) => { connectionError = error })
  redis.on('ready', () => { connectionError = undefined })
  // Host and port only: the URL may carry a password.
  const address = new URL(url).host
  let last: number | undefined
  let outage = false
  let polling = false
  const poll = async () => {
    if (polling) return
    polling = true
    try {
      const count = await redis.scard(WORKERS_KEY)
      if (outage) logger.info({ rqWorkers: count }, 'Redis reachable again')
      outage = false
      if (count !== last) {
        last = count
        listener.changed(count)
      }
      listener.polled?.(count)
    } catch (error) {
      const reason = (connectionError ?? error as Error).message
      if (!outage) logger.error(`Redis at ${address} unreachable (${reason}); serving the last worker count, ${last ?? 'the profile\'s'}`)
      outage = true
      listener.polled?.(undefined)
    } finally {
      polling = false
    }
  }
  const timer = setInterval(poll, intervalMs)
  timer.unref()
  poll()
  return {
    close: async () => {
      clearInterval(timer)
      redis.disconnect()
    },
  }
}
