import { Redis } from 'ioredis'
import type { Logger } from 'pino'

/** The inventory service's registry of RQ workers: a Redis set with one member per worker. */
const WORKERS_KEY = 'rq:workers'
/** Reconnect attempts back off to this; the poll goes on meanwhile and keeps the last count. */
const MAX_RECONNECT_DELAY_MS = 2000
/** A poll not answered within the poll interval, but at least 1 s and at most 5 s, counts as Redis down. */
const pollTimeoutMs = (intervalMs: number) => Math.min(Math.max(intervalMs, 1000), 5000)
/** The most a worker count can be: anything above is no count of workers. */
export const MAX_RQ_WORKERS = 100_000
/**
 * The most bytes a connection may bring between two answered polls: an integer reply is a few
 * bytes, the connection's ready check a few KiB. More closes the connection, so that a broken
 * Redis never has a large reply held in memory.
 */
export const MAX_REPLY_BYTES = 64 * 1024

export interface RqWorkerPoll {
  /** Stops polling and closes the connection. */
  close: () => Promise<void>
}

export interface RqWorkerListener {
  /** The count differs from the last one read (or is the first). */
  changed: (count: number) => void
  /** After every poll: the count read, or undefined when Redis could not be reached or gave no count. */
  polled?: (count: number | undefined) => void
}

/** What a reply that is no worker count looked like, for the log: its type and a little of it. */
function described (reply: unknown): string {
  const text = String(JSON.stringify(reply))
  return `${reply === null ? 'null' : typeof reply} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`
}

/**
 * Reads the number of RQ workers (SCARD rq:workers) every `intervalMs`, in the background:
 * requests never wait on Redis. Only a whole number from 0 to MAX_RQ_WORKERS is served. While
 * Redis cannot be reached, does not answer in time, or answers with anything else, the last count
 * stays; each such spell and the recovery are logged once. A connection that does not answer a poll
 * in time, or brings more than MAX_REPLY_BYTES, is closed and opened again (backing off).
 */
export function pollRqWorkers (url: string, intervalMs: number, logger: Logger, listener: RqWorkerListener): RqWorkerPoll {
  const redis = new Redis(url, {
    // A command sent while disconnected waits for the next connection attempt, and fails
    // if that fails: the first poll waits for the first connection, an outage is one error.
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    commandTimeout: pollTimeoutMs(intervalMs),
    connectTimeout: pollTimeoutMs(intervalMs),
  })
  // The poll logs an outage once; what the connection itself met says why (ECONNREFUSED…),
  // where the failed command only says it was not sent.
  let connectionError: Error | undefined
  redis.on('error', (error) => { connectionError = error })
  let received = 0
  redis.on('connect', () => {
    received = 0
    const stream = redis.stream
    // Before ioredis's parser: past the bound the socket is destroyed at once, read no further
    // (a half-close would go on reading), and ioredis connects anew.
    stream.prependListener('data', (chunk: Buffer) => {
      received += chunk.length
      if (received <= MAX_REPLY_BYTES || stream.destroyed) return
      connectionError = new Error(`a reply of more than ${MAX_REPLY_BYTES} bytes`)
      stream.destroy()
    })
  })
  redis.on('ready', () => { connectionError = undefined })
  // Host and port only: the URL may carry a password.
  const address = new URL(url).host
  let last: number | undefined
  /** What is wrong since the last good poll, as logged; undefined while polls succeed. */
  let problem: string | undefined
  let polling = false
  const failed = (what: string) => {
    if (problem === undefined) logger.error(`${what}; serving the last worker count, ${last ?? 'the profile\'s'}`)
    problem = what
    listener.polled?.(undefined)
  }
  const poll = async () => {
    if (polling) return
    polling = true
    try {
      const count: unknown = await redis.scard(WORKERS_KEY)
      received = 0
      if (!Number.isSafeInteger(count) || (count as number) < 0 || (count as number) > MAX_RQ_WORKERS) {
        return failed(`Redis at ${address} answered SCARD ${WORKERS_KEY} with ${described(count)}, not a count of workers from 0 to ${MAX_RQ_WORKERS}`)
      }
      if (problem !== undefined) logger.info({ rqWorkers: count }, 'Redis reachable again')
      problem = undefined
      if (count !== last) {
        last = count as number
        listener.changed(last)
      }
      listener.polled?.(last)
    } catch (error) {
      const timedOut = (error as Error).message === 'Command timed out'
      // A Redis that stops answering is taken for gone: the next poll goes over a new connection.
      if (timedOut) redis.disconnect(true)
      failed(`Redis at ${address} unreachable (${timedOut ? `no answer within ${pollTimeoutMs(intervalMs)} ms` : (connectionError ?? error as Error).message})`)
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
