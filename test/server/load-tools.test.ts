import t from 'tap'
import autocannon from 'autocannon'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { needs } from '../programs.ts'
import { start } from '../service.ts'

// Load generators that pipeline, as load testers run them, against the service with the Kubernetes
// heap: every request they send is answered, without one error, at any depth.

const DEPLOYMENT = { NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=4', MALLOC_ARENA_MAX: '2' }
const HOST = 'inv.example.com'

t.test('autocannon pipelining 100 deep: every answer a 200, no error, timeout or reset', async (t) => {
  const service = await start(t, DEPLOYMENT)
  for (const path of ['/api/status/', '/api/extras/object-types/?limit=50&offset=50', '/api/extras/object-types/5/']) {
    const result = await autocannon({ url: `http://127.0.0.1:${service.port}${path}`, connections: 10, pipelining: 100, amount: 20_000, headers: { host: HOST } })
    // autocannon stops once it has sent the amount, with at most a pipeline's depth in flight on each connection.
    t.same({ errors: result.errors, timeouts: result.timeouts, resets: result.resets, non2xx: result.non2xx, everyAnswer200: result['2xx'] === result.requests.total },
      { errors: 0, timeouts: 0, resets: 0, non2xx: 0, everyAnswer200: true }, `${path}: no error`)
    t.ok(result['2xx'] >= 20_000 - 10 * 100, `${path}: ${result['2xx']} answers to the 20,000 sent`)
  }
})

t.test('wrk with a 64-deep pipelining script: no socket error, no answer but a 200', { skip: needs('wrk') }, async (t) => {
  const service = await start(t, DEPLOYMENT)
  const script = join(t.testdir(), 'pipeline.lua')
  writeFileSync(script, `local requests
function init (args)
  requests = wrk.format():rep(64)
end
request = function () return requests end
`)
  for (const path of ['/api/status/', '/api/extras/object-types/?limit=50&offset=50']) {
    const out = execFileSync('wrk', ['-t1', '-c50', '-d2s', '-H', `Host: ${HOST}`, '-s', script, `http://127.0.0.1:${service.port}${path}`]).toString()
    const requests = Number(/(\d+) requests in/.exec(out)?.[1])
    t.ok(requests > 0, `${path}: ${requests} answers`)
    t.notMatch(out, /Socket errors|Non-2xx/, `${path}: no socket error (connect, read, write, timeout) and no answer but a 2xx`)
  }
})
