import t from 'tap'
import autocannon from 'autocannon'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { needs } from '../helpers/programs.ts'
import { start } from '../helpers/process.ts'

// Load generators that pipeline, as load testers run them, against the service with the Kubernetes
// heap: every request they send is answered, without one error, at any depth.

const DEPLOYMENT = { NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=4', MALLOC_ARENA_MAX: '2' }
const HOST = 'inv.example.com'

t.test('autocannon pipelining 100 deep: every answer a 200, no error, timeout or reset', async (t) => {
  const service = await start(t, DEPLOYMENT)
  for (const path of ['/api/status/', '/api/extras/object-types/?limit=50&offset=50', '/api/extras/object-types/5/']) {
    // For 2 s, with its timeout as a hang detector (its default, 10 s, a loaded machine may miss).
    const result = await autocannon({ url: `http://127.0.0.1:${service.port}${path}`, connections: 10, pipelining: 100, duration: 2, timeout: 60, headers: { host: HOST } })
    t.same({ errors: result.errors, timeouts: result.timeouts, resets: result.resets, non2xx: result.non2xx, everyAnswer200: result['2xx'] === result.requests.total },
      { errors: 0, timeouts: 0, resets: 0, non2xx: 0, everyAnswer200: true }, `${path}: no error`)
    t.ok(result['2xx'] > 0, `${path}: ${result['2xx']} answers, every one a 200`)
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
    // wrk's timeout as a hang detector: its default, 2 s, is a limit a loaded machine misses. wrk
    // counts the answers of its duration: a machine too busy to answer in 2 s gets a longer run.
    let out = ''
    for (const seconds of [2, 10, 60]) {
      out = execFileSync('wrk', ['-t1', '-c50', `-d${seconds}s`, '--timeout', '60s', '-H', `Host: ${HOST}`, '-s', script, `http://127.0.0.1:${service.port}${path}`]).toString()
      if (!/ 0 requests in/.test(out)) break
    }
    const requests = Number(/(\d+) requests in/.exec(out)?.[1])
    t.ok(requests > 0, `${path}: ${requests} answers`)
    t.notMatch(out, /Socket errors|Non-2xx/, `${path}: no socket error (connect, read, write, timeout) and no answer but a 2xx`)
  }
})
