import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyPluginCallback } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import type { Generation } from '../inventory/served.ts'
import type { Replays } from '../replay/replays.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The generation a route rendered its 200 from; null for any other answer (nothing to keep). */
    generation: Generation | null
  }
  interface FastifyContextConfig {
    /** false: the route's answers are never replayed, so that its hooks see every request (docs/architecture.md). */
    replay?: false
  }
}

/**
 * Offers each rendered 200 to the replays (replay/), with its headers as every earlier hook set
 * them. Registered after the other plugins, its onSend hook runs after theirs: what is kept is the
 * answer whole, which the front then sends again without asking Fastify (service.ts).
 */
const replay: FastifyPluginCallback<{ replays: Replays | undefined }> = (app, { replays }, done) => {
  app.decorateRequest('generation', null)
  if (replays !== undefined) {
    app.addHook('onSend', (request, reply, payload, next) => {
      const { generation } = request
      // Every rendered 200 is text or bytes; a plugin may have made it something else (a stream), which is not kept.
      if (generation !== null && reply.statusCode === 200 && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
        const { config, url } = request.routeOptions
        if (config.replay !== false) replays.keep(request.raw, generation, url!, () => reply.getHeaders() as OutgoingHttpHeaders, payload)
      }
      next(null, payload)
    })
  }
  done()
}

export default fastifyPlugin(replay, { name: 'replay' })
