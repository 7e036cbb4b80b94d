import './supported-node.mjs'
import { startupSnapshot } from 'node:v8'
import { run } from './entry.ts'
import './server.ts'

/**
 * The script of the start-up snapshot that `npm start` and the image start from
 * (`node --snapshot-blob dist/snapshot/snapshot.blob [command] [args]`; `npm run snapshot` builds
 * it with the Node that will run it, which must be that very version). Building it runs this
 * script and loads everything serving needs, which the snapshot holds compiled and evaluated:
 * a start without loading modules (docs/performance.md). What depends on the process (its
 * configuration, pid, sockets) is read once it runs.
 */
startupSnapshot.setDeserializeMainFunction(() => run([], process.argv.slice(1)))
