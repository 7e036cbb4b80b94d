import './supported-node.mjs'

/**
 * The one entry point, of `npm start`, the npm scripts and the image (cli.ts runs its command).
 * Everything else is imported once Node's version has been checked, and as one module: the
 * bundle makes chunks of what each import reaches, and serving loaded twelve files when each
 * command was an import of its own, six now, 3 ms sooner (docs/performance.md).
 */
await (await import('./cli.ts')).run(process.argv.slice(2))
