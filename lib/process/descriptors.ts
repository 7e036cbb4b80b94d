import type { Server } from 'node:http'
import { fs } from '../builtins.ts'
import type { Logger } from 'pino'

// The connections a process cannot take, said in the log at most once a minute: those beyond its
// file descriptors, and those beyond MAX_CONNECTIONS.

const CHECK_EVERY_MS = 1000
const WARN_EVERY_MS = 60_000

/**
 * Out of file descriptors, libuv accepts each new connection it cannot hold and closes it at once,
 * and says nothing: the service goes on serving the connections it has. This says it in the log,
 * at most once a minute, with the limit in force. It looks once a second, by opening /dev/null,
 * which fails only then (EMFILE, or ENFILE when the whole system is out). On Linux, whose /proc
 * gives the limit.
 */
export function warnWhenOutOfDescriptors (logger: Logger): void {
  if (process.platform !== 'linux') return
  const limit = /^Max open files +(\S+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'))![1]
  let warnedAt = -WARN_EVERY_MS
  setInterval(() => {
    try {
      fs.closeSync(fs.openSync('/dev/null', 'r'))
    } catch (error) {
      if (Date.now() - warnedAt < WARN_EVERY_MS) return
      warnedAt = Date.now()
      logger.warn({ limit, code: (error as NodeJS.ErrnoException).code }, `out of file descriptors: all ${limit} this process may open are in use (ulimit -n); ` +
        'new connections are closed unanswered until some close. Raise the limit, or spread the connections over more processes')
    }
  }, CHECK_EVERY_MS).unref()
}

/**
 * A connection beyond MAX_CONNECTIONS gets a 503 and is closed (front/server.ts, which emits 'drop'
 * for it, as node:net does for its own maxConnections). This says it in the log, at most once a minute.
 */
export function warnWhenFull (server: Server, maxConnections: number, logger: Logger): void {
  let warnedAt = -WARN_EVERY_MS
  server.on('drop', () => {
    if (Date.now() - warnedAt < WARN_EVERY_MS) return
    warnedAt = Date.now()
    logger.warn({ maxConnections }, `all ${maxConnections} connections this process keeps are open (MAX_CONNECTIONS): ` +
      'new connections get a 503 and are closed until some close. Raise MAX_CONNECTIONS with the heap (--max-old-space-size), or add replicas')
  })
}
