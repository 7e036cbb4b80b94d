import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { reconnectingClients } from '../helpers/reconnecting.ts'
import { FAULT_SIGNALS } from '../../lib/process/shutdown.ts'
import { STOPPED_AT_ONCE } from '../../lib/process/stopping.ts'
import { logged, start } from '../helpers/process.ts'

// Shutdown under the load of keep-alive clients that connect again as soon as a connection
// closes (HTTP client pools, load balancers' back-end pools): every request written to a
// connection the service accepted gets its answer; connects after it stopped accepting are
// refused. Each case: 100 clients, the signal 500 ms into the load, a drain delay of 500 ms.
const CLIENTS = 100
const DRAIN_DELAY_MS = 500
/**
 * The drain delay, the last-answer second and the shutdown timeout: exit 0 within these. Long, so
 * that only a drain that hangs misses it, not one on a machine too busy to run it in seconds.
 */
const SHUTDOWN_TIMEOUT_MS = 30_000
const BUDGET_MS = DRAIN_DELAY_MS + 1000 + SHUTDOWN_TIMEOUT_MS

const cases = [
  ['SIGTERM', 'one process', {}, false],
  ['SIGINT', 'one process', {}, false],
  ['SIGTERM', 'one process, to its process group', {}, true],
  ['SIGTERM', 'WORKERS=2', { WORKERS: '2' }, false],
  ['SIGTERM', 'WORKERS=2, to the process group', { WORKERS: '2' }, true],
] as const

for (const [signal, how, env, group] of cases) {
  t.test(`${signal} to ${how} under ${CLIENTS} reconnecting keep-alive clients: nothing dropped, exit 0`, async (t) => {
    const server = await start(t, { ...env, DRAIN_DELAY_MS: String(DRAIN_DELAY_MS), SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) }, { group })
    const load = reconnectingClients(server.port, CLIENTS, server.exited)
    await sleep(500)
    const signalled = Date.now()
    process.kill(group ? -server.child.pid! : server.child.pid!, signal)
    // A supervisor that repeats SIGTERM changes nothing.
    if (signal === 'SIGTERM') setTimeout(() => server.child.kill('SIGTERM'), 200)
    // A hang detector: a service that never exits fails here, not at tap's time-out.
    const deadline = setTimeout(() => server.child.kill('SIGKILL'), BUDGET_MS + 60_000)
    const [outcome, { code }] = await Promise.all([load, server.exited])
    clearTimeout(deadline)
    const took = Date.now() - signalled
    t.equal(code, 0)
    // Exit 0 says it finished within its budget: the service cuts what is left there, exit 1.
    t.ok(took >= DRAIN_DELAY_MS, `exited ${took} ms after the signal, after the drain delay`)
    t.same(outcome.problems, [], 'every answer a 200, no drop')
    t.ok(outcome.sent > 0 && outcome.answered === outcome.sent, `every request answered: ${outcome.answered} of ${outcome.sent}`)
    t.ok(outcome.closing > 0, `${outcome.closing} answers carried Connection: close`)
    // A client told to leave connects again at once: refused, as nothing else listens on the port.
    t.ok(outcome.refused > 0, `${outcome.refused} connects after the drain refused`)
    t.comment(`${outcome.answered} answered, ${outcome.closing} with Connection: close, ${outcome.refused} connects refused, ${outcome.dropped} dropped`)
    // What the service said of its stop, for a failure's reader.
    if (code !== 0 || outcome.problems.length > 0) t.comment(`signalled at ${signalled}; the service's log:\n${server.output()}`)
  })
}

t.test('Ctrl-C: the first drains, a copy of it within half a second changes nothing, a second one stops at once', async (t) => {
  const server = await start(t, { DRAIN_DELAY_MS: '10000' }, { group: true })
  process.kill(-server.child.pid!, 'SIGINT')
  const draining = '"msg":"draining: stopping in'
  await logged(server, draining)
  // As npm forwards the terminal's SIGINT to the service it runs, a moment after the first (sent
  // at once, the two would be one pending signal).
  server.child.kill('SIGINT')
  // The second Ctrl-C a second after the service took the first, by its own log's clock: a busy
  // machine may have it take the first late.
  const tookFirst = Number(new RegExp(`"time":(\\d+),[^\\n]*${draining}`).exec(server.output())![1])
  await sleep(Math.max(0, tookFirst + 1000 - Date.now()))
  t.equal(server.child.exitCode, null, 'still draining')
  process.kill(-server.child.pid!, 'SIGINT')
  const { code, output } = await server.exited
  t.equal(code, STOPPED_AT_ONCE)
  t.equal(output.split('"signal":"SIGINT","drainDelayMs":10000,"msg":"draining: stopping in 11 s (the drain delay, then the last answers; ' +
    'up to 21 s while requests are still running); press Ctrl-C again to stop at once"').length - 1, 1, 'the first says how long, and how to stop at once')
  t.match(output, '"msg":"second Ctrl-C: stopping at once"')
})

t.test('a fault\'s signal ends the process as Node ends it, at once: no drain, no handler that returns to the fault', async (t) => {
  await Promise.all(FAULT_SIGNALS.map(async (signal) => {
    const server = await start(t, {}, { noCore: true })
    server.child.kill(signal)
    await server.exited
    t.equal(server.child.signalCode, signal, `${signal}: ended by it`)
    t.notMatch(server.output(), '"msg":"draining"', `${signal}: no drain`)
  }))
})
