import type { FastifyPluginCallback } from 'fastify'
import { ReferenceStatus, Status } from '../../schemas/api.ts'
import { API_FORMATS, endpointRoutes, responses, SECURITY, type Endpoint, type EndpointOptions } from './endpoint.ts'
import { API_PATHS } from '../paths.ts'

const DESCRIPTION = "A lightweight read-only endpoint for conveying the service's current operational status."

export const STATUS: Endpoint = {
  path: API_PATHS.status,
  formats: API_FORMATS,
  name: 'Status',
  description: DESCRIPTION,
  schema: (statusKeys) => ({
    operationId: 'status_retrieve',
    description: DESCRIPTION,
    tags: ['status'],
    security: SECURITY,
    response: responses(statusKeys === 'reference' ? ReferenceStatus : Status),
  }),
  // Rendered once per catalog (inventory/catalog.ts).
  render: ({ catalog, statusKeys }) => ({ body: catalog.statusBodies[statusKeys] }),
}

/** GET /api/status/: the profile's status. */
const status: FastifyPluginCallback<EndpointOptions> = (app, options, done) => {
  endpointRoutes(app, STATUS, options)
  done()
}

export default status
