import type { FastifyInstance } from 'fastify'
import { Status } from '../../schemas/api.ts'
import type { Catalog } from '../catalog.ts'
import { addEndpoint, type CachedAnswers } from './endpoint.ts'

export function statusRoutes (app: FastifyInstance, answers: CachedAnswers, catalog: Catalog): void {
  addEndpoint(app, answers, {
    url: '/api/status/',
    name: 'Status',
    schemas: { 200: Status },
    description: "A lightweight read-only endpoint for conveying the service's current operational status.",
    render: () => catalog.statusBody,
  })
}
