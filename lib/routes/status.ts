import type { FastifyInstance } from 'fastify'
import { Status } from '../../schemas/api.ts'
import { addEndpoint, type ApiGuards } from './endpoint.ts'

export function statusRoutes (app: FastifyInstance, guards: ApiGuards): void {
  addEndpoint(app, guards, {
    url: '/api/status/',
    name: 'Status',
    schemas: { 200: Status },
    description: "A lightweight read-only endpoint for conveying the service's current operational status.",
    render: (_request, _formatSuffix, catalog) => catalog.statusBody,
  })
}
