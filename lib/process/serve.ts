import type { AddressInfo } from 'node:net'
import { pino } from 'pino'
import { cluster } from '../builtins.ts'
import { ConfigError, listenProblem, loadConfig, type Config } from '../config.ts'
import { firstWorkerPort } from '../front/listen.ts'
import { createService, load, type Loaded } from '../service.ts'
import { reportListening, superviseWorkers } from './cluster.ts'
import { collectForServing } from './collector.ts'
import { warnWhenFull, warnWhenOutOfDescriptors } from './descriptors.ts'
import { reloadOnChange } from './reload.ts'
import { closeOnSignal } from './shutdown.ts'
import { version } from '../version.ts'

/**
 * `serve`: configuration, profile, service, listen. Anything wrong stops here, before a port is
 * opened. `keepCode` keeps V8's code of the bundle for the next start (code-cache.ts), once it
 * has answered a request.
 */
export async function serve (keepCode: () => void): Promise<void> {
  let config: Config
  try {
    config = loadConfig(process.env)
  } catch (error) {
    return stop(error)
  }
  // Written at once, in order: a line still being written when the process exits would land
  // after the last one, which says how the stop ended.
  const logger = pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: true }))
  // Once, by the process that read the configuration first: a worker reads it again.
  if (cluster.isPrimary) for (const warning of config.warnings) logger.warn(warning)
  let loaded: Loaded
  try {
    loaded = await load(config)
  } catch (error) {
    return stop(error)
  }
  if (cluster.isPrimary && config.workers > 1) {
    // Configuration, profile, tokens and port are checked here, so a bad one stops before any
    // worker starts. The workers bind the port themselves: PORT=0 must give them all the same one.
    let port: number
    try {
      port = await firstWorkerPort(config.port, config.host)
    } catch (error) {
      return stop(listenProblem(error as NodeJS.ErrnoException, config.port, config.host))
    }
    if (config.metrics) (await import('../metrics.ts')).serveClusterMetrics()
    return superviseWorkers(config.workers, port, config, logger)
  }
  const { catalog, tokens, faults } = loaded
  logger.info({ profile: config.profile, objectTypes: catalog.items.length, publicUrl: config.publicUrl, apiTokens: tokens.count }, 'profile loaded')
  if (faults !== undefined) logger.info(faults.summary, 'faults loaded')
  const service = await createService(config, loaded, logger)
  closeOnSignal(service, config)
  reloadOnChange(service)
  try {
    await service.listen(config.port, config.host)
  } catch (error) {
    stop(listenProblem(error as NodeJS.ErrnoException, config.port, config.host))
  }
  const serving = {
    version: version(),
    port: (service.server.address() as AddressInfo).port,
    host: config.host,
    workers: config.workers,
    cacheMiB: config.cacheBytes / 2 ** 20,
    maxConnections: config.maxConnections,
    allowedHosts: config.allowedHosts ?? '*',
    loginRequired: config.loginRequired,
    apiTokens: tokens.count,
    profile: config.profile,
    generation: service.served.current.number,
    faults: config.faults ?? 'none',
  }
  // Under WORKERS, the primary says it once, when every worker serves.
  if (cluster.isWorker) reportListening(serving)
  else logger.info(serving, 'serving')
  // Once the first answer is sent, so that the code of answering is kept too; not at exit, which
  // a killed process never reaches; and before V8's flags change, which would make V8 refuse the
  // code at the next start (so they change then too).
  service.server.once('request', (_request, response) => response.once('close', () => {
    keepCode()
    collectForServing()
  }))
  warnWhenOutOfDescriptors(logger)
  warnWhenFull(service.server, config.maxConnections, logger)
}

/**
 * Start-up failed: loading throws only ConfigError (exit 2), ProfileError, TokensError and FaultsError (exit 1),
 * whose messages say what to fix; listening fails with what stops it (config.ts: listenProblem, exit 1 or 2).
 * One plain line on stderr, for the person starting it, nothing on stdout. Exit at once: in a
 * worker, the channel to the primary would otherwise keep the process alive (a pipe's writes are
 * synchronous).
 */
function stop (error: unknown): never {
  process.stderr.write(`${(error as Error).message}\n`)
  process.exit(error instanceof ConfigError ? error.exitCode : 1)
}
