import { execFile } from 'node:child_process'
import { cp } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { childEnv } from './process.ts'

const ROOT = new URL('../..', import.meta.url).pathname

/**
 * Lays the service out in `folder` as the image and the npm package hold it: `.ci/bundle.mjs`'s
 * dist/service beside the default profile and package.json, and no node_modules. `metafile`: where
 * esbuild's metadata of the build is written, as JSON.
 */
export async function layOutBundle (folder: string, metafile?: string): Promise<void> {
  const args = [join(ROOT, '.ci/bundle.mjs'), `--outdir=${join(folder, 'dist/service')}`, ...metafile === undefined ? [] : [`--metafile=${metafile}`]]
  await promisify(execFile)(process.execPath, args, { cwd: ROOT, env: childEnv(), timeout: 60_000 })
  await cp(join(ROOT, 'data'), join(folder, 'data'), { recursive: true })
  await cp(join(ROOT, 'package.json'), join(folder, 'package.json'))
}

/** The suite's own copy of what ships, laid out once a run, before the test files (test/before.ts). */
export const SUITE_BUNDLE_FOLDER = join(ROOT, 'dist/suite')
export const SUITE_BUNDLE = join(SUITE_BUNDLE_FOLDER, 'dist/service/main.js')
