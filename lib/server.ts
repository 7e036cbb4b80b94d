import closeWithGrace from 'close-with-grace'
import { pino } from 'pino'
import { buildApp } from './app.ts'
import { Catalog } from './catalog.ts'
import { ConfigError, loadConfig, type Config } from './config.ts'
import { loadProfile, ProfileError } from './profile.ts'

/** Start-up: configuration, profile, app, listen. Anything wrong stops here, before a port is opened. */
async function main (): Promise<void> {
  let config: Config
  try {
    config = loadConfig(process.env)
  } catch (error) {
    return fail(error, ConfigError)
  }
  const logger = pino({ level: config.logLevel })
  let catalog: Catalog
  try {
    catalog = new Catalog(loadProfile(config.profile))
  } catch (error) {
    return fail(error, ProfileError, logger)
  }
  logger.info({ profile: config.profile, objectTypes: catalog.items.length, publicUrl: config.publicUrl }, 'profile loaded')

  const app = await buildApp({ config, catalog, logger })
  // SIGTERM/SIGINT: stop accepting, let in-flight requests finish, exit 0 (1 if that takes over 10 s).
  closeWithGrace({ delay: 10_000, logger }, async ({ signal, err }) => {
    if (err !== undefined) logger.error({ err }, 'closing after an unexpected error')
    else logger.info({ signal }, 'closing')
    await app.close()
  })
  await app.listen({ port: config.port, host: config.host })
}

function fail (error: unknown, expected: new (...args: never[]) => Error, logger = pino()): void {
  if (!(error instanceof expected)) throw error
  logger.fatal(error.message)
  process.exitCode = 1
}

await main()
