import type { FastifyInstance } from 'fastify'
import { OpenApiDocument } from '../../schemas/api.ts'
import type { Catalog } from '../catalog.ts'
import { openApiDocument } from '../openapi.ts'
import type { PageSizes } from '../pagination.ts'
import { addEndpoint, type ApiGuards } from './endpoint.ts'

/** GET /api/schema/, where the inventory service serves its OpenAPI document too. */
export function schemaRoutes (app: FastifyInstance, guards: ApiGuards, sizes: PageSizes): void {
  // One document per profile (its version is the service's), made when first asked for.
  const documents = new WeakMap<Catalog, Buffer>()
  addEndpoint(app, guards, {
    url: '/api/schema/',
    name: 'Schema',
    description: 'The OpenAPI 3.1 document of this API.',
    schemas: { 200: OpenApiDocument },
    render (_request, _formatSuffix, catalog) {
      let document = documents.get(catalog)
      if (document === undefined) {
        document = openApiDocument(catalog.profile.status['service-version'], sizes)
        documents.set(catalog, document)
      }
      return document
    },
  })
}
