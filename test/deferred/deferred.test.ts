import t from 'tap'
import assert from 'node:assert'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { readFile } from 'node:fs/promises'
import http2 from 'node:http2'
import https from 'node:https'
import workerThreads from 'node:worker_threads'
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

t.test('the type-is stand-in answers request.is() as type-is does, loading it on first use', async (t) => {
  const require = createRequire(import.meta.url)
  const deferred = require('../../lib/deferred/type-is.cjs') as (request: unknown, types: string[]) => string | false | null
  const typeIs = require('type-is') as typeof deferred
  const json = { headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': '2' } }
  const none = { headers: {} }
  for (const [request, types] of [[json, ['json']], [json, ['html', 'application/*']], [json, ['text']], [none, ['json']]] as const) {
    t.equal(deferred(request, [...types]), typeIs(request, [...types]), `${JSON.stringify(request.headers)} is ${types.join(' or ')}`)
  }
  t.equal(deferred(json, ['json']), 'json')
})

t.test('the node:assert stand-in asserts as node:assert does', async (t) => {
  const require = createRequire(import.meta.url)
  const deferred = require('../../lib/deferred/assert.cjs') as typeof assert
  t.equal(deferred(1, 'never thrown'), undefined, 'a true value passes')
  t.throws(() => deferred(0, 'the reason'), new assert.AssertionError({ message: 'the reason', actual: 0, expected: true, operator: '==' }))
  const own = new TypeError('its own error')
  t.throws(() => deferred('', own), own, 'an error given as the message is thrown')
  t.equal(deferred.strictEqual, assert.strictEqual, 'any other function is node:assert\'s')
  t.throws(() => deferred.strictEqual(typeof 1, 'string'), { code: 'ERR_ASSERTION', actual: 'number', expected: 'string' })
})

t.test('the node:worker_threads stand-in says it is the main thread, and makes node:worker_threads\' workers', async (t) => {
  const require = createRequire(import.meta.url)
  const deferred = require('../../lib/deferred/worker-threads.cjs') as typeof workerThreads
  t.equal(deferred.isMainThread, workerThreads.isMainThread, 'the test runs on the main thread')
  t.equal(deferred.MessageChannel, workerThreads.MessageChannel, 'any other export is node:worker_threads\'')
  const worker = new deferred.Worker('require("node:worker_threads").parentPort.postMessage(require("node:worker_threads").isMainThread)', { eval: true })
  t.ok(worker instanceof workerThreads.Worker, 'a Worker of node:worker_threads')
  t.same(await once(worker, 'message'), [false], 'the worker runs, off the main thread')
  t.same(await once(worker, 'exit'), [0])
})
