import type { FastifyPluginCallback } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { http } from '../builtins.ts'

/** Every method Node parses except CONNECT, which never reaches a request handler: each is routed, bodyless. */
const ROUTED_METHODS = http.METHODS.filter((method) => method !== 'CONNECT')
/** The methods a route answers with a 405: all but GET, HEAD and OPTIONS. */
export const OTHER_METHODS = ROUTED_METHODS.filter((method) => !['GET', 'HEAD', 'OPTIONS'].includes(method))

/**
 * Declares every routed method to Fastify before any route names one. The API is read-only and
 * never reads a body: each is declared bodyless, so that Fastify never parses one (a body cannot
 * turn a 405 into a 400 or a 415).
 */
const methods: FastifyPluginCallback = (app, _options, done) => {
  for (const method of ROUTED_METHODS) app.addHttpMethod(method, { hasBody: false, overrideExisting: true })
  done()
}

export default fastifyPlugin(methods, { name: 'methods' })
