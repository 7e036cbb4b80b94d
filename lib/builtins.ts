import nodeModule from 'node:module'

// Not named createRequire and require: the bundle's banner declares both in every chunk.
const load = nodeModule.createRequire(import.meta.url)

/*
 * The built-ins whose `import` costs start-up, loaded with require() instead. To import a
 * built-in, Node builds its ES module namespace by reading every export, and on Node 26 that
 * runs node:http's lazy getters (WebSocket, CloseEvent, MessageEvent), which load undici, and
 * node:util's (transferableAbortSignal, ...). require() reads none of them: on Node 26 a start
 * some 10 % shorter and 4 MiB less RSS idle (docs/performance.md). Node 20 has no such
 * getters; the other built-ins the service imports cost the same either way.
 */

export const http: typeof import('node:http') = load('node:http')

export const util: typeof import('node:util') = load('node:util')
