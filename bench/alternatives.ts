/**
 * What each start-up, memory and connection choice is worth, side by side with the simpler
 * alternative in one run. Prints figures; asserts nothing.
 *
 *   npm run bench:alternatives [-- --starts 7 --node <binary>]
 *
 * 1. A bare node:http server answering a constant (the floor), the shipped bundle with and
 *    without the image's Node flags, the same source run unbundled (Node strips its types), and
 *    bundles that make another choice: Fastify's default schema compilers (ajv and
 *    fast-json-stringify; lib/schema-controller.ts gives it compilers that build nothing),
 *    @fastify/swagger registered at start (lib/openapi.ts loads it when the document is
 *    first asked for), node:https and node:http2 loaded with Fastify's server module (lib/deferred/ stands in):
 *    start-up to the first 200 and RSS idle after the first answers, starts alternating,
 *    medians, each beside the bare server's.
 * 2. The listening sockets (lib/front/listen.ts): the service as shipped, with 32 per address,
 *    and built with 8 and with 1. 200 keep-alive connections keep it busy with pipelined requests;
 *    then 300 new connections each ask once: how long until the last is answered.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { IMAGE_NODE_FLAGS } from './image.ts'
import { BARE_SERVER, median, startServer, startsAndIdle, stopServer } from './load.ts'

const { values: options } = parseArgs({
  options: {
    starts: { type: 'string', default: '7' },
    node: { type: 'string', default: process.execPath },
  },
})
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PORT = 18083
const work = mkdtempSync(join(tmpdir(), 'alternatives-'))
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

/**
 * A copy of the source with `edit` applied to the files it names (the bundle's script,
 * `.ci/bundle.mjs`, among them), bundled as `npm run bundle` bundles it.
 */
function variant (name: string, edit: Record<string, (text: string) => string>): string {
  const folder = join(work, name)
  for (const part of ['lib', 'schemas', 'data', '.ci/bundle.mjs', 'package.json']) cpSync(join(ROOT, part), join(folder, part), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'))
  for (const [file, change] of Object.entries(edit)) {
    const path = join(folder, file)
    const before = readFileSync(path, 'utf8')
    const after = change(before)
    if (after === before) throw new Error(`${name}: the edit of ${file} changed nothing (has the source moved on?)`)
    writeFileSync(path, after)
  }
  execFileSync('npm', ['run', '--silent', 'bundle'], { cwd: folder, stdio: 'inherit' })
  return join(folder, 'dist/service/main.js')
}

const withAcceptors = (count: number) => variant(`acceptors-${count}`, {
  'lib/front/listen.ts': (text) => text.replace(/^export const ACCEPTORS = \d+$/m, `export const ACCEPTORS = ${count}`),
})

/** Start-up and idle RSS of each build, starts alternating, medians, each beside the first's. */
async function startAndIdle (builds: Record<string, string[]>): Promise<void> {
  const figures = await startsAndIdle(options.node, PORT, builds, Number(options.starts))
  console.log(`\n${options.starts} starts of each, alternating, medians (range); beside each, its median over the first's`)
  console.log('build                                          start-up to first 200              RSS idle after the first answers')
  const range = (values: number[], digits: number) => `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`
  const [first] = Object.values(figures)
  const over = (values: number[], base: number[], digits: number) => `${median(values) - median(base) >= 0 ? '+' : ''}${(median(values) - median(base)).toFixed(digits)}`
  for (const [name, { startup, idle }] of Object.entries(figures)) {
    console.log(`${name.padEnd(47)}${`${range(startup, 0)} ms ${over(startup, first!.startup, 0)}`.padEnd(35)}${range(idle, 1)} MiB ${over(idle, first!.idle, 1)}`)
  }
}

const BUSY = 200
const PIPELINED = 16
const NEW = 300
const REQUEST = 'GET /api/status/ HTTP/1.1\r\nHost: busy.test\r\n\r\n'

/** The length of an answer to REQUEST on a keep-alive connection (fixed: its Date and X-Request-ID are of fixed width). */
function answerLength (): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(PORT, '127.0.0.1', () => socket.write(REQUEST))
    let answer = ''
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1')
      const headerEnd = answer.indexOf('\r\n\r\n')
      const length = /\r\ncontent-length: (\d+)/i.exec(answer)
      if (headerEnd < 0 || length === null || answer.length < headerEnd + 4 + Number(length[1])) return
      socket.destroy()
      resolve(answer.length)
    })
    socket.on('error', reject)
  })
}

