import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { converse, DEPLOYMENT, GET, holds, LOADED, residentMiB } from '../helpers/hostile.ts'
import { logged, start } from '../helpers/process.ts'
import { until } from '../helpers/wait.ts'

// MAX_CONNECTIONS: a few connections beyond a small cap, then 20,000 idle ones against the default
// at the Kubernetes deployment's heap (helpers/hostile.ts).

/** Runs test/fixtures/idle-connections.mjs in a process of its own (for its own limit of open files): its tally once every connection has its answer. */
async function idleConnections (t: Test, port: number, count: number) {
  const child = spawn(process.execPath, [new URL('../fixtures/idle-connections.mjs', import.meta.url).pathname, String(port), String(count)], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill() })
  let printed = ''
  child.stdout.on('data', (chunk) => { printed += chunk })
  await until(`${count} connections to be answered`, () => printed.includes('\n'))
  return {
    tally: JSON.parse(printed) as { served: number, refused: number, other: string[] },
    close: async () => {
      child.kill()
      await once(child, 'close')
    },
  }
}

t.test('connections beyond MAX_CONNECTIONS get a JSON 503 at once and are closed; 20,000 idle ones leave a replica alive at the 64 MiB heap', async (t) => {
  // Started without a warm-up: no connection of the test's is open to it.
  const small = await start(t, { ...DEPLOYMENT, MAX_CONNECTIONS: '50' })
  const crowd = await idleConnections(t, small.port, 60)
  t.same(crowd.tally, { served: 50, refused: 10, other: [] }, 'MAX_CONNECTIONS=50, 60 connections: 50 kept and answered, 10 answered the 503 and closed')
  const { answers, closed } = await converse(small.port, GET('/healthz'))
  t.same([answers.map(({ status, headers, body }) => [status, headers['content-type'], headers.connection, body]), closed],
    [[[503, 'application/json', 'close', '{"detail":"Service temporarily unavailable, try again later."}']], true], 'one more, meanwhile: the 503, and closed')
  await crowd.close()
  t.equal(small.output().split('"msg":"all 50 connections this process keeps are open (MAX_CONNECTIONS): new connections get a 503 and are closed until some close. ' +
    'Raise MAX_CONNECTIONS with the heap (--max-old-space-size), or add replicas"').length - 1, 1, 'said in the log, once')
  await holds(t, { ...small, idleMiB: residentMiB(small.child.pid!) })

  // The default: what the heap limit holds.
  const service = await start(t, DEPLOYMENT, LOADED)
  const idleMiB = residentMiB(service.child.pid!)
  await logged(service, '"msg":"serving"')
  const { maxConnections } = JSON.parse(service.output().split('\n').find((line) => line.includes('"msg":"serving"'))!)
  const halves = await Promise.all([idleConnections(t, service.port, 10_000), idleConnections(t, service.port, 10_000)])
  const tally = { served: halves[0].tally.served + halves[1].tally.served, refused: halves[0].tally.refused + halves[1].tally.refused, other: [...halves[0].tally.other, ...halves[1].tally.other] }
  t.same(tally, { served: maxConnections, refused: 20_000 - maxConnections, other: [] }, `20,000 idle connections: ${maxConnections} kept (the default at this heap), the rest refused`)
  t.same([service.child.exitCode, service.child.signalCode], [null, null], 'the process is alive with them all open')
  for (const half of halves) await half.close()
  await holds(t, { ...service, idleMiB }, 96)
})
