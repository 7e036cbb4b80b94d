import t from 'tap'
import { Probe } from '../../schemas/api.ts'
import { assertSchema, build, inject } from '../helpers/build.ts'

const PROBE_HEADERS = { 'content-type': 'application/json', vary: 'Accept' }

t.test('/healthz and /readyz answer JSON to GET and HEAD, whatever the Host', async (t) => {
  const { app } = await build(t, { env: { ALLOWED_HOSTS: 'inventory.test' } })
  for (const [url, body] of [['/healthz', '{"status":"ok"}'], ['/readyz', '{"status":"ready"}']] as const) {
    for (const host of ['inventory.test', '10.1.2.3:8080', 'evil.test']) {
      const res = await inject(app, { url, headers: { host } })
      t.equal(res.statusCode, 200, `${url} with Host ${host}`)
      t.match(res.headers, PROBE_HEADERS)
      t.notOk('allow' in res.headers, 'not an API path')
      t.equal(res.body, body)
      assertSchema(t, Probe, res.json())
    }
    const head = await inject(app, { method: 'HEAD', url })
    t.same([head.statusCode, head.headers['content-length'], head.body], [200, String(body.length), ''], `HEAD ${url}`)
  }
})

t.test('/readyz turns 503 once the process is draining; /healthz stays 200', async (t) => {
  const { app, service } = await build(t)
  service.lifecycle.ready = false
  const ready = await inject(app, { url: '/readyz' })
  t.same([ready.statusCode, ready.body], [503, '{"status":"draining"}'])
  t.match(ready.headers, PROBE_HEADERS)
  assertSchema(t, Probe, ready.json())
  t.equal((await inject(app, { url: '/healthz' })).body, '{"status":"ok"}')
})

t.test('other methods on the probes are a 405 like the API\'s; paths under them plain 404s', async (t) => {
  const { app } = await build(t)
  for (const [method, url] of [['POST', '/healthz'], ['DELETE', '/readyz'], ['OPTIONS', '/readyz'], ['PUT', '/healthz']] as const) {
    const res = await inject(app, { method, url })
    t.same([res.statusCode, res.body], [405, `{"detail":"Method \\"${method}\\" not allowed."}`], `${method} ${url}`)
    t.match(res.headers, { ...PROBE_HEADERS, allow: 'GET, HEAD' }, `${method} ${url}`)
  }
  const { app: restricted } = await build(t, { env: { ALLOWED_HOSTS: 'inventory.test' } })
  const anyHost = await inject(restricted, { method: 'POST', url: '/healthz', headers: { host: 'evil.test' } })
  t.same([anyHost.statusCode, anyHost.body, anyHost.headers.allow], [405, '{"detail":"Method \\"POST\\" not allowed."}', 'GET, HEAD'],
    'whatever the Host, as their GET')
  for (const [method, url] of [['GET', '/healthz/'], ['GET', '/readyz/x']] as const) {
    const res = await inject(app, { method, url })
    t.same([res.statusCode, res.body], [404, '{"detail":"Not found."}'], `${method} ${url}`)
  }
})
