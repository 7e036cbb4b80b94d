/**
 * What the worst queries cost against a plain one of the same size: each case a query of about
 * 15.5 KiB (the request line fits MAX_HEADER_SIZE's 16 KiB), asked with a new counter each time
 * so that every request is rendered, one after another on one connection. Prints the service's
 * CPU per request and the ratio to the plain query; asserts nothing.
 *
 *   npm run bench:queries [-- --requests 400 --node <binary>]
 */
import { once } from 'node:events'
import { spawn } from 'node:child_process'
import { Agent, request } from 'node:http'
import { parseArgs } from 'node:util'
import { IMAGE_ENV } from './image.ts'
import { cpuMicros, HOST, median, pinned, SERVICE, waitFor200 } from './load.ts'

const { values: options } = parseArgs({
  options: {
    requests: { type: 'string', default: '400' },
    node: { type: 'string', default: process.execPath },
  },
})
const REQUESTS = Number(options.requests)
const PORT = 18090
const SIZE = 15_500

const names = (count: number) => Array.from({ length: count }, (_, i) => i.toString(36).padStart(3, '0'))
const fill = (unit: string) => unit.repeat(Math.floor(SIZE / unit.length))
const CASES: Record<string, string> = {
  'plain: one long value': `limit=50&offset=50&pad=${'a'.repeat(SIZE)}`,
  'plain: names in order': names(Math.floor(SIZE / 5)).map((name) => name + '=').join('&'),
  'names in descending order': names(Math.floor(SIZE / 5)).reverse().map((name) => name + '=').join('&'),
  'ordering of 1,400 terms': `ordering=${fill('-app_label,').slice(0, -1)}`,
  'a blank run in a filter': `q=${fill('%20')}x`,
  'fields without =': fill('a&'),
  'a number of 15,000 digits': `id=1e${'9'.repeat(SIZE)}`,
  'escapes kept in links': `x=${fill('%C3%A9')}`,
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

function get (path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: PORT, path, agent, headers: { host: HOST } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode!))
    }).on('error', reject).end()
  })
}

const [command, ...args] = pinned('1', [options.node, ...SERVICE])
const service = spawn(command!, args, {
  env: { ...process.env, ...IMAGE_ENV, PORT: String(PORT), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
  stdio: 'inherit',
})
await waitFor200(service, PORT, '/api/status/')
const rows: Array<[string, number, number]> = []
for (const [name, query] of Object.entries(CASES)) {
  const path = `/api/extras/object-types/?${query}&n=`
  // Warm, then measured: CPU of the service per request, and the median time to the answer.
  for (let i = 0; i < 50; i++) await get(path + 'w' + i)
  const times: number[] = []
  const before = cpuMicros(service.pid!)
  for (let i = 0; i < REQUESTS; i++) {
    const started = process.hrtime.bigint()
    const status = await get(path + i)
    if (status >= 500 || status === 431 || status === 414) throw new Error(`${name}: ${status}`)
    times.push(Number(process.hrtime.bigint() - started) / 1000)
  }
  rows.push([name, (cpuMicros(service.pid!) - before) / REQUESTS, median(times)])
}
const plain = rows[0]![1]
console.log(`each query about ${(SIZE / 1024).toFixed(1)} KiB, ${REQUESTS} requests each, every one rendered; ratio: CPU per request against the first case`)
for (const [name, cpu, latency] of rows) {
  console.log(`${name.padEnd(28)} ${cpu.toFixed(0).padStart(6)} µs CPU/req  ${(cpu / plain).toFixed(2).padStart(5)}x   median ${latency.toFixed(0)} µs`)
}
agent.destroy()
service.kill('SIGTERM')
await once(service, 'exit')
