#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4 --min-semi-space-size=1 --no-memory-reducer
import './supported-node.mjs'
import module from 'node:module'

/**
 * The one entry point, of `npm start`, the npm scripts and the image (cli.ts runs its command).
 * Everything else is imported once Node's version has been checked, and as one module: the
 * bundle makes chunks of what each import reaches, and each file loaded costs a start some time
 * (docs/performance.md). V8's compiled code of them is kept, and read at the next start, in Node's
 * compile cache: NODE_COMPILE_CACHE (the image ships one), else the system's temporary folder.
 */
module.enableCompileCache()
await (await import('./cli.ts')).run(process.argv.slice(2))
