import swagger from '@fastify/swagger'
import Fastify, { type RouteOptions } from 'fastify'
import { SHARED_SCHEMAS } from '../schemas/api.ts'
import { apiVersionOf } from './inventory/catalog.ts'
import { SCHEMA_CONTROLLER } from './schema-controller.ts'

/** The OpenAPI document in the two forms /api/schema/ serves. */
export interface Documents {
  readonly json: Buffer
  readonly yaml: Buffer
}

/** As the reference's document declares them: a session cookie or a token, `Token <key>`. */
const SECURITY_SCHEMES = {
  cookieAuth: { type: 'apiKey', in: 'cookie', name: 'sessionid' },
  tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token-based authentication with required prefix "Token"' },
} as const

/**
 * The OpenAPI 3.0.3 document of the routes given (as the app registered them), made by
 * @fastify/swagger from their schemas, as JSON and as YAML. This module is loaded when the
 * document is first asked for: @fastify/swagger is then registered on an app of its own with
 * the same routes, which costs a replica nothing until then (docs/architecture.md, Schemas).
 */
export async function openApiDocuments (routes: readonly RouteOptions[], serviceVersion: string): Promise<Documents> {
  const app = Fastify({ schemaController: SCHEMA_CONTROLLER })
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Inventory status API',
        // As the reference writes it: `4.3.7 (4.3)`.
        version: `${serviceVersion} (${apiVersionOf(serviceVersion)})`,
        description: 'The read-only status and object-type API of the inventory service.',
      },
      // The reference says '' (this host); @fastify/swagger takes a URL, and / is the same.
      servers: [{ url: '/', description: 'Inventory status API' }],
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    // A shared schema is a component under its own `$id` (ObjectType), as in the reference's document.
    refResolver: { buildLocalReference: (json) => json.$id as string },
  })
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)
  for (const { method, url, schema, handler } of routes) app.route({ method, url, schema: schema!, handler })
  await app.ready()
  const documents = { json: Buffer.from(JSON.stringify(app.swagger())), yaml: Buffer.from(app.swagger({ yaml: true })) }
  await app.close()
  return documents
}
