import type { TSchema } from '@sinclair/typebox'
import { COMPONENTS } from '../../schemas/api.ts'
import { toJson } from '../reference/json.ts'
import { declaredResponse, OPTIONS_RESPONSE, SHARED_RESPONSES, type Endpoint, type Response } from './endpoints.ts'

/** An OpenAPI parameter; `in` is `query` unless said. */
export interface Parameter {
  readonly name: string
  readonly in?: 'path'
  readonly required?: true
  readonly description: string
  readonly schema: object
}

const FORMAT: Parameter = {
  name: 'format',
  description: 'The renderer: `json` or `api` (the same JSON here); it is carried into item urls and links. Any other value: 404.',
  schema: { type: 'string', enum: ['json', 'api'] },
}

/** A TypeBox schema as plain JSON Schema (TypeBox marks its own with symbols, which JSON leaves out). */
const plain = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema))
const NAMES = new Map<TSchema, string>(Object.entries(COMPONENTS).map(([name, schema]) => [schema, name]))

function response ({ schema, description }: Response) {
  if (schema === undefined) return { description }
  const name = NAMES.get(schema)
  return { description, content: { 'application/json': { schema: name === undefined ? plain(schema) : { $ref: `#/components/schemas/${name}` } } } }
}

/**
 * The OpenAPI 3.1 document of the API, generated from the table of endpoints and the same
 * TypeBox schemas the test suite checks every answer against (OpenAPI 3.1 speaks JSON Schema).
 */
export function openApiDocument (endpoints: readonly Endpoint[], serviceVersion: string): Buffer {
  const operation = (endpoint: Endpoint) => {
    const statuses = new Set([200, ...Object.keys(SHARED_RESPONSES).map(Number), ...Object.keys(endpoint.responses).map(Number)])
    return {
      get: {
        operationId: endpoint.operationId,
        summary: endpoint.summary,
        parameters: [...endpoint.parameters, FORMAT].map((parameter) => parameter.in === 'path' ? parameter : { in: 'query', style: 'form', explode: true, ...parameter }),
        responses: Object.fromEntries([...statuses].sort((a, b) => a - b).map((status) => [status, response(declaredResponse(endpoint, 'GET', status)!)])),
      },
      options: {
        operationId: `${endpoint.operationId}_options`,
        summary: `What ${endpoint.path} is.`,
        responses: { 200: response(OPTIONS_RESPONSE) },
      },
    }
  }
  return Buffer.from(toJson({
    openapi: '3.1.0',
    info: {
      title: 'Inventory status API',
      version: serviceVersion,
      description: 'The read-only status and object-type API of the inventory service.',
    },
    paths: Object.fromEntries(endpoints.flatMap((endpoint) => {
      const path = endpoint.path.replace(/:(\w+)/g, '{$1}')
      const plainPath: Array<[string, unknown]> = [[path, operation(endpoint)]]
      if (endpoint.formatSuffix !== true) return plainPath
      // The same GET with the reference's format suffix, as `format=json` (a trailing slash after it is optional).
      const { get } = operation(endpoint)
      return [...plainPath, [`${path.slice(0, -1)}.json`, { get: { ...get, operationId: `${endpoint.operationId}_json`, summary: `${endpoint.summary} With the .json format suffix: item urls end in .json.` } }]]
    })),
    components: {
      schemas: Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, plain(schema)])),
      securitySchemes: {
        tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <key>` or `Bearer <key>`, when LOGIN_REQUIRED is on.' },
      },
    },
    // Open unless LOGIN_REQUIRED: either a token or nothing.
    security: [{ tokenAuth: [] }, {}],
  }))
}
