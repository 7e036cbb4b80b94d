import type { FastifyPluginCallback, RouteOptions } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { SHARED_SCHEMAS } from '../../schemas/api.ts'
import type { Catalog } from '../inventory/catalog.ts'
import type { Documents } from '../openapi.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of the app's routes for a catalog (its version), made when first asked for. */
    openApi: (catalog: Catalog) => Promise<Documents>
  }
}

/**
 * Adds the schemas routes refer to by `$id` (the document's components), and collects the routes
 * the OpenAPI document describes, as they are registered (their schemas, not hidden); the document
 * is made from them by openapi.ts, loaded when /api/schema/ is first asked for, once per catalog.
 */
const openApi: FastifyPluginCallback = (app, _options, done) => {
  for (const shared of SHARED_SCHEMAS) app.addSchema(shared)
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    if (route.schema !== undefined && (route.schema as { hide?: boolean }).hide !== true && route.method !== 'HEAD') routes.push(route)
  })
  const documents = new WeakMap<Catalog, Promise<Documents>>()
  app.decorate('openApi', (catalog: Catalog) => {
    let document = documents.get(catalog)
    if (document === undefined) {
      document = import('../openapi.ts').then(({ openApiDocuments }) => openApiDocuments(routes, catalog.profile.status['service-version']))
      documents.set(catalog, document)
    }
    return document
  })
  done()
}

export default fastifyPlugin(openApi, { name: 'openapi' })
