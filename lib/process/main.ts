#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4 --min-semi-space-size=1 --no-memory-reducer
import './supported-node.mjs'

/**
 * The one entry point, of `npm start`, the npm scripts and the image (cli.ts runs its command).
 * The commands are imported once Node's version has been checked. In the bundle they are one
 * file, loaded with the code V8 compiled of it at the last start that listened (code-cache.ts):
 * .ci/bundle.mjs puts the loader in the place of this import.
 */
await (await import('./cli.ts')).run(process.argv.slice(2))
