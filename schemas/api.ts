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

/** GET /api/status/ with STATUS_KEYS=reference: the inventory service's own keys. */
export const ReferenceStatus = Type.Object({
  'django-version': Type.String(),
  'installed-apps': Versions,
  'netbox-version': Type.String(),
  'netbox-full-version': Type.String(),
  plugins: Versions,
  'python-version': Type.String(),
  'rq-workers-running': Type.Integer({ minimum: 0 }),
}, { additionalProperties: false })

/**
 * One item of GET /api/extras/object-types/, and GET /api/extras/object-types/<id>/: the
 * reference's component of this name, as its OpenAPI document declares it.
 */
export const ObjectType = Type.Object({
  id: Type.Integer({ readOnly: true }),
  url: Type.String({ format: 'uri', readOnly: true }),
  display: Type.String({ readOnly: true }),
  app_label: Type.String({ maxLength: 100 }),
  model: Type.String({ title: 'Python model class name', maxLength: 100 }),
}, { $id: 'ObjectType' })

/** As the reference declares them: not required, though every page has both. */
const Link = (example: string) => Type.Optional(Type.Union([Type.String({ format: 'uri', example }), Type.Null()]))

/** GET /api/extras/object-types/: the reference's paginated list of ObjectType. */
export const ObjectTypePage = Type.Object({
  count: Type.Integer({ example: 123 }),
  next: Link('http://api.example.org/accounts/?offset=400&limit=100'),
  previous: Link('http://api.example.org/accounts/?offset=200&limit=100'),
  results: Type.Array(Type.Ref(ObjectType)),
}, { $id: 'PaginatedObjectTypeList' })

/** The schemas that routes name by `$ref` (their `$id`): the OpenAPI document's components. */
export const SHARED_SCHEMAS = [ObjectType, ObjectTypePage]

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

/** GET /api/schema/: the OpenAPI document, as the reference declares it. */
export const OpenApiDocument = Type.Record(Type.String(), Type.Unknown())

export type Status = Static<typeof Status>
export type ObjectType = Static<typeof ObjectType>
export type ObjectTypePage = Static<typeof ObjectTypePage>
