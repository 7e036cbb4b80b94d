import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Polls until `condition` holds, every 20 ms; past the deadline, fails with what was awaited.
 * Every wait in the tests goes through here, so none can hang a run.
 */
export async function until (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(20)
  }
}
