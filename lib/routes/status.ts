import type { FastifyInstance } from 'fastify'
import { Status } from '../../schemas/api.ts'
import type { Catalog } from '../catalog.ts'
import { sendJson } from '../http.ts'
import { addEndpoint } from './endpoint.ts'

export function statusRoutes (app: FastifyInstance, catalog: Catalog): void {
  addEndpoint(app, {
    url: '/api/status/',
    name: 'Status',
    schemas: { 200: Status },
    description: "A lightweight read-only endpoint for conveying the service's current operational status.",
    get: (_request, reply) => sendJson(reply, 200, catalog.statusBody),
  })
}
