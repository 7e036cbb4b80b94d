import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import type { FastifyPluginCallback } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { pino } from 'pino'
import { build, get } from '../helper.ts'

/** Messages the app logs while answering one request, under the given environment. */
async function messagesFor (t: Test, env: NodeJS.ProcessEnv, level = 'info'): Promise<string[]> {
  const lines: string[] = []
  const sink = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const { app } = await build(t, { env, logger: pino({ level }, sink) })
  await get(app, '/api/status/')
  return lines.map((line) => JSON.parse(line).msg)
}

t.test('no per-request logs unless ACCESS_LOG=true', async (t) => {
  t.same(await messagesFor(t, {}), [])
  t.same(await messagesFor(t, { ACCESS_LOG: 'true' }), ['incoming request', 'request completed'])
})

t.test('ACCESS_LOG=true logs requests whatever LOG_LEVEL says of the rest', async (t) => {
  t.same(await messagesFor(t, { ACCESS_LOG: 'true' }, 'warn'), ['incoming request', 'request completed'])
  t.same(await messagesFor(t, { ACCESS_LOG: 'true' }, 'silent'), ['incoming request', 'request completed'])
  t.same(await messagesFor(t, {}, 'warn'), [])
})

t.test('a request is logged with the id its answer carries in X-Request-ID, 200s and errors alike', async (t) => {
  const lines: string[] = []
  const sink = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const { app } = await build(t, { env: { ACCESS_LOG: 'true' }, logger: pino({ level: 'info' }, sink) })
  for (const path of ['/api/status/', '/api/extras/object-types/?limit=2', '/api/nowhere/', '/api/status']) {
    const reply = await get(app, path)
    const logged = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'incoming request' && line.req.url === path)
    t.equal(logged.length, 1, `${path}: logged once`)
    t.equal(logged[0]?.reqId, reply.headers['x-request-id'], `${path} (${reply.statusCode}): the logged id is the client's`)
  }
})

t.test('without ACCESS_LOG, what a request logs carries the id its answer does, at every level', async (t) => {
  const lines: string[] = []
  const sink = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  // A plugin whose route logs at every level through the request's logger (made when first used).
  const chatty: FastifyPluginCallback = fastifyPlugin((app, _options, done) => {
    app.get('/api/chatty/', { schema: { hide: true } }, (request, reply) => {
      for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) request.log[level](level)
      request.log.child({ part: 'child' }).info('child')
      request.log.silent('never')
      reply.header('x-level', request.log.level).send(Buffer.from('{"detail":"logged"}'))
    })
    done()
  })
  const { app } = await build(t, { logger: pino({ level: 'trace' }, sink), plugins: [chatty] })
  const reply = await app.inject({ url: '/api/chatty/', headers: { host: 'inventory.test' } })
  t.equal(reply.headers['x-level'], 'trace')
  const logged = lines.map((line) => JSON.parse(line))
  t.same(logged.map((line) => line.msg), ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'child'])
  t.same(new Set(logged.map((line) => line.reqId)), new Set([reply.headers['x-request-id']]), 'each with the answer\'s id')
  t.equal(logged.at(-1).part, 'child')
})

t.test('without ACCESS_LOG, a route\'s own log level holds for what its requests log', async (t) => {
  const lines: string[] = []
  const sink = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const quiet: FastifyPluginCallback = fastifyPlugin((app, _options, done) => {
    app.get('/api/quiet/', { schema: { hide: true }, logLevel: 'warn' }, (request, reply) => {
      request.log.info('info')
      request.log.warn('warn')
      reply.header('x-level', request.log.level).send(Buffer.from('{"detail":"logged"}'))
    })
    done()
  })
  const { app } = await build(t, { logger: pino({ level: 'trace' }, sink), plugins: [quiet] })
  const reply = await app.inject({ url: '/api/quiet/', headers: { host: 'inventory.test' } })
  t.equal(reply.headers['x-level'], 'warn')
  t.same(lines.map((line) => JSON.parse(line)).map((line) => [line.msg, line.reqId]), [['warn', reply.headers['x-request-id']]])
})
