import type { ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { errors, sendJson } from '../api/errors.ts'
import { JSON_HEADERS } from '../api/headers.ts'
import type { Lifecycle } from '../process/lifecycle.ts'
import { toJson } from '../reference/json.ts'

/** A probe's answer, its headers in their order in the same answer sent through Fastify (headers.ts). */
interface ProbeAnswer { readonly status: number, readonly body: Buffer, readonly headers: readonly string[] }

function probeAnswer (status: number, body: object): ProbeAnswer {
  const bytes = Buffer.from(toJson(body))
  return { status, body: bytes, headers: ['content-type', JSON_HEADERS['content-type'], 'vary', JSON_HEADERS.vary, 'content-length', String(bytes.length)] }
}

const ALIVE = probeAnswer(200, { status: 'ok' })
const READY = probeAnswer(200, { status: 'ready' })
const DRAINING = probeAnswer(503, { status: 'draining' })

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
  readonly #answers: ReadonlyMap<string, () => ProbeAnswer>

  constructor (lifecycle: Lifecycle) {
    this.#answers = new Map<ProbePath, () => ProbeAnswer>([
      ['/healthz', () => ALIVE],
      ['/readyz', () => lifecycle.ready ? READY : DRAINING],
    ])
  }

  /** Answers a GET or HEAD of exactly a probe's path, with its status; undefined for any other URL. */
  answer (url: string, response: ServerResponse): number | undefined {
    const probe = this.#answers.get(url)
    if (probe === undefined) return undefined
    const { status, body, headers } = probe()
    response.writeHead(status, headers as string[])
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
          const { status, body } = probe()
          sendJson(reply, status, body)
        },
      })
      app.otherMethods.add(url, { anyHost: true, allow: 'GET, HEAD' }, (request) => {
        throw errors.methodNotAllowed(request.method)
      })
    }
  }
}
