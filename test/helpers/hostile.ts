import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { SUITE_BUNDLE } from './bundle.ts'
import { fetch } from './http.ts'
import { start, type RunOptions, type Service } from './process.ts'
import { DEADLINE_MS, until } from './wait.ts'

// What the tests of clients that mean harm share: the service as a process with the heap limit of
// the Kubernetes deployment, raw conversations with it, and what must hold after each case: every
// answer JSON and no 5xx, a close where one is due, the process alive and its memory near idle.

/** The Kubernetes deployment's Node settings: the smallest heap the project ships. */
export const DEPLOYMENT = { NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=4', MALLOC_ARENA_MAX: '2' }

export interface Answer { status: number, headers: Record<string, string>, body: string }
export interface Conversation { answers: Answer[], closed: boolean, received: string }

/** Every complete final answer in what a connection received; `heads` says which requests were HEAD (their answers have no body). */
export function answersIn (received: Buffer, heads: readonly boolean[] = []): Answer[] {
  const answers: Answer[] = []
  let rest = received
  for (;;) {
    const headerEnd = rest.indexOf('\r\n\r\n')
    if (headerEnd === -1) return answers
    const [statusLine = '', ...lines] = rest.subarray(0, headerEnd).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
    }
    const status = Number(statusLine.split(' ')[1])
    const length = heads[answers.length] === true && status >= 200 ? 0 : Number(headers['content-length'] ?? 0)
    if (rest.length < headerEnd + 4 + length) return answers
    // An interim answer (100 Continue to an Expect) is no answer of its own.
    if (status >= 200) answers.push({ status, headers, body: rest.subarray(headerEnd + 4, headerEnd + 4 + length).toString() })
    rest = rest.subarray(headerEnd + 4 + length)
  }
}

/**
 * Writes the bytes, half-closes unless `keepOpen`, and collects what comes back until the
 * server closes, or for `keepOpen` ms when it does not.
 */
export function converse (port: number, bytes: string | Buffer, { keepOpen }: { keepOpen?: number } = {}): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', () => keepOpen === undefined ? socket.end(bytes) : socket.write(bytes))
    const done = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      const received = Buffer.concat(chunks)
      resolve({ answers: answersIn(received), closed, received: received.toString('latin1') })
    }
    const timer = setTimeout(() => keepOpen === undefined ? reject(new Error(`no close in ${DEADLINE_MS} ms`)) : done(false), keepOpen ?? DEADLINE_MS)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('close', () => done(true))
    // A reset is a close too.
    socket.on('error', () => {})
  })
}

/** What holds for every answer: JSON, never a 5xx. */
export function wellFormed (answer: Answer): string | undefined {
  if (answer.status >= 500) return `a ${answer.status}`
  if (answer.headers['content-type'] !== 'application/json') return `${answer.status} with Content-Type ${answer.headers['content-type']}`
  try {
    JSON.parse(answer.body)
  } catch {
    return `${answer.status} with a body that is not JSON: ${JSON.stringify(answer.body.slice(0, 80))}`
  }
  return undefined
}

/** The statuses of a conversation, each answer checked; the connection closed as `closed` says. */
export function assertAnswers (t: Test, { answers, closed }: Omit<Conversation, 'received'>, statuses: number[], shouldClose: boolean, what: string): void {
  t.same(answers.map(wellFormed).filter((problem) => problem !== undefined), [], `${what}: every answer JSON, no 5xx`)
  t.same(answers.map((answer) => answer.status), statuses, `${what}: answered ${statuses.join(', ') || 'nothing'}`)
  t.equal(closed, shouldClose, `${what}: ${shouldClose ? 'closed' : 'kept open'}`)
}

/** The resident memory of a process, in MiB (Linux). */
export function residentMiB (pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
}

export type Replica = Service & { idleMiB: number }

/**
 * How the cases that load a replica with thousands of clients run it: what ships, the suite's
 * bundle. Coverage's counting triples what a request of the source costs; the code the loads take
 * is counted where it is tested, from the source.
 */
export const LOADED: RunOptions = { script: SUITE_BUNDLE }

