import t from 'tap'
import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { STOPPED_AT_ONCE } from '../../lib/process/stopping.ts'
import { SUITE_BUNDLE } from '../helpers/bundle.ts'
import { logged, start } from '../helpers/process.ts'

// However a stop ends, the last line on stdout says so (`stopped: …`), and it is the latest: 25
// real stops, five in each way a stop can end, five at a time. The first of each five runs the
// source, which coverage counts; the other four what ships, the bundle, which starts sooner.

/** The JSON lines a process wrote on stdout. */
function stdoutLines (child: { stdout: NodeJS.ReadableStream | null }): () => Array<{ time: number, msg: string }> {
  let text = ''
  child.stdout!.on('data', (chunk) => { text += chunk })
  return () => text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))
}

const MODES = {
  'SIGTERM to one process': { env: { DRAIN_DELAY_MS: '200' }, code: 0, stop: 'stopped: every request answered' },
  'SIGTERM to the primary of WORKERS=2': { env: { DRAIN_DELAY_MS: '200', WORKERS: '2' }, code: 0, stop: 'stopped: every worker drained' },
  'a second Ctrl-C': { env: { DRAIN_DELAY_MS: '10000' }, code: STOPPED_AT_ONCE, stop: 'stopped: at once, on a second Ctrl-C' },
  'a request cut at SHUTDOWN_TIMEOUT_MS': { env: { DRAIN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: '300', LOG_LEVEL: 'debug' }, code: 1, stop: 'stopped: requests were still running' },
  'a request cut in a worker of WORKERS=2': { env: { DRAIN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: '300', LOG_LEVEL: 'debug', WORKERS: '2' }, code: 1, stop: 'stopped: requests were still running in a worker' },
} as const

for (const [mode, { env, code, stop }] of Object.entries(MODES)) {
  t.test(`${mode}: the last line on stdout says how the stop ended, and is the latest, 5 times`, async (t) => {
    const faults = join(t.testdir(), 'faults.json')
    writeFileSync(faults, JSON.stringify({ rules: [{ path: '/api/status/', delay: { ms: 30_000 } }] }))
    await Promise.all(Array.from({ length: 5 }, async (_, i) => {
      const service = await start(t, { ...env, FAULTS: faults }, i === 0 ? {} : { script: SUITE_BUNDLE })
      const lines = stdoutLines(service.child)
      if ('SHUTDOWN_TIMEOUT_MS' in env) {
        // A request that is still delayed when the shutdown timeout is up; its client waits.
        const socket = connect(service.port, '127.0.0.1', () => socket.write('GET /api/status/ HTTP/1.1\r\nHost: a\r\n\r\n'))
        socket.on('error', () => {})
        t.teardown(() => socket.destroy())
        await logged(service, '"fault":"delay"')
      }
      service.child.kill(mode === 'a second Ctrl-C' ? 'SIGINT' : 'SIGTERM')
      if (mode === 'a second Ctrl-C') {
        await logged(service, 'draining: stopping in')
        await sleep(700)
        service.child.kill('SIGINT')
      }
      const exited = await service.exited
      const all = lines()
      const last = all.at(-1)!
      t.equal(exited.code, code, `stop ${i + 1}: exit ${code}`)
      t.ok(last.msg.startsWith(stop), `stop ${i + 1}: the last line is ${JSON.stringify(last.msg.slice(0, 60))}`)
      t.equal(Math.max(...all.map((line) => line.time)), last.time, `stop ${i + 1}: and the latest`)
    }))
  })
}
