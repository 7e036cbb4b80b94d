import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { buildApp } from '../lib/app.ts'
import { Catalog } from '../lib/catalog.ts'
import { Served } from '../lib/served.ts'
import { loadConfig } from '../lib/config.ts'
import { DEFAULT_PROFILE } from './helper.ts'

/** Messages the app logs while answering one request, under the given environment. */
async function messagesFor (t: Test, env: NodeJS.ProcessEnv): Promise<string[]> {
  const lines: string[] = []
  const sink = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const app = await buildApp({ config: loadConfig(env), served: new Served(new Catalog(DEFAULT_PROFILE)), logger: pino({ level: 'info' }, sink) })
  t.teardown(() => app.close())
  await app.inject({ url: '/api/status/', headers: { host: 'inventory.test' } })
  return lines.map((line) => JSON.parse(line).msg)
}

t.test('no per-request logs unless ACCESS_LOG=true', async (t) => {
  t.same(await messagesFor(t, {}), [])
  t.same(await messagesFor(t, { ACCESS_LOG: 'true' }), ['incoming request', 'request completed'])
})