/** Milliseconds until the last of NEW new connections is answered, while BUSY keep-alive ones keep the server busy. */
async function newConnectionsUnderLoad (): Promise<{ lastMs: number, unanswered: number }> {
  const length = await answerLength()
  let busy = true
  const keepBusy = () => new Promise<void>((resolve) => {
    const socket: Socket = connect(PORT, '127.0.0.1', () => socket.write(REQUEST.repeat(PIPELINED)))
    let pending = PIPELINED * length
    socket.on('data', (chunk: Buffer) => {
      pending -= chunk.length
      if (pending > 0) return
      if (!busy) return socket.end()
      pending = PIPELINED * length
      socket.write(REQUEST.repeat(PIPELINED))
    })
    socket.on('close', () => resolve())
    socket.on('error', () => resolve())
  })
  const clients = Array.from({ length: BUSY }, keepBusy)
  await sleep(1000)
  const started = Date.now()
  const times = await Promise.all(Array.from({ length: NEW }, () => new Promise<number>((resolve) => {
    const socket = connect(PORT, '127.0.0.1', () => socket.write('GET /readyz HTTP/1.1\r\nHost: probe.test\r\nConnection: close\r\n\r\n'))
    socket.setTimeout(10_000, () => socket.destroy())
    let answer = ''
    socket.on('data', (chunk) => { answer += chunk })
    socket.on('close', () => resolve(answer.endsWith('{"status":"ready"}') ? Date.now() - started : Infinity))
    socket.on('error', () => {})
  })))
  busy = false
  await Promise.all(clients)
  const answered = times.filter(Number.isFinite)
  return { lastMs: Math.max(...answered), unanswered: NEW - answered.length }
}

async function listening (builds: Record<string, string>): Promise<void> {
  console.log(`\n${BUSY} keep-alive connections with ${PIPELINED} pipelined requests each, then ${NEW} new connections`)
  console.log('listening sockets      last new connection answered after (3 rounds)')
  const results: Record<string, string[]> = Object.fromEntries(Object.keys(builds).map((name) => [name, []]))
  for (let round = 0; round < 3; round++) {
    for (const [name, main] of Object.entries(builds)) {
      const service = await startServer(options.node, PORT, [...IMAGE_NODE_FLAGS, main])
      const { lastMs, unanswered } = await newConnectionsUnderLoad()
      results[name]!.push(unanswered > 0 ? `${unanswered} unanswered in 10 s` : `${lastMs} ms`)
      await stopServer(service)
    }
  }
  for (const [name, figures] of Object.entries(results)) console.log(`${name.padEnd(23)}${figures.join(', ')}`)
}

const shipped = join(ROOT, 'dist/service/main.js')
console.log(`node ${execFileSync(options.node, ['--version']).toString().trim()} ${IMAGE_NODE_FLAGS.join(' ')}; building the alternatives…`)
const defaultCompilers = variant('default-compilers', {
  'lib/service.ts': (text) => text.replace('    schemaController: SCHEMA_CONTROLLER,\n', ''),
  '.ci/bundle.mjs': (script) => script.replace("'@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', ", ''),
})
/** A plugin registered before the others, as lib/app.ts would register it. */
const withPlugin = (name: string, module: string, options = '{}') => variant(name, {
  'lib/app.ts': (text) => `import plugin from '${module}'\n` + text.replace('  app.register(sensible)\n', `  app.register(plugin, ${options})\n  app.register(sensible)\n`),
})
const eagerSwagger = withPlugin('eager-swagger', '@fastify/swagger', "{ openapi: { openapi: '3.0.3', info: { title: 'x', version: '1' } } }")
const eagerHttps = variant('eager-https', {
  '.ci/bundle.mjs': (script) => script.replace(/^ {4}'node:https?2?': '[^']+',\n/gm, ''),
})
const acceptors = { '32 (shipped)': shipped, 8: withAcceptors(8), 1: withAcceptors(1) }
/** The floor: a bare node:http server that answers every request with a constant. */
await startAndIdle({
  'bare node:http, a constant, no flags': BARE_SERVER,
  'bare node:http, a constant, the image\'s flags': [...IMAGE_NODE_FLAGS, ...BARE_SERVER],
  'the bundle (shipped, the image\'s flags)': [...IMAGE_NODE_FLAGS, shipped],
  'the bundle, no flags': [shipped],
  'the source, unbundled': [...IMAGE_NODE_FLAGS, '--experimental-strip-types', '--disable-warning=ExperimentalWarning', 'lib/process/main.ts'],
  'a bundle with Fastify\'s default compilers': [...IMAGE_NODE_FLAGS, defaultCompilers],
  'a bundle with @fastify/swagger at start': [...IMAGE_NODE_FLAGS, eagerSwagger],
  'a bundle loading node:https and node:http2': [...IMAGE_NODE_FLAGS, eagerHttps],
})
await listening(acceptors)