/** The service with the deployment's settings, warmed up, and its resident memory then. */
export async function replica (t: Test, env: NodeJS.ProcessEnv = {}, options: RunOptions = {}): Promise<Replica> {
  const service = await start(t, { ...DEPLOYMENT, ...env }, options)
  for (let i = 0; i < 50; i++) await fetch(service.port, i % 2 === 0 ? '/api/schema/' : `/api/extras/object-types/?limit=${i}`, { headers: { host: 'inv.example.com' } })
  return { ...service, idleMiB: residentMiB(service.child.pid!) }
}

/** What must hold after every case: the process alive, answering its probe, its memory near where it was idle. */
export async function holds (t: Test, service: Replica, marginMiB = 32): Promise<void> {
  t.same([service.child.exitCode, service.child.signalCode], [null, null], 'the process is alive')
  // A connection the kernel refused while it still tore down the attack's is tried again.
  await until('the probe to answer', async () => (await fetch(service.port, '/healthz').catch(() => ({ status: 0 }))).status === 200)
  t.pass('and answers its probe')
  const now = residentMiB(service.child.pid!)
  t.ok(now - service.idleMiB < marginMiB, `memory near idle: ${service.idleMiB.toFixed(0)} MiB before, ${now.toFixed(0)} MiB after`)
}

export const GET = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: inv.example.com\r\n${extra}\r\n`

/** Open file descriptors of a process (Linux): its sockets among them. */
export function descriptors (pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length
}

/** Open file descriptors of a process and its children (a cluster's workers). */
export function familyDescriptors (pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter((child) => child !== '').map(Number)
  return children.reduce((sum, child) => sum + descriptors(child), descriptors(pid))
}

/** The most resident memory a process has had (Linux's high-water mark), in MiB. */
export function peakMiB (pid: number): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
}

const CROWD = new URL('../fixtures/never-readers.py', import.meta.url).pathname

/**
 * 5,000 connections that each pipeline 20 new pages of 24 KB and never read, against a replica with
 * `env` (SEND_TIMEOUT_MS 5 s): each is answered, the probe answers meanwhile, the send timeout closes
 * them all (the service's own descriptors say so), and the replica holds. A wait is for what the
 * service does, bounded only by a deadline far beyond the slowest run seen. The clients are
 * test/fixtures/never-readers.py's, whose small receive buffers keep the crowd's kernel memory
 * within what the machine's other sockets can live beside.
 */
export async function neverReadingCrowd (t: Test, env: NodeJS.ProcessEnv): Promise<void> {
  const what = env.WORKERS === undefined ? 'one process' : `WORKERS=${env.WORKERS}`
  const service = await replica(t, { SEND_TIMEOUT_MS: '5000', ...env }, LOADED)
  const idleDescriptors = familyDescriptors(service.child.pid!)
  const crowd = spawn('python3', [CROWD, String(service.port), '5000', '20'], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { crowd.kill('SIGKILL') })
  let printed = ''
  crowd.stdout.on('data', (chunk) => { printed += chunk })
  crowd.stderr.on('data', (chunk) => { printed += chunk })
  await until(`${what}: an answer on each of the 5,000 connections`, () => {
    if (crowd.exitCode !== null) throw new Error(`the crowd exited: ${printed}`)
    return printed.includes('\n')
  })
  const { answered } = JSON.parse(printed) as { answered: number, closed: number }
  t.equal((await fetch(service.port, '/healthz')).status, 200, `${what}: the probe answers while all 5,000 wait`)
  t.equal(answered, 5000, `${what}: each was answered`)
  // A client that reads nothing sees no close either: the service's descriptors say it closed them.
  await until(`${what}: the service to close the 5,000 connections`, () => familyDescriptors(service.child.pid!) <= idleDescriptors + 5)
  t.pass(`${what}: the send timeout closed them all`)
  t.same([service.child.exitCode, service.child.signalCode], [null, null], `${what}: the process is alive`)
  t.equal((await fetch(service.port, '/healthz')).status, 200, `${what}: and answers its probe`)
  // Not its resident memory: what the allocator keeps of the answers the kernel's buffers did not take
  // depends on how many that was (93 to 224 MiB more seen, alone and beside the rest of the suite).
  service.child.kill('SIGTERM')
}
