import type { FastifyPluginCallback } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import type { Served } from '../inventory/served.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** What is served: the profile's catalog, swapped whole on a reload. */
    served: Served
  }
}

/** Decorates the app with what it serves, which the headers, the routes and the faults read. */
const served: FastifyPluginCallback<{ served: Served }> = (app, options, done) => {
  app.decorate('served', options.served)
  done()
}

export default fastifyPlugin(served, { name: 'served' })
