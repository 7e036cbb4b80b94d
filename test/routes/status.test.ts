import t from 'tap'
import { ReferenceStatus, Status } from '../../schemas/api.ts'
import type { Profile } from '../../schemas/profile.ts'
import { API_HEADERS, assertSchema, build, DEFAULT_PROFILE, get } from '../helpers/build.ts'

const DEFAULT_STATUS =
  '{"framework-version":"5.2.8","installed-apps":{"django_filters":"25.1","django_prometheus":"2.3.1",' +
  '"django_rq":"3.0.1","django_tables2":"2.7.5","drf_spectacular":"0.28.0","drf_spectacular_sidecar":"2025.6.1",' +
  '"mptt":"0.17.0","netbox_bgp":"0.16.0","netbox_topology_views":"4.1.0","rest_framework":"3.16.0",' +
  '"social_django":"5.4.3","taggit":"6.1.0","timezone_field":"7.1"},' +
  '"plugins":{"netbox_bgp":"0.16.0","netbox_topology_views":"4.1.0"},' +
  '"rq-workers-running":1,"runtime-version":"3.12.3","service-version":"4.3.7"}'

t.test('GET /api/status/ answers the default profile exactly', async (t) => {
  const { app } = await build(t)
  const res = await get(app, '/api/status/')
  t.equal(res.statusCode, 200)
  t.equal(res.body, DEFAULT_STATUS)
  t.match(res.headers, { ...API_HEADERS, 'content-length': String(Buffer.byteLength(DEFAULT_STATUS)) })
  assertSchema(t, Status, res.json())
  const status = res.json()
  t.same(Object.keys(status), ['framework-version', 'installed-apps', 'plugins', 'rq-workers-running', 'runtime-version', 'service-version'])
  for (const [plugin, version] of Object.entries(status.plugins)) {
    t.equal(status['installed-apps'][plugin], version, `plugin ${plugin} is an installed app with its version`)
  }
})

t.test('format=api and format=json give the same JSON; another format is a 404', async (t) => {
  const { app } = await build(t)
  for (const query of ['?format=api', '?format=json', '?format=', '?format=xml&format=api']) {
    const res = await get(app, `/api/status/${query}`)
    t.equal(res.statusCode, 200, query)
    t.equal(res.body, DEFAULT_STATUS, query)
    t.match(res.headers, API_HEADERS, query)
  }
  for (const query of ['?format=xml', '?format=API', '?format=api&format=html']) {
    const res = await get(app, `/api/status/${query}`)
    t.equal(res.statusCode, 404, query)
    t.equal(res.body, '{"detail":"Not found."}', query)
    t.match(res.headers, API_HEADERS, query)
  }
})

t.test('installed-apps is the union of components and plugins, sorted by name', async (t) => {
  const profile: Profile = structuredClone(DEFAULT_PROFILE)
  profile.status['installed-apps'] = { zeta: '1', 10: '2', alpha: '3' }
  profile.status.plugins = { beta: '4.0', 2: '5' }
  profile.status['rq-workers-running'] = 0
  const { app } = await build(t, { profile })
  const res = await get(app, '/api/status/')
  t.equal(res.body,
    '{"framework-version":"5.2.8","installed-apps":{"10":"2","2":"5","alpha":"3","beta":"4.0","zeta":"1"},' +
    '"plugins":{"2":"5","beta":"4.0"},"rq-workers-running":0,"runtime-version":"3.12.3","service-version":"4.3.7"}')
})

t.test('text is written as the reference writes it: UTF-8, U+2028 escaped', async (t) => {
  const profile: Profile = structuredClone(DEFAULT_PROFILE)
  profile.status['service-version'] = '4.3.7-é\u2028"x"'
  const { app } = await build(t, { profile })
  const res = await get(app, '/api/status/')
  t.match(res.body, /"service-version":"4\.3\.7-é\\u2028\\"x\\""}$/)
  t.equal(res.headers['content-length'], String(res.rawPayload.length))
})

t.test('STATUS_KEYS=reference: the inventory service\'s own keys, in the order its status view writes them', async (t) => {
  const { app } = await build(t, { env: { STATUS_KEYS: 'reference' } })
  const res = await get(app, '/api/status/')
  const neutral = JSON.parse(DEFAULT_STATUS)
  t.equal(res.body, JSON.stringify({
    'django-version': '5.2.8',
    'installed-apps': neutral['installed-apps'],
    'netbox-version': '4.3.7',
    'netbox-full-version': '4.3.7',
    plugins: neutral.plugins,
    'python-version': '3.12.3',
    'rq-workers-running': 1,
  }), 'the full version is the version when the profile has none')
  assertSchema(t, ReferenceStatus, res.json())
  const full = await build(t, { env: { STATUS_KEYS: 'reference' }, profile: { ...DEFAULT_PROFILE, status: { ...DEFAULT_PROFILE.status, 'service-full-version': '4.3.7-Docker-3.3.0' } } })
  t.equal((await get(full.app, '/api/status/')).json()['netbox-full-version'], '4.3.7-Docker-3.3.0', 'the profile\'s full version')
  t.equal((await get(full.app, '/api/status/')).json()['netbox-version'], '4.3.7')
  const document = (await get(app, '/api/schema/?format=json')).json()
  t.same(Object.keys(document.paths['/api/status/'].get.responses[200].content['application/json'].schema.properties),
    ['django-version', 'installed-apps', 'netbox-version', 'netbox-full-version', 'plugins', 'python-version', 'rq-workers-running'], 'the OpenAPI document follows')
  const neutralAnswer = await get((await build(t)).app, '/api/status/')
  t.equal(neutralAnswer.body, DEFAULT_STATUS, 'neutral by default')
  t.not(res.headers.etag, neutralAnswer.headers.etag, 'other bytes, another tag: a replica with the other keys never answers 304 to it')
})
