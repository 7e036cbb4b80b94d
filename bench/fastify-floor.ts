/**
 * The floor of a miss: a minimal Fastify app of the service's Fastify, with the options that
 * matter as the service sets them (no logger, its compilers), one GET route per path writing the
 * service's answer from memory, as the bare server does (reference-server.ts). What the service
 * costs beyond it on a new query is its own work.
 * Usage: fastify-floor.js <port> <service port> <host> <path>...
 */
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import { SCHEMA_CONTROLLER } from '../lib/schema-controller.ts'
import { answerOf, copyAnswers } from './answers.ts'

const [port, servicePort, host, ...paths] = process.argv.slice(2)
const answers = await copyAnswers(Number(servicePort), host!, paths)
/** Each answer's headers as Fastify takes them; Fastify sets the length. */
const headersOf = new Map([...answers.values()].map((answer) => [answer, {
  ok: Object.fromEntries(pairs(answer.headers).filter(([name]) => name !== 'content-length')),
  notModified: Object.fromEntries(pairs(answer.notModifiedHeaders)),
}]))

const app = Fastify({ logger: false, schemaController: SCHEMA_CONTROLLER })
for (const path of new Set(paths.map((path) => path.split('?')[0]!))) {
  app.get(path, (request, reply) => {
    const answer = answerOf(answers, request.url)!
    const headers = headersOf.get(answer)!
    if (request.headers['if-none-match'] === answer.etag) return reply.code(304).headers(headers.notModified).header('x-request-id', randomUUID()).send()
    return reply.headers(headers.ok).header('x-request-id', randomUUID()).send(answer.body)
  })
}
await app.listen({ port: Number(port), host: '127.0.0.1' })

function pairs (flat: readonly string[]): Array<[string, string]> {
  return Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!])
}
