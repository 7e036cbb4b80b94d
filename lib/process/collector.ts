import { v8 } from '../builtins.ts'

/** Whether the drain has begun: from then on, the collector stays set for stopping. */
let stopping = false

/**
 * V8's collector set for serving, from the first answer on (docs/performance.md), unless the drain
 * has begun; on the command line, the flags would cost start-up (Node's own code cache is then
 * rejected).
 * - No allocation-site pretenuring: a burst of connections held open (a load test's clients) had V8
 *   allocate every later request's objects in the old generation, for good.
 * - No incremental marking: under many connections a full collection marked while requests went on,
 *   and what they allocated meanwhile survived it, which grew the old generation far past its live size.
 */
export function collectForServing (): void {
  if (stopping) return
  v8.setFlagsFromString('--no-allocation-site-pretenuring')
  v8.setFlagsFromString('--no-incremental-marking')
}

/**
 * V8's collector set for stopping, when the drain begins: incremental marking again. Without it a
 * compiler thread that allocates past the old generation's limit waits for the main thread to
 * collect, and a main thread in process.exit() waits for the compiler threads: a process that never
 * exits (Node's issue 54918). While the drain runs, the main thread collects for any that waits.
 */
export function collectForStopping (): void {
  stopping = true
  v8.setFlagsFromString('--incremental-marking')
}
