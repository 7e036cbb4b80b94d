import { watch } from 'node:fs'
import { basename, dirname } from 'node:path'
import type { Logger } from 'pino'
import type { ApiTokens } from '../api/tokens.ts'
import type { Config } from '../config.ts'
import { Catalog } from '../inventory/catalog.ts'
import { loadProfile } from '../inventory/profile.ts'
import type { Served } from '../inventory/served.ts'
import type { Metrics } from '../ops/metrics.ts'

/** Editors and deploy tools write a file in several steps: reload once they have been quiet this long. */
const SETTLE_MS = 100

interface Reloadable {
  config: Pick<Config, 'profile' | 'profileWatch'>
  served: Served
  tokens: ApiTokens | undefined
  metrics: Metrics | undefined
  logger: Logger
}

/**
 * SIGHUP re-reads the profile and the tokens file; with PROFILE_WATCH, so does a change to the
 * profile. Whatever fails validation is logged and what is being served stays.
 */
export function reloadOnChange ({ config, served, tokens, metrics, logger }: Reloadable): void {
  const reloadProfile = () => {
    const started = process.hrtime.bigint()
    try {
      const generation = served.swap(new Catalog(loadProfile(config.profile)))
      const loadMs = Number(process.hrtime.bigint() - started) / 1e6
      metrics?.profileLoaded(loadMs / 1000)
      logger.info({ generation: generation.number, objectTypes: generation.catalog.items.length, loadMs }, 'profile reloaded')
    } catch (error) {
      logger.error(`${(error as Error).message}; still serving generation ${served.current.number}`)
    }
  }
  const reloadTokens = () => {
    if (tokens === undefined) return
    try {
      tokens.reload()
      logger.info({ apiTokens: tokens.count }, 'API tokens reloaded')
    } catch (error) {
      logger.error(`${(error as Error).message}; the tokens in use stay`)
    }
  }
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading')
    reloadProfile()
    reloadTokens()
  })
  if (config.profileWatch) {
    // The folder, not the file: a file replaced by a rename is a new file the old watch would miss.
    let timer: NodeJS.Timeout | undefined
    watch(dirname(config.profile), (_event, name) => {
      if (name !== basename(config.profile)) return
      clearTimeout(timer)
      timer = setTimeout(reloadProfile, SETTLE_MS)
    }).unref()
  }
}
