import { readFileSync } from 'node:fs'
import t from 'tap'
import { Catalog } from '../../lib/inventory/catalog.ts'
import { build, DEFAULT_PROFILE, get, inject } from '../helpers/build.ts'
import { exchange } from '../helpers/http.ts'

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }

const sample = (text: string, line: string) => new RegExp(`^${line.replace(/[{}()[\].+*?^$|\\]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]

t.test('METRICS=true: /metrics counts answers by route template and status, replays included', async (t) => {
  const { app, metrics, port, service } = await build(t, { env: { METRICS: 'true', ALLOWED_HOSTS: 'inventory.test' }, listen: true })
  metrics!.profileLoaded(0.012)
  t.notMatch((await inject(app, { url: '/metrics' })).body, /inventory_r(edis|q)_/, 'no Redis gauges without REDIS_URL')
  const polled = metrics!.redisPoll()
  polled(3)
  // Three of /7/ and of status: the first two rendered by Fastify (the cache keeps a page the
  // second time it is asked for), the third from the cache.
  const paths = ['/api/extras/object-types/7/', '/api/extras/object-types/7/', '/api/extras/object-types/7/', '/api/extras/object-types/8/',
    '/api/status/?format=api', '/api/status/?format=api', '/api/status/?format=api', '/api/nothing/', '/api/status/?format=xml']
  await exchange(port, [...paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`),
    'DELETE /api/extras/object-types/9/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n', 'DELETE /api/nothing/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n',
    // The probes, under one route each.
    'GET /healthz HTTP/1.1\r\nHost: 10.0.0.9\r\n\r\n', 'HEAD /readyz HTTP/1.1\r\nHost: 10.0.0.9\r\n\r\n', 'GET /readyz?probe HTTP/1.1\r\nHost: 10.0.0.9\r\n\r\n'])
  service.served.swap(new Catalog(DEFAULT_PROFILE))

  const res = await inject(app, { url: '/metrics', headers: { host: '10.0.0.9:8080' } })
  t.equal(res.statusCode, 200, 'any Host: scrapers use the IP')
  t.match(res.headers['content-type'], 'text/plain; version=0.0.4')
  const text = res.body
  t.equal(sample(text, 'http_requests_total{route="/api/extras/object-types/{id}/",method="GET",status="200"}'), '4')
  t.equal(sample(text, 'http_requests_total{route="/api/status/",method="GET",status="200"}'), '3')
  t.equal(sample(text, 'http_requests_total{route="/api/status/",method="GET",status="404"}'), '1')
  t.equal(sample(text, 'http_requests_total{route="unmatched",method="GET",status="404"}'), '1')
  t.equal(sample(text, 'http_requests_total{route="/api/extras/object-types/{id}/",method="other",status="405"}'), '1', 'a 405 is its path\'s route; a method the API does not answer is other')
  t.equal(sample(text, 'http_requests_total{route="unmatched",method="other",status="404"}'), '1')
  t.notMatch(text, /method="DELETE"/)
  t.equal(sample(text, 'http_request_duration_seconds_count{route="/api/status/"}'), '4')
  t.equal(sample(text, 'http_requests_total{route="/healthz",method="GET",status="200"}'), '1')
  t.equal(sample(text, 'http_requests_total{route="/readyz",method="HEAD",status="200"}'), '1')
  t.equal(sample(text, 'http_requests_total{route="/readyz",method="GET",status="200"}'), '1')
  t.notMatch(text, /route="[^"]*(\?|\/7\/|nothing|:)/, 'labels are paths as the OpenAPI document writes them, never raw URLs')
  t.equal(sample(text, `inventory_build_info{version="${PACKAGE.version}",service_version="${DEFAULT_PROFILE.status['service-version']}",node_version="${process.version}"}`), '1')
  t.equal(sample(text, 'inventory_ready'), '1')
  t.equal(sample(text, 'inventory_profile_generation'), '2')
  t.equal(sample(text, 'inventory_profile_load_seconds'), '0.012')
  t.equal(sample(text, 'inventory_redis_up'), '1')
  t.equal(sample(text, 'inventory_rq_workers'), '3')
  t.ok(Number(sample(text, 'inventory_redis_last_poll_timestamp_seconds')) > 1.7e9)
  t.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined, "Node's process metrics")
  t.equal(sample(text, 'inventory_cache_hits_total'), '2', 'the third /7/ and the third status')
  t.equal(sample(text, 'inventory_cache_misses_total'), '5', '/7/ and status rendered twice, /8/ once')
  t.equal(sample(text, 'inventory_cache_admissions_total'), '2', '/7/ and status kept the second time')
  t.equal(sample(text, 'inventory_cache_evictions_total'), '0')
  t.equal(sample(text, 'inventory_cache_bytes'), '0', 'the reload started an empty cache')
  t.equal(sample(text, 'inventory_cache_max_bytes'), String(4 * 1024 * 1024))
  await exchange(port, Array(3).fill('GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n'))
  const again = (await inject(app, { url: '/metrics' })).body
  t.equal(sample(again, 'inventory_cache_hits_total'), '3', 'counted across reloads')
  t.equal(sample(again, 'inventory_cache_misses_total'), '7')
  t.equal(sample(again, 'inventory_cache_admissions_total'), '3')
  t.ok(Number(sample(again, 'inventory_cache_bytes')) > 1024)
  polled(undefined)
  t.equal(sample((await inject(app, { url: '/metrics' })).body, 'inventory_redis_up'), '0')
})

