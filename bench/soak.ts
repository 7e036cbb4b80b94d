/**
 * Soak: many keep-alive connections plus connection churn against the built service for a
 * bounded time. Prints totals, p99 and the RSS every few seconds; exits 1 if any request
 * failed (a network error, a timeout or a 5xx) or the RSS kept growing.
 *
 *   npm run soak [-- --seconds 60 --connections 1000 --max-old-space-size 48]
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { createHistogram } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { IMAGE_ENV, IMAGE_NODE_FLAGS } from './image.ts'
import { HOST, rssMiB, SERVICE, waitFor200 } from './load.ts'

const { values: options } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    connections: { type: 'string', default: '1000' },
    /** The service's V8 heap limit in MiB, as in a small container (Node's flag of that name). */
    'max-old-space-size': { type: 'string' },
  },
})
const SECONDS = Number(options.seconds)
const CONNECTIONS = Number(options.connections)
/** Clients that open a new connection for every request, and ones that give up half-way. */
const CHURNING = Math.max(1, Math.round(CONNECTIONS / 50))
const SAMPLE_EVERY_MS = 5000
const PORT = 18083
const WARM_UP_MS = 30_000
/** RSS may rise this much between the first and the last third of the run after warm-up. */
const GROWTH_ALLOWED = 0.1

const LIST = '/api/extras/object-types/'
const random = (n: number) => Math.floor(Math.random() * n)
let sent = 0
/** A mix of what clients send: cached pages, new queries, items, errors, probes. */
const PATHS: Array<() => string> = [
  () => `${LIST}?limit=50&offset=50`,
  // A full page under a query never sent before: rendered, and never cached.
  () => `${LIST}?limit=50&offset=50&n=${sent++}`,
  () => LIST,
  () => '/api/status/',
  () => `${LIST}${random(200)}/`,
  () => `${LIST}?offset=${random(1_000_000)}`,
  () => `${LIST}?q=${random(100)}&limit=${random(20)}`,
  () => `${LIST}?format=xml`,
  () => `${LIST}?id=abc`,
  () => '/readyz',
]

const latency = createHistogram()
const counts = { requests: 0, non2xx: 0, failed: 0, aborted: 0 }
const failures = new Map<string, number>()
const fail = (reason: string) => {
  counts.failed++
  failures.set(reason, (failures.get(reason) ?? 0) + 1)
}

function send (agent: Agent | false): Promise<void> {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint()
    const req = request({ host: '127.0.0.1', port: PORT, path: PATHS[random(PATHS.length)]!(), agent, headers: { host: HOST }, timeout: 10_000 }, (res) => {
      res.resume()
      res.on('end', () => {
        latency.record(Number(process.hrtime.bigint() - started) || 1)
        counts.requests++
        if (res.statusCode! >= 500) fail(`status ${res.statusCode}`)
        else if (res.statusCode! >= 300) counts.non2xx++
        resolve()
      })
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', (error: NodeJS.ErrnoException) => {
      fail(error.code ?? error.message)
      resolve()
    })
    req.end()
  })
}

/** Connects, sends half a request and leaves: the server must shrug it off. */
function abandon (): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(PORT, '127.0.0.1', () => {
      socket.write(`GET ${LIST}?limit=5 HTTP/1.1\r\nHost: ${HOST}\r\nX-Part`)
      setTimeout(() => socket.destroy(), random(50))
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      counts.aborted++
      resolve()
    })
  })
}

async function loop (until: number, step: () => Promise<void>): Promise<void> {
  while (Date.now() < until) await step()
}

async function main (): Promise<void> {
  const heap = options['max-old-space-size']
  const service = spawn(process.execPath, [...(heap === undefined ? [] : [`--max-old-space-size=${heap}`]), ...SERVICE], {
    env: { ...process.env, ...IMAGE_ENV, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DRAIN_DELAY_MS: '0' },
    stdio: 'inherit',
  })
  await waitFor200(service, PORT, '/api/status/')
  console.log(`soak: ${SECONDS} s, ${CONNECTIONS} keep-alive connections, ${CHURNING} clients with a new connection` +
    ` per request and ${CHURNING} that abandon half-sent requests; node ${process.version} ${IMAGE_NODE_FLAGS.join(' ')}` +
    (heap === undefined ? '' : ` --max-old-space-size=${heap}`))

  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  const started = Date.now()
  const until = started + SECONDS * 1000
  const clients = [
    ...Array.from({ length: CONNECTIONS }, () => loop(until, () => send(agent))),
    ...Array.from({ length: CHURNING }, () => loop(until, () => send(false))),
    ...Array.from({ length: CHURNING }, () => loop(until, abandon)),
  ]
  const samples: number[] = []
  let lastRequests = 0
  const sample = () => {
    const rss = rssMiB(service.pid!)
    samples.push(rss)
    const elapsed = Math.round((Date.now() - started) / 1000)
    console.log(`${String(elapsed).padStart(5)} s  ${String(counts.requests).padStart(10)} requests` +
      `  ${String(Math.round((counts.requests - lastRequests) / (SAMPLE_EVERY_MS / 1000))).padStart(6)}/s` +
      `  failed ${counts.failed}  RSS ${rss.toFixed(1)} MiB`)
    lastRequests = counts.requests
  }
  const sampler = setInterval(sample, SAMPLE_EVERY_MS)
  await Promise.all(clients)
  clearInterval(sampler)
  agent.destroy()
  service.kill('SIGTERM')
  const [exitCode] = await once(service, 'exit')

  // Warm-up (JIT, the response cache filling, V8 sizing its heap for 1000 connections) takes
  // about half a minute; after it, the highest RSS late in the run is compared with the
  // highest early on. A run much shorter than two minutes judges memory only loosely.
  const settled = samples.slice(Math.max(Math.floor(samples.length / 4), WARM_UP_MS / SAMPLE_EVERY_MS))
  const third = Math.max(1, Math.floor(settled.length / 3))
  const early = Math.max(...settled.slice(0, third))
  const late = Math.max(...settled.slice(-third))
  const growing = settled.length > 0 && late > early * (1 + GROWTH_ALLOWED)
  console.log(`total: ${counts.requests} requests, ${counts.failed} failed, ${counts.non2xx} non-2xx (404/400 asked for),` +
    ` ${counts.aborted} abandoned connections; p99 ${(latency.percentile(99) / 1e6).toFixed(2)} ms`)
  for (const [reason, n] of failures) console.log(`  failed: ${reason} x ${n}`)
  console.log(`RSS: ${Math.max(...samples).toFixed(1)} MiB at most; ` + (settled.length === 0
    ? `no growth judged (the run ended within the ${WARM_UP_MS / 1000} s of warm-up)`
    : `after warm-up ${early.toFixed(1)} MiB at most early, ${late.toFixed(1)} MiB at most late (${growing ? 'GROWING' : 'stable'})`) +
    `; service exit code ${exitCode}`)
  if (counts.failed > 0 || growing || exitCode !== 0) process.exitCode = 1
}

await main()
