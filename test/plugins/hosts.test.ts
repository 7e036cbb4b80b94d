import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { API_HEADERS, build, inject } from '../helpers/build.ts'

const firstPage = async (app: FastifyInstance, headers: Record<string, string>, remoteAddress = '127.0.0.1') =>
  inject(app, { method: 'GET', url: '/api/extras/object-types/?limit=1&offset=1', headers, remoteAddress })

const linksOf = (body: string) => {
  const page = JSON.parse(body)
  return [page.next, page.previous, page.results[0].url]
}

t.test('the base of every absolute URL is http:// and the Host, as sent', async (t) => {
  const { app } = await build(t)
  for (const host of ['inventory.test', 'Inventory.Test:8443', '10.0.0.7:8080', '[::1]:9000', 'localhost']) {
    const res = await firstPage(app, { host })
    t.equal(res.statusCode, 200, host)
    t.same(linksOf(res.body), [
      `http://${host}/api/extras/object-types/?limit=1&offset=2`,
      `http://${host}/api/extras/object-types/?limit=1`,
      `http://${host}/api/extras/object-types/5/`,
    ], host)
  }
})

t.test('a Host that is not a host name is refused, so it never reaches a link', async (t) => {
  const { app } = await build(t)
  for (const host of ['evil.test/x?', 'a b', 'evil.test:80:80', 'evil.test"', 'user@evil.test', '[::1']) {
    const res = await firstPage(app, { host })
    t.equal(res.statusCode, 400, host)
    t.equal(res.body, '{"detail":"Invalid Host header."}', host)
    t.match(res.headers, API_HEADERS, host)
  }
  const unknownPath = await inject(app, { url: '/nowhere', headers: { host: 'a b' } })
  t.equal(unknownPath.statusCode, 400)
  t.notOk('allow' in unknownPath.headers, 'Allow only on API paths')
})

t.test('X-Forwarded-* are ignored unless TRUST_PROXY names the peer', async (t) => {
  const forwarded = { host: 'internal:8080', 'x-forwarded-host': 'inventory.example.com', 'x-forwarded-proto': 'https' }
  const { app: untrusting } = await build(t)
  t.equal(linksOf((await firstPage(untrusting, forwarded)).body)[2], 'http://internal:8080/api/extras/object-types/5/')

  const { app: trusting } = await build(t, { env: { TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' } })
  t.equal(linksOf((await firstPage(trusting, forwarded)).body)[2], 'https://inventory.example.com/api/extras/object-types/5/')
  t.equal(linksOf((await firstPage(trusting, forwarded, '10.1.2.3')).body)[2], 'https://inventory.example.com/api/extras/object-types/5/')
  t.equal(linksOf((await firstPage(trusting, forwarded, '192.0.2.9')).body)[2], 'http://internal:8080/api/extras/object-types/5/',
    'a peer outside the list is not trusted')
  const chain = { ...forwarded, 'x-forwarded-host': 'spoofed.test, inventory.example.com', 'x-forwarded-proto': 'http, https' }
  t.equal(linksOf((await firstPage(trusting, chain)).body)[2], 'https://inventory.example.com/api/extras/object-types/5/',
    'the last proxy hop counts')
  const oddProto = { ...forwarded, 'x-forwarded-proto': 'javascript' }
  t.equal(linksOf((await firstPage(trusting, oddProto)).body)[2], 'http://inventory.example.com/api/extras/object-types/5/',
    'only https counts as secure')
  const badHost = await firstPage(trusting, { ...forwarded, 'x-forwarded-host': 'evil.test/<x>' })
  t.equal(badHost.statusCode, 400, 'a forwarded host is checked like a Host')
})

t.test('PUBLIC_URL replaces the request-derived base, path prefix included', async (t) => {
  const { app } = await build(t, { env: { PUBLIC_URL: 'https://inventory.example.com/netbox/' } })
  for (const host of ['internal:8080', 'anything.test']) {
    t.same(linksOf((await firstPage(app, { host, 'x-forwarded-host': 'spoofed.test' })).body), [
      'https://inventory.example.com/netbox/api/extras/object-types/?limit=1&offset=2',
      'https://inventory.example.com/netbox/api/extras/object-types/?limit=1',
      'https://inventory.example.com/netbox/api/extras/object-types/5/',
    ], host)
  }
  const redirect = await inject(app, { url: '/api/status?x=1', headers: { host: 'internal:8080' } })
  t.equal(redirect.headers.location, 'https://inventory.example.com/netbox/api/status/?x=1')
})

t.test('ALLOWED_HOSTS refuses any other Host with a JSON 400', async (t) => {
  const { app } = await build(t, { env: { ALLOWED_HOSTS: 'inventory.example.com, .corp.test,[::1]' } })
  for (const host of ['inventory.example.com', 'INVENTORY.example.com:8080', 'inventory.example.com.', 'corp.test', 'a.b.corp.test:1', '[::1]:80', '[::1]']) {
    t.equal((await firstPage(app, { host })).statusCode, 200, host)
  }
  for (const host of ['evil.test', 'example.com', 'xcorp.test', 'inventory.example.com.evil.test', '127.0.0.1']) {
    for (const url of ['/api/status/', '/api/extras/object-types/', '/api/extras/object-types/5/', '/unknown']) {
      const res = await inject(app, { url, headers: { host } })
      t.equal(res.statusCode, 400, `${host} ${url}`)
      t.equal(res.body, '{"detail":"Invalid Host header."}', `${host} ${url}`)
    }
  }
  const { app: withPublicUrl } = await build(t, { env: { ALLOWED_HOSTS: 'inventory.example.com', PUBLIC_URL: 'https://inventory.example.com' } })
  t.equal((await firstPage(withPublicUrl, { host: 'evil.test' })).statusCode, 400, 'checked with PUBLIC_URL too')
  t.equal((await firstPage(withPublicUrl, { host: 'inventory.example.com' })).statusCode, 200)
})
