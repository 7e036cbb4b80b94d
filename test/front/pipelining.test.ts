import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { setImmediate as turn } from 'node:timers/promises'
import { MAX_WAITING_ANSWERS_IN_PROCESS, MAX_WAITING_BYTES_IN_PROCESS, waitingInThisProcess } from '../../lib/front/pipelining.ts'
import { build } from '../helpers/build.ts'
import { needs } from '../helpers/programs.ts'
import { until } from '../helpers/wait.ts'

const CROWD = new URL('../fixtures/never-readers.py', import.meta.url).pathname

// The process-wide bound on waiting answers, read from inside the service's own process: what it
// counts, at every turn of the event loop, while clients pipeline and never read, and once they leave.

/** A page of every object type, new to the service each time (its own `n`): some 24 KB to write. */
const newPage = (tag: string) => `GET /api/extras/object-types/?limit=1000&n=${tag} HTTP/1.1\r\nHost: inv.example.com\r\n\r\n`

/**
 * Connections that each write `depth` requests for new pages at once and never read, with small
 * receive buffers (test/fixtures/never-readers.py): the kernel takes little of their answers, so
 * what waits is the service's. Resolves once each has its first bytes (the service read its
 * requests); killed when the test ends, which closes them all.
 */
async function hogs (t: Test, port: number, count: number, depth: number): Promise<ChildProcess> {
  const crowd = spawn('python3', [CROWD, String(port), String(count), String(depth)], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { crowd.kill('SIGKILL') })
  let printed = ''
  crowd.stdout.on('data', (chunk) => { printed += chunk })
  crowd.stderr.on('data', (chunk) => { printed += chunk })
  await until(`each of the ${count} connections to have an answer`, () => {
    if (crowd.exitCode !== null) throw new Error(`the crowd exited: ${printed}`)
    return printed.includes('\n')
  })
  t.same(JSON.parse(printed), { answered: count, closed: 0 }, `each of the ${count} connections answered`)
  return crowd
}

/** What the process counts as waiting, at its most, while `until` waits (sampled at every turn of the event loop). */
function sampled () {
  const most = { answers: 0, bytes: 0 }
  let next: NodeJS.Immediate
  const sample = () => {
    const { answers, bytes } = waitingInThisProcess()
    most.answers = Math.max(most.answers, answers)
    most.bytes = Math.max(most.bytes, bytes)
    next = setImmediate(sample)
  }
  sample()
  return { most, stop: () => clearImmediate(next) }
}

t.test('never-reading connections hold no more waiting answers, nor bytes of them, than the process lets wait', { skip: needs('python3') }, async (t) => {
  const { port } = await build(t, { listen: true })
  // Each writes more than the kernel's buffers take of its answers (a paused client's, and the service's
  // send buffer) in one read of the service's; once the bytes let wait are reached, the answer of
  // each further connection's next request would wait: the bound stops that request being read.
  const { most, stop } = sampled()
  const crowd = await hogs(t, port, 120, 600)
  // As their answers fill the kernel's buffers, the service reads on until the bytes let wait are reached; then a while more to look at.
  await until('the bytes let wait to be reached', () => most.bytes >= MAX_WAITING_BYTES_IN_PROCESS)
  for (let i = 0; i < 500; i++) await turn()
  stop()
  t.ok(most.answers <= MAX_WAITING_ANSWERS_IN_PROCESS, `at most ${most.answers} answers waited (the bound: ${MAX_WAITING_ANSWERS_IN_PROCESS})`)
  // The answer that reaches the bound is counted once it is written: one page more, at most.
  t.ok(most.bytes <= MAX_WAITING_BYTES_IN_PROCESS + 32 * 1024, `at most ${(most.bytes / 2 ** 20).toFixed(2)} MiB waited (the bound: ${MAX_WAITING_BYTES_IN_PROCESS / 2 ** 20} MiB and one page)`)
  t.ok(most.bytes >= MAX_WAITING_BYTES_IN_PROCESS, 'and the bound was reached')
  crowd.kill('SIGKILL')
  await until('their waiting answers to be released', () => waitingInThisProcess().answers === 0 && waitingInThisProcess().bytes === 0)
  t.pass('once they leave, nothing waits')
})

t.test('no waiting answer is counted after its connection closes: reset or ended, answered at once or after a delay', async (t) => {
  const faults = join(t.testdir(), 'faults.json')
  writeFileSync(faults, JSON.stringify({ rules: [{ path: '/api/extras/object-types/', query: { delayed: '1' }, delay: { ms: 20 } }] }))
  const { port } = await build(t, { listen: true, env: { FAULTS: faults } })
  for (const leave of ['reset', 'end'] as const) {
    for (const delayed of [false, true]) {
      // 400 connections of 40 requests, each left as soon as its first answer comes, while the rest wait.
      const closed = await Promise.all(Array.from({ length: 400 }, (_, c) => new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1')
        socket.write(Array.from({ length: 40 }, (_, i) => newPage(`${leave}-${delayed}-${c}-${i}${delayed ? '&delayed=1' : ''}`)).join(''))
        socket.once('data', () => leave === 'reset' ? socket.resetAndDestroy() : socket.end())
        socket.on('error', () => {})
        socket.on('close', () => resolve())
      })))
      t.equal(closed.length, 400)
      await until(`the waiting answers of 400 connections that left (${leave}, ${delayed ? 'delayed' : 'at once'}) to be released`,
        () => waitingInThisProcess().answers === 0 && waitingInThisProcess().bytes === 0)
      t.pass(`${leave}, answers ${delayed ? 'written after a delay' : 'written at once'}: nothing counted once they closed`)
    }
  }
})
