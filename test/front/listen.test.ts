import t from 'tap'
import { once } from 'node:events'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ACCEPTORS } from '../../lib/front/listen.ts'
import { fetch, raw } from '../helpers/http.ts'
import { logged, run, start, workerPids } from '../helpers/process.ts'
import { until } from '../helpers/wait.ts'

/** The listening sockets on this TCP port, by inode, from the kernel's own tables. */
function listeningSockets (port: number): string[] {
  const local = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  const LISTEN = '0A'
  return ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((table) => readFileSync(table, 'utf8').trim().split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1]!.endsWith(local) && fields[3] === LISTEN)
    .map((fields) => fields[9]!)
}

/** How many of these sockets the process has open. */
function heldBy (pid: number, sockets: string[]): number {
  const fds = `/proc/${pid}/fd`
  const target = (fd: string) => {
    try {
      return readlinkSync(join(fds, fd))
    } catch {
      return '' // closed since the listing
    }
  }
  return readdirSync(fds).filter((fd) => sockets.includes(/^socket:\[(\d+)\]$/.exec(target(fd))?.[1] ?? '')).length
}

/** The environment that preloads this fixture into the service. */
function preloading (fixture: string): NodeJS.ProcessEnv {
  const preload = `--import=${new URL(`../fixtures/${fixture}`, import.meta.url).pathname}`
  return { NODE_OPTIONS: preload }
}

const connectionRefused = (port: number) => new Promise<string | undefined>((resolve) => {
  const socket = connect(port, '127.0.0.1', () => {
    socket.destroy()
    resolve(undefined)
  })
  socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code))
})

/** The length in bytes of the answer to a request sent on a new keep-alive connection. */
async function firstAnswerLength (port: number, request: string): Promise<number> {
  const socket = connect(port, '127.0.0.1', () => socket.write(request))
  socket.setTimeout(60_000, () => socket.destroy(new Error('no whole answer in 60 s')))
  let answer = Buffer.alloc(0)
  for await (const chunk of socket) {
    answer = Buffer.concat([answer, chunk])
    const headerEnd = answer.indexOf('\r\n\r\n')
    const length = /\r\ncontent-length: (\d+)\r\n/i.exec(answer.toString('latin1'))
    if (headerEnd >= 0 && length !== null && answer.length >= headerEnd + 4 + Number(length[1])) break
  }
  socket.destroy()
  return answer.length
}

t.test(`the service listens with ${ACCEPTORS} sockets on its port, and all stop accepting when it closes`, async (t) => {
  const server = await start(t, { SHUTDOWN_TIMEOUT_MS: '5000' })
  // Fastify says it listens once the first is bound.
  await until(`${ACCEPTORS} listening sockets`, () => listeningSockets(server.port).length === ACCEPTORS)
  // Half a request keeps the process open after its listeners close.
  const late = connect(server.port, '127.0.0.1')
  await once(late, 'connect')
  late.write('GET /api/status/ HTTP/1.1\r\nHost: a.test\r\n')
  let answer = ''
  late.on('data', (chunk) => { answer += chunk })
  server.child.kill('SIGTERM')
  await logged(server, '"msg":"closing"')
  await until('every listening socket to close', () => listeningSockets(server.port).length === 0)
  t.equal(await connectionRefused(server.port), 'ECONNREFUSED', 'a new connection is refused')
  late.write('\r\n')
  const { code } = await server.exited
  t.equal(code, 0)
  t.match(answer, /^HTTP\/1\.1 200 OK\r\n/)
  t.match(answer, /\r\nconnection: close\r\n/i, 'the open connection still got its answer')
})

t.test(`WORKERS=2: each worker listens with its own ${ACCEPTORS} sockets on the one port, the primary with none`, async (t) => {
  const server = await start(t, { WORKERS: '2' })
  const workers = await workerPids(server, 2)
  await until(`${2 * ACCEPTORS} listening sockets`, () => listeningSockets(server.port).length === 2 * ACCEPTORS)
  const sockets = listeningSockets(server.port)
  t.same(workers.map((pid) => heldBy(pid, sockets)), [ACCEPTORS, ACCEPTORS], 'each worker its own')
  t.equal(heldBy(server.child.pid!, sockets), 0, 'the primary none: it hands no connection over')
})

t.test('elsewhere than on Linux: one listening socket, and with WORKERS=2 the primary\'s hands connections over', async (t) => {
  const elsewhere = preloading('elsewhere-than-linux.mjs')
  const single = await start(t, elsewhere)
  t.equal(listeningSockets(single.port).length, 1)
  t.match(await raw(single.port, 'GET /readyz HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n'), /\r\n\r\n\{"status":"ready"\}$/)

  const cluster = await start(t, { ...elsewhere, WORKERS: '2' })
  const workers = await workerPids(cluster, 2)
  const sockets = listeningSockets(cluster.port)
  t.equal(sockets.length, 1)
  t.equal(heldBy(cluster.child.pid!, sockets), 1, 'the primary\'s')
  t.same(workers.map((pid) => heldBy(pid, sockets)), [0, 0])
  t.match(await raw(cluster.port, 'GET /readyz HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n'), /\r\n\r\n\{"status":"ready"\}$/)
})

