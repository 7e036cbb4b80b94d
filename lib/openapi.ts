import type { TSchema } from '@sinclair/typebox'
import { Description, Detail, FieldErrors, ObjectType, ObjectTypePage, OpenApiDocument, Status } from '../schemas/api.ts'
import { toJson } from './json.ts'
import type { PageSizes } from './pagination.ts'

/** A TypeBox schema as plain JSON Schema (TypeBox marks its own with symbols, which JSON leaves out). */
const plain = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema))

const json = (schema: TSchema | { $ref: string }, description: string) =>
  ({ description, content: { 'application/json': { schema: '$ref' in schema ? schema : plain(schema) } } })
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

const FORMAT = {
  name: 'format',
  in: 'query',
  description: 'The renderer: `json` or `api` (the same JSON here); it is carried into item urls and links. Any other value: 404.',
  schema: { type: 'string', enum: ['json', 'api'] },
}
const ERRORS = {
  403: json(ref('Detail'), 'With LOGIN_REQUIRED: no token, or not a known one.'),
  404: json(ref('Detail'), 'An unknown `format` (or id).'),
}

/**
 * The OpenAPI 3.1 document of the API, generated from the same TypeBox schemas that the
 * routes declare and the tests check answers against (OpenAPI 3.1 speaks JSON Schema).
 */
export function openApiDocument (serviceVersion: string, sizes: PageSizes): Buffer {
  const filter = (name: string, description: string, schema: object = { type: 'string' }) => ({
    name,
    in: 'query',
    description,
    schema,
    style: 'form',
    explode: true,
  })
  return Buffer.from(toJson({
    openapi: '3.1.0',
    info: {
      title: 'Inventory status API',
      version: serviceVersion,
      description: 'The read-only status and object-type API of the inventory service.',
    },
    paths: {
      '/api/status/': {
        get: {
          operationId: 'status_retrieve',
          summary: "The service's versions, installed apps, plugins and running workers.",
          parameters: [FORMAT],
          responses: { 200: json(ref('Status'), 'The status.'), ...ERRORS },
        },
      },
      '/api/extras/object-types/': {
        get: {
          operationId: 'extras_object_types_list',
          summary: 'Object types by app label, then display; paginated by limit and offset.',
          parameters: [
            filter('limit', `Page size: ${sizes.paginateCount} when absent or not a whole number, ${sizes.maxPageSize} for 0 or anything larger.`, { type: 'integer' }),
            filter('offset', 'Items to skip: 0 when absent, negative or not a whole number.', { type: 'integer' }),
            FORMAT,
            filter('id', 'Only these ids (repeatable).', { type: 'array', items: { type: 'integer' } }),
            filter('app_label', 'Only these app labels (repeatable).', { type: 'array', items: { type: 'string' } }),
            filter('model', 'Only these models (repeatable).', { type: 'array', items: { type: 'string' } }),
            filter('q', 'Only types whose app label or model contains this, in any case.'),
          ],
          responses: {
            200: json(ref('ObjectTypePage'), 'A page of object types with links to the next and previous pages.'),
            400: json(ref('FieldErrors'), 'A filter value that is not valid, e.g. `{"id":["Enter a number."]}`.'),
            ...ERRORS,
          },
        },
      },
      '/api/extras/object-types/{id}/': {
        get: {
          operationId: 'extras_object_types_retrieve',
          summary: 'One object type.',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }, FORMAT],
          responses: { 200: json(ref('ObjectType'), 'The object type.'), ...ERRORS },
        },
      },
      '/api/schema/': {
        get: {
          operationId: 'schema_retrieve',
          summary: 'This document.',
          parameters: [FORMAT],
          responses: { 200: json(OpenApiDocument, 'The OpenAPI document.'), ...ERRORS },
        },
      },
    },
    components: {
      schemas: Object.fromEntries(Object.entries({ Status, ObjectType, ObjectTypePage, Detail, FieldErrors, Description })
        .map(([name, schema]) => [name, plain(schema)])),
      securitySchemes: {
        tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <key>` or `Bearer <key>`, when LOGIN_REQUIRED is on.' },
      },
    },
    // Open unless LOGIN_REQUIRED: either a token or nothing.
    security: [{ tokenAuth: [] }, {}],
  }))
}
