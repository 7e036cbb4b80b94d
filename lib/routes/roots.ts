import type { FastifyPluginCallback } from 'fastify'
import { ApiRoot } from '../../schemas/api.ts'
import { orderedObject, toJson } from '../reference/json.ts'
import { API_FORMATS, endpointRoutes, responses, type Endpoint, type EndpointOptions, type Rendered } from './endpoint.ts'
import { API_PATHS } from '../paths.ts'

/** An API root: what it leads to, by name, as absolute URLs. */
function renderRoot (base: string, children: ReadonlyArray<readonly [string, string]>): Rendered {
  return { body: Buffer.from(orderedObject(children.map(([name, path]) => [name, toJson(base + path)]))) }
}

export const ROOTS: readonly Endpoint[] = [
  {
    path: API_PATHS.root,
    formats: API_FORMATS,
    name: 'API Root',
    description: 'The root of the REST API: what this service serves of it.',
    schema: () => ({ hide: true, response: responses(ApiRoot) }),
    render: ({ base }) => renderRoot(base, [['extras', API_PATHS.extras], ['status', API_PATHS.status]]),
  },
  {
    path: API_PATHS.extras,
    formats: API_FORMATS,
    name: 'Extras',
    description: 'Extras API root view.',
    schema: () => ({ hide: true, response: responses(ApiRoot) }),
    render: ({ base }) => renderRoot(base, [['object-types', API_PATHS.objectTypes]]),
  },
]

/** GET /api/ and /api/extras/: the roots of the API, as the reference's browsable API leads from them. */
const roots: FastifyPluginCallback<EndpointOptions> = (app, options, done) => {
  for (const endpoint of ROOTS) endpointRoutes(app, endpoint, options)
  done()
}

export default roots