t.test('a port already taken stops start-up with EADDRINUSE, also when another copy of the service has it', async (t) => {
  const first = await start(t)
  const stopped = async (env: NodeJS.ProcessEnv) => {
    const service = run(env)
    t.teardown(() => { service.child.kill('SIGKILL') })
    await until('the service to stop', () => service.child.exitCode !== null)
    return service.exited
  }
  const { code, output } = await stopped({ PORT: String(first.port) })
  t.equal(code, 1)
  t.equal(output.split('\n').at(-2), `PORT=${first.port} HOST=127.0.0.1: 127.0.0.1:${first.port} is already in use; set PORT to a free port, or stop what listens there`, 'the last line, plain: the settings and the address')
  t.equal(listeningSockets(first.port).length, ACCEPTORS, 'the first keeps its sockets')

  const other = createServer().listen(0, '127.0.0.1')
  t.teardown(() => { other.close() })
  await once(other, 'listening')
  const taken = (other.address() as AddressInfo).port
  const third = await stopped({ PORT: String(taken) })
  t.equal(third.code, 1)
  t.match(third.output, `PORT=${taken} HOST=127.0.0.1: 127.0.0.1:${taken} is already in use; set PORT to a free port, or stop what listens there\n`)
})

// How long the last of the new connections may wait, counted in the busy clients' batches answered
// meanwhile (each busy client's turns), not in milliseconds: both slow down alike on a slower or
// busier machine. Measured on this 2-core machine, on a day when it ran 2.5 times slower than usual
// (the last of 300 took 1.1-4.9 s), in each mode: 12-35 batches. Through one socket, 258 of the
// 300 got no answer in 10 s, while the busy clients had 85 batches answered. Before, the limit was 2 s, and such a day's 2.3 s failed CI.
const BATCHES_AT_MOST = 80
const modes = [
  ['one process', {}],
  ['WORKERS=2', { WORKERS: '2' }],
] as const
for (const [how, env] of modes) {
  t.test(`${how}: while keep-alive connections keep the server busy, new connections are let in at once`, async (t) => {
    const { port } = await start(t, env)
    const REQUEST = 'GET /api/status/ HTTP/1.1\r\nHost: busy.test\r\n\r\n'
    // Every answer to it has the same length: its Date and X-Request-ID are of fixed width.
    const answerLength = await firstAnswerLength(port, REQUEST)
    const BUSY = 200
    const PIPELINED = 16
    const batch = REQUEST.repeat(PIPELINED)
    let busy = true
    let answered = 0
    /** One busy client: a batch of pipelined requests, the next as soon as all are answered. */
    const keepBusy = () => new Promise<void>((resolve, reject) => {
      const socket: Socket = connect(port, '127.0.0.1', () => socket.write(batch))
      socket.setTimeout(60_000, () => socket.destroy(new Error('a batch unanswered for 60 s')))
      let pending = PIPELINED * answerLength
      socket.on('data', (chunk: Buffer) => {
        pending -= chunk.length
        if (pending > 0) return
        if (pending < 0) return reject(new Error(`answers of an unexpected length (${-pending} bytes over)`))
        answered += PIPELINED
        if (!busy) return socket.end()
        pending = PIPELINED * answerLength
        socket.write(batch)
      })
      socket.on('close', () => resolve())
      socket.on('error', reject)
    })
    const clients = Array.from({ length: BUSY }, keepBusy)
    await until('the busy clients to be answered', () => answered >= BUSY * PIPELINED * 4)

    const NEW = 300
    const answeredBefore = answered
    const started = Date.now()
    const times = await Promise.all(Array.from({ length: NEW }, async () => {
      try {
        const answer = await raw(port, 'GET /readyz HTTP/1.1\r\nHost: probe.test\r\nConnection: close\r\n\r\n')
        return answer.endsWith('\r\n\r\n{"status":"ready"}') ? Date.now() - started : Infinity
      } catch {
        return Infinity // no answer within raw's deadline
      }
    }))
    const answeredMeanwhile = answered - answeredBefore
    busy = false
    await Promise.all(clients)
    const unanswered = times.filter((time) => time === Infinity).length
    const batches = answeredMeanwhile / (BUSY * PIPELINED)
    // The busy clients kept a batch in flight all along: the new connections waited behind them.
    t.ok(answeredMeanwhile >= BUSY * PIPELINED / 4, `the server stayed busy: ${answeredMeanwhile} answers on the busy connections meanwhile`)
    t.equal(unanswered, 0, 'every new connection answered')
    t.ok(batches <= BATCHES_AT_MOST, `${NEW} new connections answered within ${Math.max(...times)} ms, ${batches.toFixed(1)} batches of each busy client`)
  })
}

t.test('out of file descriptors: one warning with the limit, the connections it has still served, then new ones again', async (t) => {
  const server = await start(t, {}, { maxFiles: 200 })
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  const statuses = async () => (await Promise.all(Array.from({ length: 20 }, () => fetch(server.port, '/api/status/', { agent })))).map((reply) => reply.status)
  t.same(await statuses(), Array(20).fill(200), '20 keep-alive connections')
  const flood = Array.from({ length: 600 }, () => connect(server.port, '127.0.0.1').on('error', () => {}))
  t.teardown(() => { for (const socket of flood) socket.destroy() })
  const warning = '"limit":"200","code":"EMFILE","msg":"out of file descriptors: all 200 this process may open are in use (ulimit -n); ' +
    'new connections are closed unanswered until some close. Raise the limit, or spread the connections over more processes"'
  await logged(server, warning)
  t.same(await statuses(), Array(20).fill(200), 'the connections it has are still served')
  // Two more checks while still out: no second warning within the minute.
  await sleep(2100)
  t.equal(server.output().split('out of file descriptors').length - 1, 1, 'warned once')
  for (const socket of flood) socket.destroy()
  // Until the service has seen the flood's connections close, a new one is still reset unanswered.
  await until('a new connection to be served', () => fetch(server.port, '/api/status/').then((reply) => reply.status === 200, () => false))
})
