import closeWithGrace from 'close-with-grace'
import { pino, type Logger } from 'pino'
import { buildApp } from './app.ts'
import { Catalog } from './catalog.ts'
import { loadConfig, type Config } from './config.ts'
import { loadProfile } from './profile.ts'

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
  try {
    catalog = new Catalog(loadProfile(config.profile))
  } catch (error) {
    return stop(logger, error)
  }
  logger.info({ profile: config.profile, objectTypes: catalog.items.length, publicUrl: config.publicUrl }, 'profile loaded')

  const app = await buildApp({ config, catalog, logger })
  // SIGTERM/SIGINT: stop accepting, let in-flight requests finish, exit 0 (1 if that takes over 10 s).
  closeWithGrace({ delay: 10_000, logger }, async ({ signal, err }) => {
    /* c8 ignore next: only an uncaught exception, which no test can cause, gets here with an error */
    if (err !== undefined) logger.error({ err }, 'closing after an unexpected error')
    else logger.info({ signal }, 'closing')
    await app.close()
  })
  await app.listen({ port: config.port, host: config.host })
}

/** Loading throws only ConfigError and ProfileError, whose messages say what to fix. */
function stop (logger: Logger, error: unknown): void {
  logger.fatal((error as Error).message)
  process.exitCode = 1
}

await main()