t.test('the series alerts and the dashboard read exist at 0 before the first answer: 200 and 5xx of each route\'s GET and HEAD, and its latency', async (t) => {
  const { app } = await build(t, { env: { METRICS: 'true' } })
  const text = (await inject(app, { url: '/metrics' })).body
  const routes = ['/api/', '/api/extras/', '/api/extras/object-types/', '/api/extras/object-types/{id}/', '/api/status/', '/api/schema/', '/healthz', '/readyz', '/metrics']
  const expected = routes.flatMap((route) => ['GET', 'HEAD'].flatMap((method) => ['200', '500', '502', '503', '5xx']
    .map((status) => `http_requests_total{route="${route}",method="${method}",status="${status}"} 0`)))
  // The scrape itself is counted once it is answered.
  t.same(text.match(/^http_requests_total\{.*$/gm)!.sort(), expected.sort())
  for (const route of routes) t.equal(sample(text, `http_request_duration_seconds_bucket{le="+Inf",route="${route}"}`), '0', `${route}: its latency histogram`)
  t.notMatch(text, /route="[^"]*\{format\}/, 'a format suffix is its path\'s route')
})

t.test('build info follows the profile served; readiness follows /readyz', async (t) => {
  const { app, service } = await build(t, { env: { METRICS: 'true' } })
  const other = { ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-version': '4.4.0' } }
  service.served.swap(new Catalog(other))
  service.lifecycle.ready = false
  const text = (await inject(app, { url: '/metrics' })).body
  t.same(text.match(/^inventory_build_info\{.*$/gm), [`inventory_build_info{version="${PACKAGE.version}",service_version="4.4.0",node_version="${process.version}"} 1`], 'only the version served')
  t.equal(sample(text, 'inventory_ready'), '0')
})

t.test('without METRICS there is no /metrics', async (t) => {
  const { app } = await build(t)
  t.same([(await get(app, '/metrics')).statusCode, (await get(app, '/metrics')).body], [404, '{"detail":"Not found."}'])
})

t.test('with ACCESS_LOG nothing is replayed, and /metrics reports no response cache', async (t) => {
  const { app, replays } = await build(t, { env: { METRICS: 'true', ACCESS_LOG: 'true' } })
  t.equal(replays, undefined)
  const text = (await inject(app, { url: '/metrics' })).body
  t.match(text, /^# TYPE http_requests_total counter$/m)
  t.match(text, /^inventory_profile_generation 1$/m)
  t.notMatch(text, /inventory_cache_/)
})
