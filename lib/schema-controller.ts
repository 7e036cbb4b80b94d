/**
 * Fastify's schema compilers, which build nothing: routes declare their schemas for the OpenAPI
 * document and the tests, and check their input by the reference's rules, which read what a
 * schema would refuse (`limit=abc` falls back to the page size, `/abc/` is a 404). Every body is
 * text or a Buffer, which Fastify never serializes. So ajv and fast-json-stringify are never loaded
 * (docs/architecture.md, Schemas).
 */
import type { FastifyServerOptions } from 'fastify'

const accept = () => true
const stringify = (value: unknown) => JSON.stringify(value)

// Typed by Fastify for ajv's functions, which these stand in for.
export const SCHEMA_CONTROLLER = {
  compilersFactory: {
    buildValidator: () => () => accept,
    buildSerializer: () => () => stringify,
  },
} as unknown as NonNullable<FastifyServerOptions['schemaController']>
