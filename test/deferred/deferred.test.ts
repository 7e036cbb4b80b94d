import t from 'tap'
import { readFile } from 'node:fs/promises'
import http2 from 'node:http2'
import https from 'node:https'
import * as deferredHttp2 from '../../lib/deferred/http2.ts'
import * as deferredHttps from '../../lib/deferred/https.ts'

/** The stand-ins the bundle gives Fastify's server module for node:https and node:http2 (package.json's `bundle`). */
t.test('each makes the server its module makes, answering with the handler it was given', async (t) => {
  const key = await readFile(new URL('../fixtures/stand-in.key', import.meta.url))
  const cert = await readFile(new URL('../fixtures/stand-in.crt', import.meta.url))
  const handler = () => {}
  const pairs = [
    [deferredHttps.createServer({ key, cert }, handler), https.createServer({ key, cert })],
    [deferredHttp2.createServer({}, handler), http2.createServer({})],
    [deferredHttp2.createSecureServer({ key, cert }, handler), http2.createSecureServer({ key, cert })],
  ]
  for (const [server, theirs] of pairs) {
    t.equal(server!.constructor, theirs!.constructor, theirs!.constructor.name)
    t.equal(server!.listeners('request')[0], handler, `${theirs!.constructor.name}: the handler answers its requests`)
  }
})
