import type { FastifyInstance } from 'fastify'
import { Status } from '../../schemas/api.ts'
import type { Catalog } from '../catalog.ts'
import { addEndpoint, type ApiGuards } from './endpoint.ts'

export function statusRoutes (app: FastifyInstance, guards: ApiGuards, catalog: Catalog): void {
  addEndpoint(app, guards, {
    url: '/api/status/',
    name: 'Status',
    schemas: { 200: Status },
    description: "A lightweight read-only endpoint for conveying the service's current operational status.",
    render: () => catalog.statusBody,
  })
}
