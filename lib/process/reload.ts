import type { FSWatcher } from 'node:fs'
import type { Logger } from 'pino'
import type { ApiTokens } from '../tokens.ts'
import type { Config } from '../config.ts'
import { fs, path } from '../builtins.ts'
import type { Faults } from '../faults/faults.ts'
import { Catalog } from '../inventory/catalog.ts'
import { loadProfile } from '../inventory/profile.ts'
import type { Served } from '../inventory/served.ts'
import type { Metrics, Reloaded } from '../metrics.ts'

/** Editors and deploy tools write a file in several steps: reload once they have been quiet this long. */
const SETTLE_MS = 100

interface Reloadable {
  config: Pick<Config, 'profile' | 'profileWatch'>
  served: Served
  tokens: ApiTokens
  faults: Faults | undefined
  metrics: Metrics | undefined
  logger: Logger
}

/**
 * SIGHUP re-reads the profile, the tokens file and the faults file; with PROFILE_WATCH, so does a
 * change to the profile, and a change to the faults file always does (a rehearsal is edited as it
 * runs). Whatever fails validation is logged and what is in use stays.
 */
export function reloadOnChange ({ config, served, tokens, faults, metrics, logger }: Reloadable): void {
  metrics?.reloadable(['profile', ...(tokens.file === undefined ? [] : ['tokens' as const]), ...(faults === undefined ? [] : ['faults' as const])])
  const reloaded = (file: Reloaded, ok: boolean) => metrics?.reloaded(file, ok)
  const reloadProfile = () => {
    const started = process.hrtime.bigint()
    try {
      const generation = served.swap(new Catalog(loadProfile(config.profile)))
      const loadMs = Number(process.hrtime.bigint() - started) / 1e6
      metrics?.profileLoaded(loadMs / 1000)
      logger.info({ generation: generation.number, objectTypes: generation.catalog.items.length, loadMs }, 'profile reloaded')
      reloaded('profile', true)
    } catch (error) {
      logger.error(`${(error as Error).message}. Still serving generation ${served.current.number}`)
      reloaded('profile', false)
    }
  }
  const reloadTokens = () => {
    if (tokens.file === undefined) return
    try {
      tokens.reload()
      logger.info({ apiTokens: tokens.count }, 'API tokens reloaded')
      reloaded('tokens', true)
    } catch (error) {
      logger.error(`${(error as Error).message}. The tokens in use stay`)
      reloaded('tokens', false)
    }
  }
  const reloadFaults = () => {
    if (faults === undefined) return
    try {
      faults.reload()
      logger.info(faults.summary, 'faults reloaded')
      reloaded('faults', true)
    } catch (error) {
      logger.error(`${(error as Error).message}. The faults in use stay`)
      reloaded('faults', false)
    }
  }
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading')
    reloadProfile()
    reloadTokens()
    reloadFaults()
  })
  if (config.profileWatch) watchFile(config.profile, reloadProfile)
  if (faults !== undefined) watchFile(faults.file, reloadFaults)
}

/**
 * Calls `changed` when the file a path resolves to changes, is replaced or is another
 * file. It watches folders, not the file: a file replaced by a rename is a new file that a watch
 * on the old one would miss, and Kubernetes updates a mounted ConfigMap without touching the
 * file's own name (it writes a new timestamped folder, points a new `..data_tmp` symlink at it
 * and renames that over `..data`, which the file's symlink goes through). So it watches the
 * path's folder and the folder of the file it resolves to (a symlink to a file elsewhere), looks
 * again where it resolves after every change, and reloads only when the file found there differs
 * (another file, size or modification time): other files in those folders cost a stat, no reload.
 */
function watchFile (file: string, changed: () => void): void {
  const fingerprint = () => {
    try {
      const real = fs.realpathSync(file)
      const { ino, size, mtimeMs } = fs.statSync(real)
      return `${real} ${ino} ${size} ${mtimeMs}`
    } catch (error) {
      // Gone for a moment, or for good: the reload says which.
      return (error as Error).message
    }
  }
  let seen = fingerprint()
  /** Where the file was last found: watched while a symlink dangles, so that its return is seen. */
  let targetFolder = path.dirname(file)
  let watchers: FSWatcher[] = []
  let timer: NodeJS.Timeout | undefined
  const settled = () => {
    watchFolders()
    const now = fingerprint()
    if (now === seen) return
    seen = now
    changed()
  }
  const watchFolders = () => {
    for (const watcher of watchers) watcher.close()
    try {
      targetFolder = path.dirname(fs.realpathSync(file))
    } catch {}
    const folders = new Set([path.dirname(file), targetFolder])
    const soon = () => {
      clearTimeout(timer)
      timer = setTimeout(settled, SETTLE_MS)
    }
    // A watched folder that goes away (the ConfigMap's old one) ends its watch: look again.
    watchers = [...folders].map((folder) => fs.watch(folder, soon).on('error', soon).unref())
  }
  watchFolders()
}
