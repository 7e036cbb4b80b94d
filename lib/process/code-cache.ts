import type { Script } from 'node:vm'
import { digestOf } from '../http/entity-tag.ts'

// Loaded as the bundle's entry point loads them: without reading every export (builtins.ts says why).
const fs = process.getBuiltinModule('node:fs')
const { createRequire } = process.getBuiltinModule('node:module')
const os = process.getBuiltinModule('node:os')
const path = process.getBuiltinModule('node:path')
const { pathToFileURL } = process.getBuiltinModule('node:url')
const { debuglog } = process.getBuiltinModule('node:util')
const vm = process.getBuiltinModule('node:vm')

/** `NODE_DEBUG=code-cache`: whether a start read the kept code, and when it keeps it. */
const debug = debuglog('code-cache')

/** The commands' file of the bundle, loaded: what it exports, and `keep`, which writes V8's code of it. */
export interface LoadedBundle {
  exports: Record<string, unknown>
  /**
   * Keeps the code V8 has compiled of the file so far, for the next start, unless this start
   * read it (or keeping is off): to be called once, before V8's flags change, since V8 refuses
   * code made under other flags.
   */
  keep: () => void
}

/**
 * Where the code of the bundle's `file` is kept: in the folder of Node's compile cache,
 * NODE_COMPILE_CACHE or else `node-compile-cache` in the system's temporary folder; nowhere with
 * NODE_DISABLE_COMPILE_CACHE. One file per Node version, machine and bundle (by its path): V8
 * itself refuses code made of another text or under other flags, and two bundles side by side (a
 * benchmark's builds) would each refuse the other's.
 */
export function codeCacheFile (env: NodeJS.ProcessEnv, file: string): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE !== undefined) return undefined
  const folder = env.NODE_COMPILE_CACHE || path.join(os.tmpdir(), 'node-compile-cache')
  return path.join(folder, `inventory-status-api-${process.version}-${process.arch}-${digestOf(file)}.code`)
}

/**
 * Runs the bundle's commands' file, one CommonJS function that takes `import.meta`'s url besides
 * CommonJS's arguments, from the code V8 compiled of it at an earlier start when that code is kept
 * in `cacheFile`: every function that start had run, where Node's compile cache holds only what V8
 * compiles as it reads a file. The file is read as Latin-1 (it is ASCII): one string, which Node
 * keeps outside V8's heap; its bytes' memory then takes the kept code.
 */
export function loadBundle (file: string, cacheFile: string | undefined): LoadedBundle {
  const bytes = fs.readFileSync(file)
  const text = bytes.toString('latin1')
  const cachedData = cacheFile === undefined ? undefined : readIfThere(cacheFile, bytes)
  let script: Script | undefined = new vm.Script(text, { filename: file, cachedData })
  const read = cachedData !== undefined && !script.cachedDataRejected
  if (cachedData !== undefined) debug('%s %s', read ? 'read' : 'refused', cacheFile)
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file), pathToFileURL(file).href)
  return {
    exports: module.exports,
    keep () {
      if (script !== undefined && cacheFile !== undefined && !read) write(cacheFile, script.createCachedData())
      // The script, with the code V8 made of it, is needed no more.
      script = undefined
    },
  }
}

/**
 * The kept code, read into `memory` (the text's bytes, copied into its string by then) where it fits:
 * memory the process has touched already, where a buffer of its own would be pages touched anew.
 */
function readIfThere (file: string, memory: Buffer): Buffer | undefined {
  try {
    const fd = fs.openSync(file, 'r')
    try {
      const { size } = fs.fstatSync(fd)
      const into = size <= memory.length ? memory : Buffer.allocUnsafeSlow(size)
      return into.subarray(0, fs.readSync(fd, into, 0, size, 0))
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return undefined
  }
}

/**
 * Writes to a file of this process's, then renames it: a start reading the file meanwhile (a
 * cluster's other workers) reads all of it or none. A folder the process may not write (a
 * read-only filesystem) leaves the code unkept.
 */
function write (file: string, code: Buffer): void {
  const temporary = `${file}.${process.pid}`
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(temporary, code)
    fs.renameSync(temporary, file)
    debug('kept %s', file)
  } catch (error) {
    debug('not kept: %s', (error as Error).message)
    // What was written of it, if anything was.
    fs.rm(temporary, { force: true }, () => {})
  }
}
