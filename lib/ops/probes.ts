import type { ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { errors, sendJson } from '../api/errors.ts'
import { JSON_HEADERS } from '../api/headers.ts'
import type { Lifecycle } from '../process/lifecycle.ts'
import { toJson } from '../reference/json.ts'

const ALIVE = Buffer.from(toJson({ status: 'ok' }))
const READY = Buffer.from(toJson({ status: 'ready' }))
const DRAINING = Buffer.from(toJson({ status: 'draining' }))

/** The probes' paths; every answer's body is a schemas/api.ts Probe. */
export const PROBE_PATHS = ['/healthz', '/readyz'] as const
type ProbePath = typeof PROBE_PATHS[number]

/**
 * Liveness and readiness for orchestrators and load balancers, outside /api/: probes
 * address the process by IP, so these answer any Host. A probe's GET or HEAD is answered
 * before Fastify (fast-path.ts), so that probing a new replica does not build it; Fastify's
 * routes answer the same for what only its router reads as a probe's path (`/readyz?x`).
 */
export class Probes {
  readonly #answers: ReadonlyMap<string, () => readonly [number, Buffer]>

  constructor (lifecycle: Lifecycle) {
    this.#answers = new Map<ProbePath, () => readonly [number, Buffer]>([
      ['/healthz', () => [200, ALIVE]],
      ['/readyz', () => lifecycle.ready ? [200, READY] : [503, DRAINING]],
    ])
  }

  /** Answers a GET or HEAD of exactly a probe's path, with its status; undefined for any other URL. */
  answer (url: string, response: ServerResponse): number | undefined {
    const probe = this.#answers.get(url)
    if (probe === undefined) return undefined
    const [status, body] = probe()
    // The headers, in their order, of the same answer sent through Fastify (headers.ts).
    response.writeHead(status, ['content-type', JSON_HEADERS['content-type'], 'vary', JSON_HEADERS.vary, 'content-length', String(body.length)])
    response.end(body)
    return status
  }

  /** The probes' routes in Fastify, and their 405 to other methods. */
  install (app: FastifyInstance): void {
    for (const [url, probe] of this.#answers) {
      app.route({
        method: ['GET', 'HEAD'],
        url,
        config: { anyHost: true },
        handler (_request, reply) {
          const [status, body] = probe()
          sendJson(reply, status, body)
        },
      })
      app.otherMethods.add(url, { anyHost: true, allow: 'GET, HEAD' }, (request) => {
        throw errors.methodNotAllowed(request.method)
      })
    }
  }
}
