import { createRequire } from 'node:module'
import * as Type from '@sinclair/typebox'
import type { TObject } from '@sinclair/typebox'
import type { RouteOptions } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import t from 'tap'
import { routeUrls } from '../../lib/routes/endpoint.ts'
import { API_HEADERS, BASE, ENDPOINTS, build, get, inject } from '../helpers/build.ts'

// Fastify is given compilers that build nothing (lib/schema-controller.ts): every input is read by the reference's rules.
t.test('Fastify never loads ajv or fast-json-stringify, and answers what a schema would refuse by the reference\'s rules', async (t) => {
  const { app } = await build(t)
  t.equal((await get(app, '/api/extras/object-types/?limit=abc')).json().results.length, 50, 'limit=abc: the page size')
  t.same([(await get(app, '/api/extras/object-types/abc/')).statusCode], [404], 'an id that is no integer: a 404, not a 400')
  const loaded = Object.keys(createRequire(import.meta.url).cache)
  t.same(loaded.filter((file) => /ajv|fast-json-stringify-compiler|@fastify\/swagger/.test(file)), [], 'nor @fastify/swagger until the document is asked for (this test comes first in its process)')
  t.equal((await get(app, '/api/schema/?format=json')).statusCode, 200)
  t.ok(Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('@fastify/swagger')), 'then it is')
})

// Every row of the table is served as it declares: its path, the redirect to it, OPTIONS, 405.
const concrete = (path: string) => path.replace(/:\w+/g, '7')

t.test('every endpoint of the table answers as its row declares', async (t) => {
  const { app } = await build(t)
  for (const endpoint of ENDPOINTS) {
    const path = concrete(endpoint.path)
    const ok = await get(app, path)
    t.equal(ok.statusCode, 200, path)
    // The document's own media type; every other body is JSON.
    t.match(ok.headers, endpoint.ownContentType === true ? { ...API_HEADERS, 'content-type': 'application/vnd.oai.openapi; charset=utf-8' } : API_HEADERS, path)
    const moved = await get(app, `${path.slice(0, -1)}?x=1`)
    t.same([moved.statusCode, moved.headers.location], [301, `${BASE}${path}?x=1`], `${path} without its slash`)
    const options = await inject(app, { method: 'OPTIONS', url: path, headers: { host: 'inventory.test' } })
    t.equal(options.body, JSON.stringify({ name: endpoint.name, description: endpoint.description, renders: ['application/json'], parses: ['application/json'] }))
    const put = await inject(app, { method: 'PUT', url: path, headers: { host: 'inventory.test' } })
    t.same([put.statusCode, put.body], [405, '{"detail":"Method \\"PUT\\" not allowed."}'], `PUT ${path}`)
  }
})

t.test('nothing declares a 5xx', async (t) => {
  for (const endpoint of ENDPOINTS) {
    t.same(Object.keys(endpoint.schema('neutral').response as object).filter((status) => status >= '500'), [], endpoint.path)
  }
})

t.test('every route declares the schemas of its answers; the endpoints, of their parameters too', async (t) => {
  const routes: RouteOptions[] = []
  const recorder = fastifyPlugin((app, _options, done) => {
    app.addHook('onRoute', (route) => { routes.push(route) })
    done()
  })
  await (await build(t, { plugins: [recorder] })).app.ready()
  const gets = routes.filter((route) => route.method === 'GET')
  t.same(gets.map((route) => route.url).sort(), [...ENDPOINTS.flatMap((endpoint) => routeUrls(endpoint)), '/healthz', '/readyz'].sort())
  for (const route of gets) {
    const response = route.schema?.response as Record<number, unknown> | undefined
    t.ok(response?.[200] !== undefined, `${route.url}: its 200`)
  }
  const schemaOf = (url: string) => gets.find((route) => route.url === url)!.schema!
  t.same(Object.keys((schemaOf('/api/extras/object-types/').querystring as TObject).properties), ['app_label', 'id', 'limit', 'model', 'offset', 'ordering', 'q'])
  t.same((schemaOf('/api/extras/object-types/:id/').params as TObject).properties.id, { ...Type.Integer(), description: 'A unique integer value identifying this object type.' })
  t.ok(routes.filter((route) => route.method !== 'GET' && route.method !== 'HEAD').every((route) => route.onRequest !== undefined || route.url.startsWith('/healthz') || route.url.startsWith('/readyz')),
    'the other methods of an endpoint check what its GET checks')
})
