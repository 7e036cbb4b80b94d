import t from 'tap'
import { Socket } from 'node:net'
import { API_HEADERS, BASE, build, get, inject } from '../helpers/build.ts'

const PATHS = {
  '/api/status/': 'Status',
  '/api/extras/object-types/': 'Object Type List',
  '/api/extras/object-types/12/': 'Object Type Instance',
}

t.test('HEAD answers the GET headers with no body', async (t) => {
  const { app } = await build(t)
  for (const path of Object.keys(PATHS)) {
    const got = await get(app, path)
    const head = await inject(app, { method: 'HEAD', url: path, headers: { host: 'inventory.test' } })
    t.equal(head.statusCode, 200, path)
    t.equal(head.body, '', path)
    t.match(head.headers, { ...API_HEADERS, 'content-length': got.headers['content-length'] }, path)
  }
})

t.test('OPTIONS describes the endpoint', async (t) => {
  const { app } = await build(t)
  for (const [path, name] of Object.entries(PATHS)) {
    const description = path === '/api/status/'
      ? "A lightweight read-only endpoint for conveying the service's current operational status."
      : 'Read-only list of object types.'
    const res = await inject(app, { method: 'OPTIONS', url: path })
    t.equal(res.statusCode, 200, path)
    t.equal(res.body, JSON.stringify({ name, description, renders: ['application/json'], parses: ['application/json'] }), path)
    t.match(res.headers, API_HEADERS, path)
  }
})

t.test('every other method is a 405 naming it, whatever body it carries', async (t) => {
  const { app } = await build(t)
  for (const path of Object.keys(PATHS)) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND', 'QUERY'] as const) {
      const res = await inject(app, {
        method, url: path, payload: '{not json', headers: { 'content-type': 'application/json' },
      })
      t.equal(res.statusCode, 405, `${method} ${path}`)
      t.equal(res.body, `{"detail":"Method \\"${method}\\" not allowed."}`, `${method} ${path}`)
      t.match(res.headers, API_HEADERS, `${method} ${path}`)
    }
  }
  const bodyless = await inject(app, { method: 'DELETE', url: '/api/status/' })
  t.equal(bodyless.body, '{"detail":"Method \\"DELETE\\" not allowed."}')
})

t.test('other methods reach every form of a known path, as routes of their own', async (t) => {
  const { app } = await build(t)
  const allowed = { ...API_HEADERS, allow: 'GET, HEAD, OPTIONS' }
  const notAllowed = [405, '{"detail":"Method \\"PATCH\\" not allowed."}']
  // The suffix forms and an item: matched as their GET routes match them.
  for (const url of ['/api/extras/object-types.json', '/api/extras/object-types.json/?limit=2',
    '/api/extras/object-types/12.json', '/api/extras/object-types/abc/']) {
    const res = await inject(app, { method: 'PATCH', url })
    t.same([res.statusCode, res.body], notAllowed, url)
    t.match(res.headers, allowed, url)
  }
  // Decoded as the router decodes it (app.inject: the contract check reads paths undecoded).
  const encoded = await app.inject({ method: 'PATCH', url: '/api/st%61tus/' })
  t.same([encoded.statusCode, encoded.body], notAllowed, '/api/st%61tus/')
  for (const url of ['/api/extras/object-types.xml', '/api/status/?format=yaml', '/api/extras/object-types/12/?format=xml']) {
    const res = await inject(app, { method: 'PATCH', url })
    t.same([res.statusCode, res.body], [404, '{"detail":"Not found."}'], url)
    t.match(res.headers, allowed, `${url}: the endpoint's answer, with its Allow`)
  }
  for (const url of ['/metrics', '/api/status/x/', '/api/extras/object-types/%zz/']) {
    const res = await inject(app, { method: 'PATCH', url })
    t.same([res.statusCode, res.body], [404, '{"detail":"Not found."}'], url)
    t.notOk('allow' in res.headers, url)
  }
  t.same((await inject(app, { method: 'PATCH', url: '/api/status', headers: { host: 'inventory.test' } })).headers.location,
    'http://inventory.test/api/status/', 'a known path without its slash is redirected, whatever the method')
  // Fastify's router is the only one: every method of a known path is a route of it.
  t.same(['GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE'].map((method) => app.hasRoute({ method, url: '/api/status/' })),
    [true, true, true, true, true])
})

t.test('an unknown format is checked before the method, as in the reference', async (t) => {
  const { app } = await build(t)
  const res = await inject(app, { method: 'POST', url: '/api/status/?format=yaml' })
  t.equal(res.statusCode, 404)
  t.equal(res.body, '{"detail":"Not found."}')
})

t.test('a known path without its trailing slash is a 301 to the slashed one, query kept', async (t) => {
  const { app } = await build(t)
  const cases = {
    '/api/status': `${BASE}/api/status/`,
    '/api/extras/object-types?limit=5&offset=5': `${BASE}/api/extras/object-types/?limit=5&offset=5`,
    '/api/extras/object-types/12?format=api': `${BASE}/api/extras/object-types/12/?format=api`,
  }
  for (const [url, location] of Object.entries(cases)) {
    const res = await get(app, url)
    t.equal(res.statusCode, 301, url)
    t.equal(res.headers.location, location, url)
    t.equal(res.body, '{"detail":"Moved permanently."}', url)
    t.match(res.headers, { 'content-type': 'application/json', vary: 'Accept' }, url)
  }
})

t.test('unknown paths are JSON 404s', async (t) => {
  const { app } = await build(t)
  for (const url of ['/', '/api/status/extra/', '/API/status/', '/api/extras/object-types/1/2/',
    '/api//status/', '/static/x.css', '/api/extras/object-types/%zz/']) {
    const res = await get(app, url)
    t.equal(res.statusCode, 404, url)
    t.equal(res.body, '{"detail":"Not found."}', url)
    t.match(res.headers, { 'content-type': 'application/json', vary: 'Accept' }, url)
    t.notOk('allow' in res.headers, url)
  }
})

t.test('an unexpected failure is a JSON 500 that leaks nothing', async (t) => {
  const { app } = await build(t)
  app.get('/boom', () => { throw new Error('secret internals') })
  app.get('/odd-status', () => { throw Object.assign(new Error('moved?'), { statusCode: 302 }) })
  for (const url of ['/boom', '/odd-status']) {
    // app.inject, not the checked helper: these routes and their 500 are this test's, not the API's.
    const res = await app.inject({ url, headers: { host: 'inventory.test' } })
    t.equal(res.statusCode, 500, url)
    t.equal(res.body, '{"detail":"A server error occurred."}', url)
    t.match(res.headers, { 'content-type': 'application/json', vary: 'Accept' }, url)
  }
})

t.test('a client error on a connection already gone is dropped quietly', async (t) => {
  const { app } = await build(t)
  await app.ready()
  const socket = new Socket()
  socket.destroy()
  const written: unknown[] = []
  socket.write = ((chunk: unknown) => written.push(chunk) > 0) as typeof socket.write
  app.server.emit('clientError', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), socket)
  t.same(written, [], 'nothing is written to it')
})
