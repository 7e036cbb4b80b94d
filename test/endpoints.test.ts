import t from 'tap'
import { declaredResponse, ENDPOINTS } from '../lib/api/endpoints.ts'
import { API_HEADERS, BASE, build, get, inject } from './helper.ts'

// Every row of the table is served as it declares: its path, the redirect to it, OPTIONS, 405.
const concrete = (path: string) => path.replace(/:\w+/g, '7')

t.test('every endpoint of the table answers as its row declares', async (t) => {
  const { app } = await build(t)
  for (const endpoint of ENDPOINTS) {
    const path = concrete(endpoint.path)
    const ok = await get(app, path)
    t.equal(ok.statusCode, 200, path)
    t.match(ok.headers, API_HEADERS, path)
    const moved = await get(app, `${path.slice(0, -1)}?x=1`)
    t.same([moved.statusCode, moved.headers.location], [301, `${BASE}${path}?x=1`], `${path} without its slash`)
    const options = await inject(app, { method: 'OPTIONS', url: path, headers: { host: 'inventory.test' } })
    t.equal(options.body, JSON.stringify({ name: endpoint.name, description: endpoint.description, renders: ['application/json'], parses: ['application/json'] }))
    const put = await inject(app, { method: 'PUT', url: path, headers: { host: 'inventory.test' } })
    t.same([put.statusCode, put.body], [405, '{"detail":"Method \\"PUT\\" not allowed."}'], `PUT ${path}`)
  }
})

t.test('nothing declares a 5xx, nor a success to a write', async (t) => {
  for (const endpoint of ENDPOINTS) {
    t.equal(declaredResponse(endpoint, 'GET', 500), undefined)
    t.equal(declaredResponse(endpoint, 'POST', 200), undefined)
    t.equal(declaredResponse(endpoint, 'POST', 405)?.description, 'An error.')
  }
})

// Fastify is given compilers that refuse (lib/app.ts), so that it never loads ajv and fast-json-stringify.
t.test('Fastify compiles no schema: one given to a route stops start-up', async (t) => {
  const refused = 'Fastify compiles no schemas in this service: a route checks its own input and sends pre-rendered bytes (lib/app.ts)'
  const schemas = { validated: { querystring: { type: 'object' } }, serialized: { response: { 200: { type: 'object' } } } }
  for (const [kind, schema] of Object.entries(schemas)) {
    const { app } = await build(t)
    app.get('/api/compiled/', { schema }, async () => 'never')
    await t.rejects(async () => app.ready(), { message: refused }, kind)
  }
})
