import { execFile } from 'node:child_process'
import { cp } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { childEnv, withoutTapModule } from './process.ts'

const ROOT = new URL('../..', import.meta.url).pathname

/** How a bundle is laid out: where esbuild's metadata of the build is written (JSON), and whether the build counts for coverage. */
interface LayOut { metafile?: string, covered?: boolean }

/**
 * Lays the service out in `folder` as the image and the npm package hold it: `.ci/bundle.mjs`'s
 * dist/service beside the default profile and package.json, and no node_modules. A build that is
 * not `covered` runs without tap's process-info module: the suite's own copy (test/before.ts) is
 * made in every run, of one test file too, and its coverage of the build script would be that run's.
 */
export async function layOutBundle (folder: string, { metafile, covered = true }: LayOut = {}): Promise<void> {
  const args = [join(ROOT, '.ci/bundle.mjs'), `--outdir=${join(folder, 'dist/service')}`, ...metafile === undefined ? [] : [`--metafile=${metafile}`]]
  const [command, ...rest] = covered ? [process.execPath, ...args] : withoutTapModule(args)
  await promisify(execFile)(command!, rest, { cwd: ROOT, env: childEnv(), timeout: 60_000 })
  await cp(join(ROOT, 'data'), join(folder, 'data'), { recursive: true })
  await cp(join(ROOT, 'package.json'), join(folder, 'package.json'))
}

/** The suite's own copy of what ships, laid out once a run, before the test files (test/before.ts). */
export const SUITE_BUNDLE_FOLDER = join(ROOT, 'dist/suite')
export const SUITE_BUNDLE = join(SUITE_BUNDLE_FOLDER, 'dist/service/main.js')
