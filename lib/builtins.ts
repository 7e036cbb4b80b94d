/**
 * Built-ins loaded when first used rather than imported:
 * - importing reads every export, which on Node 26 runs node:http's lazy getters (they load
 *   undici) and node:util's: a start some 10 % shorter and 4 MiB less idle RSS (docs/performance.md);
 * - the start-up snapshot (snapshot.ts) holds what serving loads, but cannot hold node:http (Node
 *   cannot serialise its parser), and must not hold node:cluster, which decides when it is loaded
 *   whether this process is a worker.
 */
export const builtins = {
  get http () { return process.getBuiltinModule('node:http') },
  get util () { return process.getBuiltinModule('node:util') },
  // @types/node types it as an ES namespace; what this returns is the cluster object, its default.
  get cluster () { return process.getBuiltinModule('node:cluster') as unknown as typeof import('node:cluster').default },
}
