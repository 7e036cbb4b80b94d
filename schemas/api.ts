import { FormatRegistry, type Static } from '@sinclair/typebox'
import * as Type from '@sinclair/typebox'

// TypeBox checks only the formats it is told about; links and item urls are absolute URLs.
FormatRegistry.Set('uri', (value) => URL.canParse(value))

const Versions = Type.Record(Type.String(), Type.String())

/** GET /api/status/ */
export const Status = Type.Object({
  'framework-version': Type.String(),
  'installed-apps': Versions,
  plugins: Versions,
  'rq-workers-running': Type.Integer({ minimum: 0 }),
  'runtime-version': Type.String(),
  'service-version': Type.String(),
}, { additionalProperties: false })

/** One item of GET /api/extras/object-types/, and GET /api/extras/object-types/<id>/ */
export const ObjectType = Type.Object({
  id: Type.Integer(),
  url: Type.String({ format: 'uri' }),
  display: Type.String(),
  app_label: Type.String(),
  model: Type.String(),
}, { additionalProperties: false })

const Link = Type.Union([Type.String({ format: 'uri' }), Type.Null()])

/** GET /api/extras/object-types/ */
export const ObjectTypePage = Type.Object({
  count: Type.Integer({ minimum: 0 }),
  next: Link,
  previous: Link,
  results: Type.Array(ObjectType),
}, { additionalProperties: false })

/** GET /api/ and /api/extras/: what the root leads to, by name. */
export const ApiRoot = Type.Record(Type.String(), Type.String({ format: 'uri' }))

/** Most errors: 404, 405, 400 for a bad Host. */
export const Detail = Type.Object({ detail: Type.String() }, { additionalProperties: false })

/** 400 for a filter value that does not parse, keyed by the filter. */
export const FieldErrors = Type.Record(Type.String(), Type.Array(Type.String()))

/** The body of an OPTIONS answer. */
export const Description = Type.Object({
  name: Type.String(),
  description: Type.String(),
  renders: Type.Array(Type.String()),
  parses: Type.Array(Type.String()),
}, { additionalProperties: false })

/** GET /healthz (the process is alive) and GET /readyz (it takes traffic, or is draining: 503). */
export const Probe = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('ready'), Type.Literal('draining')]),
}, { additionalProperties: false })

/** GET /api/schema/: the OpenAPI document, described as far as clients rely on it. */
export const OpenApiDocument = Type.Object({
  openapi: Type.String(),
  info: Type.Object({ title: Type.String(), version: Type.String() }),
  paths: Type.Record(Type.String(), Type.Object({})),
})

/** The schemas the OpenAPI document names (#/components/schemas/<name>). */
export const COMPONENTS = { ApiRoot, Status, ObjectType, ObjectTypePage, Detail, FieldErrors, Description }

export type Status = Static<typeof Status>
export type ObjectType = Static<typeof ObjectType>
export type ObjectTypePage = Static<typeof ObjectTypePage>
