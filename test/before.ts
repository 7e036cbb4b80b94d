import { rm } from 'node:fs/promises'
import { layOutBundle, SUITE_BUNDLE_FOLDER } from './helpers/bundle.ts'

// What tap runs once before the test files (package.json's `tap.before`): the bundle that the
// tests which run what ships start (helpers/bundle.ts), laid out afresh.
await rm(SUITE_BUNDLE_FOLDER, { recursive: true, force: true })
await layOutBundle(SUITE_BUNDLE_FOLDER, { covered: false })
