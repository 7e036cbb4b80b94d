import * as Type from '@sinclair/typebox'
import type { FastifyPluginCallback } from 'fastify'
import { OpenApiDocument } from '../../schemas/api.ts'
import { endpointRoutes, responses, SECURITY, type Endpoint, type EndpointOptions } from './endpoint.ts'
import { API_PATHS } from '../paths.ts'

export const SCHEMA: Endpoint = {
  path: API_PATHS.schema,
  formats: new Set(['', 'json', 'yaml']),
  ownContentType: true,
  name: 'Schema',
  description: 'The OpenAPI 3.0.3 document of this API: YAML, or JSON with ?format=json.',
  schema: () => ({
    operationId: 'schema_retrieve',
    description: 'The OpenAPI 3.0.3 document of this API, made from its routes. YAML by default, JSON with `?format=json`.\n\n- YAML: application/vnd.oai.openapi\n- JSON: application/vnd.oai.openapi+json',
    tags: ['schema'],
    querystring: Type.Object({
      format: Type.Optional(Type.Unsafe<'json' | 'yaml'>({ type: 'string', enum: ['json', 'yaml'] })),
      // The reference's document in another language; this one is in English whatever is asked.
      lang: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['cs', 'da', 'de', 'en', 'es', 'fr', 'it', 'ja', 'nl', 'pl', 'pt', 'ru', 'tr', 'uk', 'zh'] })),
    }),
    security: [...SECURITY, {}],
    response: responses({
      content: {
        'application/vnd.oai.openapi': { schema: OpenApiDocument },
        'application/vnd.oai.openapi+json': { schema: OpenApiDocument },
      },
    }),
  }),
  async render ({ app, catalog, format }) {
    const document = await app.openApi(catalog)
    return format === 'json'
      ? { body: document.json, contentType: 'application/vnd.oai.openapi+json' }
      : { body: document.yaml, contentType: 'application/vnd.oai.openapi; charset=utf-8' }
  },
}

/** GET /api/schema/: the OpenAPI document of the routes, made by the openapi plugin. */
const schema: FastifyPluginCallback<EndpointOptions> = (app, options, done) => {
  endpointRoutes(app, SCHEMA, options)
  done()
}

export default schema
