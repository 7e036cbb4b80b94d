import cluster from 'node:cluster'
import { pino, type Logger } from 'pino'
import { ApiTokens } from '../api/tokens.ts'
import { buildApp } from '../app.ts'
import { hostProblem, loadConfig, type Config } from '../config.ts'
import { Catalog } from '../inventory/catalog.ts'
import { loadProfile } from '../inventory/profile.ts'
import { Served } from '../inventory/served.ts'
import { superviseWorkers } from './cluster.ts'
import { listen } from './listen.ts'
import { reloadOnChange } from './reload.ts'
import { closeOnSignal, shutdownBudgetMs } from './shutdown.ts'

/** Start-up: configuration, profile, app, listen. Anything wrong stops here, before a port is opened. */
async function main (): Promise<void> {
  let config: Config
  try {
    config = loadConfig(process.env)
  } catch (error) {
    return stop(pino(), error)
  }
  const logger = pino({ level: config.logLevel })
  let catalog: Catalog
  let tokens: ApiTokens | undefined
  const started = process.hrtime.bigint()
  try {
    catalog = new Catalog(loadProfile(config.profile))
    if (config.apiTokensFile !== undefined) tokens = new ApiTokens(config.apiTokensFile)
  } catch (error) {
    return stop(logger, error)
  }
  if (cluster.isPrimary && config.workers > 1) {
    if (config.metrics) (await import('../ops/metrics.ts')).serveClusterMetrics()
    // Configuration, profile and tokens were checked above, so a bad one stops before any worker starts.
    return superviseWorkers(config.workers, shutdownBudgetMs(config), logger)
  }
  logger.info({ profile: config.profile, objectTypes: catalog.items.length, publicUrl: config.publicUrl, apiTokens: tokens?.count }, 'profile loaded')

  const served = new Served(catalog, config.cacheBytes)
  // prom-client and ioredis cost start-up time and memory: loaded only when configured.
  const metrics = config.metrics ? new (await import('../ops/metrics.ts')).Metrics(served) : undefined
  metrics?.profileLoaded(Number(process.hrtime.bigint() - started) / 1e9)
  const app = await buildApp({ config, served, ...(tokens !== undefined && { tokens }), ...(metrics !== undefined && { metrics }), logger })
  if (config.redisUrl !== undefined) {
    const { pollRqWorkers } = await import('../inventory/rq-workers.ts')
    const poll = pollRqWorkers(config.redisUrl, config.rqPollIntervalMs, logger, {
      changed: (count) => served.setWorkerCount(count),
      ...(metrics !== undefined && { polled: (count: number | undefined) => metrics.redisPolled(count) }),
    })
    app.addHook('onClose', poll.close)
  }
  closeOnSignal(app, config, logger)
  reloadOnChange({ config, served, tokens, metrics, logger })
  try {
    await listen(app, config.port, config.host)
  } catch (error) {
    stop(logger, hostProblem(error as NodeJS.ErrnoException, config.host) ?? error)
  }
}

/**
 * Start-up failed: loading throws only ConfigError, ProfileError and TokensError, whose messages say what
 * to fix; listening fails with the system's reason (EADDRINUSE…). Exit at once: in a worker,
 * the channel to the primary would otherwise keep the process alive. (pino writes synchronously.)
 */
function stop (logger: Logger, error: unknown): never {
  logger.fatal((error as Error).message)
  process.exit(1)
}

await main()
