import type { Test } from 'tap'
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { until } from './wait.ts'

/**
 * A memory cgroup, as a container runtime makes one for a memory limit: where the kernel kills a
 * process that goes past it. cgroup v2's unified tree with its memory controller, or v1's memory
 * hierarchy; either needs root.
 */
interface Hierarchy {
  root: string
  /** The file that sets the limit, in a cgroup of this hierarchy. */
  limit: string
}

function hierarchy (): Hierarchy | undefined {
  const candidates: Hierarchy[] = [
    { root: '/sys/fs/cgroup', limit: 'memory.max' },
    { root: '/sys/fs/cgroup/memory', limit: 'memory.limit_in_bytes' },
  ]
  return candidates.find(({ root, limit }) => {
    try {
      accessSync(root, constants.W_OK)
      return limit === 'memory.max' ? readFileSync(join(root, 'cgroup.controllers'), 'utf8').includes('memory') : existsSync(join(root, limit))
    } catch {
      return false
    }
  })
}

const found = hierarchy()

/** The skip of a test that needs a memory cgroup: never with CI=true, where the test then fails for want of one. */
export const cgroupSkip: false | string = found !== undefined || process.env.CI === 'true'
  ? false
  : 'needs root and the kernel\'s memory cgroups (/sys/fs/cgroup), as a container runtime does'

let made = 0

/**
 * Makes a cgroup limited to `bytes` of memory, removed when the test ends (once what was put in it
 * has exited), and returns its folder (for RunOptions.cgroup).
 */
export function memoryLimited (t: Test, bytes: number): string {
  if (found === undefined) throw new Error('no memory cgroup hierarchy can be written here (root and /sys/fs/cgroup are needed)')
  const dir = join(found.root, `inventory-test-${process.pid}-${++made}`)
  if (found.limit === 'memory.max') {
    // The controller must be on in the parent for the child to have its files.
    try { writeFileSync(join(found.root, 'cgroup.subtree_control'), '+memory') } catch {}
  }
  mkdirSync(dir)
  t.teardown(() => until(`the cgroup ${dir} to be removed`, () => {
    try {
      rmdirSync(dir)
      return true
    } catch {
      return false
    }
  }))
  writeFileSync(join(dir, found.limit), String(bytes))
  return dir
}
