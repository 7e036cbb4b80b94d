import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { Agent } from 'node:http'
import { fetch, freePort } from './http.ts'
import { start, type Service } from './service.ts'
import { until } from './wait.ts'

// A real HAProxy (Debian's package; .ci/run installs it) with deploy/haproxy/haproxy.cfg in front
// of two replicas of the service: a rolling restart under keep-alive load drops nothing.
if (spawnSync('sh', ['-c', 'command -v haproxy']).status !== 0) {
  throw new Error('haproxy is not installed: apt-get install haproxy (.ci/run does)')
}
const CONFIG = new URL('../deploy/haproxy/haproxy.cfg', import.meta.url).pathname
/** Short, so that the test is: out of rotation within the drain delay, then a second to finish. */
const REPLICA_ENV = { DRAIN_DELAY_MS: '1000', SHUTDOWN_TIMEOUT_MS: '3000' }

t.test('behind HAProxy, a rolling restart of both replicas under keep-alive load fails no request', async (t) => {
  const [balancerPort, ...replicaPorts] = await Promise.all([freePort(), freePort(), freePort()])
  const replica = (port: number) => start(t, { ...REPLICA_ENV, PORT: String(port) })
  const replicas: Service[] = await Promise.all(replicaPorts.map(replica))
  const balancer = spawn('haproxy', ['-db', '-f', CONFIG], {
    env: { ...process.env, HAPROXY_PORT: String(balancerPort), REPLICA1_PORT: String(replicaPorts[0]), REPLICA2_PORT: String(replicaPorts[1]) },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  t.teardown(async () => {
    balancer.kill('SIGTERM')
    await once(balancer, 'exit')
  })
  await until('HAProxy to answer', async () => (await fetch(balancerPort!, '/api/status/').catch(() => ({ status: 0 }))).status === 200)

  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  t.teardown(() => agent.destroy())
  const failures: string[] = []
  let answered = 0
  // Read by the clients between requests; an object, so that the linter sees it can change.
  const load = { running: true }
  const paths = ['/api/status/', '/api/extras/object-types/?limit=10', '/api/extras/object-types/7/']
  const client = async (offset: number) => {
    for (let i = offset; load.running; i++) {
      const path = paths[i % paths.length]!
      const reply = await fetch(balancerPort!, path, { agent }).catch((error: Error) => ({ status: 0, body: error.message }))
      if (reply.status === 200) answered++
      else failures.push(`${path}: ${reply.status} ${reply.body}`)
    }
  }
  const clients = Array.from({ length: 16 }, (_, i) => client(i))

  for (const [index, port] of replicaPorts.entries()) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const before = answered
    replicas[index]!.child.kill('SIGTERM')
    const { code } = await replicas[index]!.exited
    t.equal(code, 0, `replica ${index + 1} drained and exited 0`)
    t.ok(answered > before, `${answered - before} answers while it drained`)
    replicas[index] = await replica(port!)
    // Back in rotation once HAProxy's check (every 250 ms) has seen it ready: a generous margin,
    // since the other replica is stopped next.
    await new Promise((resolve) => setTimeout(resolve, 1500))
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  load.running = false
  await Promise.all(clients)
  t.same(failures, [], 'no request failed')
  t.ok(answered > 1000, `${answered} requests answered`)
})
