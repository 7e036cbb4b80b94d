import t, { type Test } from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { Agent } from 'node:http'
import { connect } from 'node:net'
import { fetch, freePort } from '../helpers/http.ts'
import { start, type Service } from '../helpers/process.ts'
import { until } from '../helpers/wait.ts'
import { needs } from '../helpers/programs.ts'

// A real HAProxy (Debian's package; .ci/run installs it) with deploy/haproxy/haproxy.cfg in front
// of two replicas of the service: a rolling restart under keep-alive load drops nothing.
const skip = needs('haproxy')
const CONFIG = new URL('../../deploy/haproxy/haproxy.cfg', import.meta.url).pathname
/** Short, so that the test is: out of rotation within the drain delay, then a second to finish. */
const REPLICA_ENV = { DRAIN_DELAY_MS: '1000', SHUTDOWN_TIMEOUT_MS: '30000' }

/**
 * HAProxy with the example's configuration in front of these two replica ports, stopped when the
 * test ends: its port, and what it has said (a server's change of state, on stderr).
 */
async function balance (t: Test, replicaPorts: readonly number[]): Promise<{ port: number, said: () => string }> {
  const balancerPort = await freePort()
  const balancer = spawn('haproxy', ['-db', '-f', CONFIG], {
    env: { ...process.env, HAPROXY_PORT: String(balancerPort), REPLICA1_PORT: String(replicaPorts[0]), REPLICA2_PORT: String(replicaPorts[1]) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let said = ''
  balancer.stderr.on('data', (chunk) => { said += chunk })
  t.teardown(async () => {
    balancer.kill('SIGTERM')
    await once(balancer, 'exit')
  })
  await until('HAProxy to answer', async () => (await fetch(balancerPort, '/api/status/').catch(() => ({ status: 0 }))).status === 200)
  return { port: balancerPort, said: () => said }
}

t.test('the example is valid as shipped, with none of its variables set', { skip }, async (t) => {
  const checked = spawnSync('haproxy', ['-c', '-f', CONFIG], { env: { PATH: process.env.PATH }, encoding: 'utf8' })
  t.same([checked.status, checked.stdout.trim()], [0, 'Configuration file is valid'], checked.stderr)
})

t.test('behind HAProxy, a rolling restart of both replicas under keep-alive load fails no request', { skip }, async (t) => {
  const replicaPorts = await Promise.all([freePort(), freePort()])
  const replica = (port: number) => start(t, { ...REPLICA_ENV, PORT: String(port) })
  const replicas: Service[] = await Promise.all(replicaPorts.map(replica))
  const { port: balancerPort, said } = await balance(t, replicaPorts)

  const agent = new Agent({ keepAlive: true, maxSockets: 16 })
  t.teardown(() => agent.destroy())
  const failures: string[] = []
  let sent = 0
  let answered = 0
  // Read by the clients between requests; an object, so that the linter sees it can change.
  const load = { running: true }
  const paths = ['/api/status/', '/api/extras/object-types/?limit=10', '/api/extras/object-types/7/']
  const client = async (offset: number) => {
    for (let i = offset; load.running; i++) {
      const path = paths[i % paths.length]!
      sent++
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
    // Back in rotation once HAProxy's check has seen it ready, before the other replica is stopped.
    await until(`HAProxy to see replica ${index + 1} up`, () => said().includes(`Server replicas/replica${index + 1} is UP`))
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  load.running = false
  await Promise.all(clients)
  t.same(failures, [], 'no request failed')
  t.ok(sent > 0 && answered === sent, `every request answered: ${answered} of ${sent}`)
})

// What attackers sent that once put a second answer on a connection, which HAProxy then gave to
// another client's request.
const CHUNKED = 'GET /api/status/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n'
const ATTACKS = [
  `${CHUNKED}0\r\nContent-Length: 5\r\n\r\n`,
  `${CHUNKED}0\r\nX-Trailer: a\x01b\r\n\r\n`,
  `${CHUNKED}zz\r\nhello\r\n0\r\n\r\n`,
  'GET /api/status/ HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGARBAGE\r\n\r\n',
  'GET /api/status/ HTTP/1.0\r\n\r\nGET /api/status/ HTTP/1.1\r\nHost: a\r\n\r\n',
]

/** One attack on a connection of its own: written, then read until the balancer closes it (or 50 ms pass). */
function attack (port: number, bytes: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes, 'latin1'))
    const timer = setTimeout(() => socket.destroy(), 50)
    socket.on('data', () => {})
    socket.on('close', () => { clearTimeout(timer); resolve() })
    socket.on('error', () => {})
  })
}

t.test('behind HAProxy, attackers beside honest clients: every honest client gets its own answer', { skip }, async (t) => {
  const replica = await start(t)
  const { port: balancerPort } = await balance(t, [replica.port, replica.port])
  const agent = new Agent({ keepAlive: true, maxSockets: 8 })
  t.teardown(() => agent.destroy())
  const load = { running: true }
  const wrong: string[] = []
  let answered = 0
  // Each honest request names itself in its query, which its answer's links carry back.
  const honest = async (client: number) => {
    for (let i = 0; load.running; i++) {
      const mark = `${client}-${i}`
      const reply = await fetch(balancerPort, `/api/extras/object-types/?limit=1&client=${mark}`, { agent }).catch((error: Error) => ({ status: 0, body: error.message }))
      if (reply.status === 200 && JSON.parse(reply.body).next === `http://127.0.0.1:${balancerPort}/api/extras/object-types/?client=${mark}&limit=1&offset=1`) answered++
      else wrong.push(`${mark}: ${reply.status} ${reply.body.slice(0, 120)}`)
    }
  }
  // Sixteen attackers, each sending one kind of attack over and over, until every kind was sent 150 times.
  const sent = ATTACKS.map(() => 0)
  const attacker = async (kind: number) => {
    while (load.running) {
      await attack(balancerPort, ATTACKS[kind]!)
      sent[kind]!++
    }
  }
  const clients = [...Array.from({ length: 8 }, (_, i) => honest(i)), ...Array.from({ length: 16 }, (_, i) => attacker(i % ATTACKS.length))]
  await until('a thousand honest answers beside 150 attacks of each kind', () => (answered >= 1000 && Math.min(...sent) >= 150) || wrong.length > 0)
  load.running = false
  await Promise.all(clients)
  t.same(wrong, [], 'no honest client got an answer that was not its own')
  t.pass(`${answered} honest answers beside attacks of each kind: ${sent.join(', ')}`)

  const proxyStyle = await new Promise<string>((resolve) => {
    let text = ''
    const target = `http://127.0.0.1:${balancerPort}/api/extras/object-types/?limit=2`
    const socket = connect(balancerPort, '127.0.0.1', () => socket.end(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${balancerPort}\r\nConnection: close\r\n\r\n`))
    socket.on('data', (chunk) => { text += chunk })
    socket.on('close', () => resolve(text))
  })
  t.match(proxyStyle, `"next":"http://127.0.0.1:${balancerPort}/api/extras/object-types/?limit=2&offset=2"`, 'a proxy-style request through HAProxy: links to one host')
})
