import './supported-node.mjs'
import { run } from './entry.ts'

// The entry point of the npm scripts and the tests (npm start and the image start the snapshot,
// snapshot.ts): `node main.js [command] [args]`.
await run([process.argv[1]!], process.argv.slice(2))
