import nodeModule from 'node:module'

// Not named require: in the bundle's commands' file, that is CommonJS's, given to the whole file.
const load = nodeModule.createRequire(import.meta.url)

/*
 * The built-ins that serving loads, with require() rather than import: an import reads every
 * export, which runs the lazy getters behind them (node:http's load undici, node:fs's its
 * promises API, node:v8's promise hooks): a shorter start and less idle memory
 * (docs/performance.md).
 */

export const cluster: typeof import('node:cluster').default = load('node:cluster')

let loadedCrypto: typeof import('node:crypto') | undefined
/** node:crypto, loaded when first asked for (a tokens file): Node takes longer to load it than any other built-in. */
export function crypto (): typeof import('node:crypto') {
  if (loadedCrypto === undefined) loadedCrypto = load('node:crypto') as typeof import('node:crypto')
  return loadedCrypto
}

export const events: typeof import('node:events') = load('node:events')

export const fs: typeof import('node:fs') = load('node:fs')

export const http: typeof import('node:http') = load('node:http')

export const net: typeof import('node:net') = load('node:net')

export const os: typeof import('node:os') = load('node:os')

export const path: typeof import('node:path') = load('node:path')

export const timers: typeof import('node:timers/promises') = load('node:timers/promises')

export const url: typeof import('node:url') = load('node:url')

export const util: typeof import('node:util') = load('node:util')

export const v8: typeof import('node:v8') = load('node:v8')
