import { setTimeout as sleep } from 'node:timers/promises'

/**
 * How long any wait of the tests may take: a hang detector, never a time limit. Far beyond the
 * slowest wait measured on a busy machine (CONTRIBUTING.md), and within tap's time for a file.
 */
export const DEADLINE_MS = 180_000

/**
 * Polls until `condition` holds, every 20 ms; past the deadline, fails with what was awaited.
 * Every wait in the tests goes through here, so none can hang a run.
 */
export async function until (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = DEADLINE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(20)
  }
}
