import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import type { FastifyBaseLogger, FastifyPluginCallback, FastifyReply, LightMyRequestResponse, RouteShorthandOptions } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { pino } from 'pino'
import { build, get } from './helpers/build.ts'

/** A pino destination that keeps the lines written to it. */
function logSink (): { lines: string[], sink: Writable } {
  const lines: string[] = []
  return { lines, sink: new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } }) }
}

/** Messages the app logs while answering one request, under the given environment. */
async function messagesFor (t: Test, env: NodeJS.ProcessEnv, level = 'info'): Promise<string[]> {
  const { lines, sink } = logSink()
  const { app } = await build(t, { env, logger: pino({ level }, sink) })
  await get(app, '/api/status/')
  return lines.map((line) => JSON.parse(line).msg)
}

/**
 * The lines logged, with the app's logger at trace, while a plugin's route (of these options)
 * answers one request after `logs` has used the request's logger; the plugin logs with the app's
 * logger when registered. The answer says how many listeners wait for it to end or fail.
 */
async function loggedBy (t: Test, options: RouteShorthandOptions, logs: (log: FastifyBaseLogger, reply: FastifyReply) => void, env: NodeJS.ProcessEnv = {}): Promise<{ reply: LightMyRequestResponse, logged: Array<Record<string, string>> }> {
  const { lines, sink } = logSink()
  const plugin: FastifyPluginCallback = fastifyPlugin((app, _options, done) => {
    app.log.warn('registered')
    app.get('/api/logging/', { ...options, schema: { hide: true } }, (request, reply) => {
      logs(request.log, reply)
      reply.header('x-level', request.log.level)
      reply.header('x-listeners', reply.raw.listenerCount('finish') + reply.raw.listenerCount('error'))
      reply.send(Buffer.from('{"detail":"logged"}'))
    })
    done()
  })
  const { app } = await build(t, { env, logger: pino({ level: 'trace' }, sink), plugins: [plugin] })
  const reply = await app.inject({ url: '/api/logging/', headers: { host: 'inventory.test' } })
  return { reply, logged: lines.map((line) => JSON.parse(line)) }
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
  const { lines, sink } = logSink()
  const { app } = await build(t, { env: { ACCESS_LOG: 'true' }, logger: pino({ level: 'info' }, sink) })
  for (const path of ['/api/status/', '/api/extras/object-types/?limit=2', '/api/nowhere/', '/api/status']) {
    const reply = await get(app, path)
    const logged = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'incoming request' && line.req.url === path)
    t.equal(logged.length, 1, `${path}: logged once`)
    t.equal(logged[0]?.reqId, reply.headers['x-request-id'], `${path} (${reply.statusCode}): the logged id is the client's`)
  }
})

t.test('without ACCESS_LOG, what a request logs carries the id its answer does, at every level', async (t) => {
  // The request's logger is made when first used.
  const { reply, logged } = await loggedBy(t, {}, (log) => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) log[level](level)
    log.child({ part: 'child' }).info('child')
    log.silent('never')
  })
  t.equal(reply.headers['x-level'], 'trace')
  t.same(logged.map((line) => line.msg), ['registered', 'fatal', 'error', 'warn', 'info', 'debug', 'trace', 'child'])
  t.same(new Set(logged.slice(1).map((line) => line.reqId)), new Set([reply.headers['x-request-id']]), 'each with the answer\'s id')
  t.equal(logged.at(-1)?.part, 'child')
})

t.test('without ACCESS_LOG, a route\'s own log level holds for what its requests log', async (t) => {
  const { reply, logged } = await loggedBy(t, { logLevel: 'warn' }, (log) => {
    log.info('info')
    log.warn('warn')
  })
  t.equal(reply.headers['x-level'], 'warn')
  t.same(logged.map((line) => [line.msg, line.reqId]), [['registered', undefined], ['warn', reply.headers['x-request-id']]])
})

t.test('only with ACCESS_LOG does Fastify wait for every answer\'s end, to log it; plugins log either way', async (t) => {
  const quiet = await loggedBy(t, {}, (log, reply) => log.info({ res: reply }, 'answering'))
  const logging = await loggedBy(t, {}, () => {}, { ACCESS_LOG: 'true' })
  t.same(quiet.logged.map((line) => [line.msg, line.res]), [['registered', undefined], ['answering', { statusCode: 200 }]])
  t.same(logging.logged.map((line) => [line.msg, line.res]), [['registered', undefined], ['incoming request', undefined], ['request completed', { statusCode: 200 }]])
  // Fastify's listeners for the end and the failure of an answer, one each (docs/performance.md).
  t.equal(Number(logging.reply.headers['x-listeners']) - Number(quiet.reply.headers['x-listeners']), 2)
})
