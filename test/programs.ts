import type { Test } from 'tap'
import { spawnSync } from 'node:child_process'

/** The programs beyond Node that some tests drive for real, and how to get each (Debian's packages). */
export const PROGRAMS = {
  wrk: 'apt-get install wrk',
} as const

export type Program = keyof typeof PROGRAMS

const installed = (program: string) => spawnSync('sh', ['-c', `command -v ${program}`]).status === 0

/**
 * Whether the machine lacks `program`: then the test is skipped, with a line naming the program and
 * how to get it. With CI=true nothing may be skipped: the test fails instead.
 */
export function lacks (t: Test, program: Program): boolean {
  if (installed(program)) return false
  const why = `needs ${program} (${PROGRAMS[program]})`
  if (process.env.CI === 'true') t.fail(why)
  else t.pass(`skipped: ${why}`, { skip: why })
  return true
}
