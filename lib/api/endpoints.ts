import type { TSchema } from '@sinclair/typebox'
import * as Type from '@sinclair/typebox'
import type { FastifySchema } from 'fastify'
import { ApiRoot, Description, Detail, FieldErrors, ObjectType, ObjectTypePage, OpenApiDocument, ReferenceStatus, Status } from '../../schemas/api.ts'
import type { Catalog, StatusKeys } from '../inventory/catalog.ts'
import type { ItemsJson } from '../inventory/items-json.ts'
import { filterOf } from '../reference/filters.ts'
import { orderedObject, toJson } from '../reference/json.ts'
import { ordered, orderingOf } from '../reference/ordering.ts'
import { pageLinks, pageRange, pageWindow, type PageSizes } from '../reference/pagination.ts'
import { encodeQuery, parseInteger, type QueryParams } from '../reference/query.ts'
import { errors } from './errors.ts'

/**
 * The API, declared once: every endpoint's path, its schemas (the OpenAPI document is made
 * from them, and the tests check every answer against them), what its OPTIONS answer says,
 * and its renderer. Route registration (routes.ts) reads this table; adding an endpoint is
 * adding a row.
 */

/** What a renderer may depend on: nothing else, since its answer is replayed by Host and URL. */
export interface RenderContext {
  /** Scheme and host (or PUBLIC_URL) that absolute URLs start with. */
  readonly base: string
  /** The path as requested (a `.json` suffix included): links lead back to it. */
  readonly path: string
  readonly query: QueryParams
  /** The path's parameters, by the names in its template. */
  readonly params: Readonly<Record<string, string | undefined>>
  /** The query's `format` (its last value), if any. */
  readonly format: string | undefined
  readonly catalog: Catalog
  readonly sizes: PageSizes
  readonly statusKeys: StatusKeys
  /** The OpenAPI document of the routes for this catalog (its version), made when first asked for (openapi.ts). */
  readonly documented: (catalog: Catalog) => Promise<Documents>
}

/** The OpenAPI document in the two forms /api/schema/ serves. */
export interface Documents {
  readonly json: Buffer
  readonly yaml: Buffer
}

/** A 200's body and, when it is not JSON, its Content-Type. */
export interface Rendered {
  readonly body: Buffer | string
  readonly contentType?: string
}

export type EndpointSchema = FastifySchema & { operationId?: string, tags?: string[], description?: string, hide?: true, security?: unknown }

export interface Endpoint {
  /** The route template, trailing slash included (`:name` for a parameter). */
  readonly path: string
  /** Also served with a `.json` format suffix in place of the trailing slash (with or without one after it). */
  readonly formatSuffix?: true
  /** The values of `format` it answers (an empty one is none); any other is a 404. */
  readonly formats: ReadonlySet<string>
  /** Its 200 is not JSON: the renderer says what it is (Rendered.contentType). */
  readonly ownContentType?: true
  /** What the OPTIONS answer calls it. */
  readonly name: string
  readonly description: string
  /**
   * Its GET's schemas, with what the OpenAPI document says of it (`hide` leaves it out), for the
   * status's key names served.
   */
  readonly schema: (statusKeys: StatusKeys) => EndpointSchema
  /** The 200 to GET and HEAD, or a thrown error of the catalogue (errors.ts). */
  readonly render: (context: RenderContext) => Rendered | Promise<Rendered>
}

/** `format` selects a renderer in the reference: `api` (the browsable one, whose body here is the same JSON) and `json`. */
const API_FORMATS: ReadonlySet<string> = new Set(['', 'api', 'json'])

/** What an endpoint's checks refuse with, whatever the method (routes.ts). */
const REFUSED = { 400: Detail, 403: Detail, 404: Detail } as const

/** OPTIONS describes every endpoint; the other methods but GET and HEAD are a 405. Neither is in the document, as in the reference's. */
export const OPTIONS_SCHEMA = { hide: true, response: { 200: Description, ...REFUSED } } as const
export const OTHER_METHODS_SCHEMA = { hide: true, response: { ...REFUSED, 405: Detail } } as const

/** A schema with what it means for one status (the document's response description). */
const described = (schema: TSchema, description: string): TSchema => ({ ...schema, description })

/** What any GET of an endpoint may answer besides its 200: the 304, a refused Host, token or `format`. */
function responses (ok: TSchema | { content: Record<string, { schema: TSchema }> }, more: Partial<Record<400 | 404, TSchema>> = {}) {
  return {
    200: ok,
    304: { type: 'null', description: 'If-None-Match names the current tag: the same headers, no body.' },
    400: more[400] ?? described(Detail, 'A Host that ALLOWED_HOSTS refuses.'),
    403: described(Detail, 'A token that is not known, or (with LOGIN_REQUIRED) none.'),
    404: more[404] ?? described(Detail, 'An unknown `format` (or format suffix).'),
  }
}

/** As the reference's document says: a session or a token. Here a token (there are no sessions), required with LOGIN_REQUIRED. */
const SECURITY = [{ cookieAuth: [] }, { tokenAuth: [] }]

const API_ROOT_PATH = '/api/'
const EXTRAS_PATH = '/api/extras/'
const STATUS_PATH = '/api/status/'
const OBJECT_TYPES_PATH = '/api/extras/object-types/'

const OBJECT_TYPES_DESCRIPTION = 'Read-only list of object types.'
const FILTER_REFUSED = Type.Union([FieldErrors, Detail], { description: 'A Host that ALLOWED_HOSTS refuses, or a filter value that is not valid (`{"id":["Enter a number."]}`).' })

// Item urls carry the request's `format`: what follows an item's id, by that value.
const ITEM_TAILS = new Map([['', '/?format='], ['api', '/?format=api'], ['json', '/?format=json']])

/**
 * What follows an item's id in its url (for a `format` its endpoint answers). A path's `.json`
 * suffix wins over the `format` parameter, which item urls keep all the same (as the
 * reference's reverse() keeps it).
 */
function itemTailOf (suffix: string | undefined, format: string | undefined): string {
  if (suffix === undefined) return format === undefined ? '/' : ITEM_TAILS.get(format)!
  return format === undefined ? '.json' : '.json?' + encodeQuery(new Map([['format', [format]]]))
}

/** The JSON of the catalog's items as this request's urls make them. */
function itemsJson ({ catalog, base, params, format }: RenderContext): ItemsJson {
  return catalog.itemsJson(base + OBJECT_TYPES_PATH, itemTailOf(params.format, format))
}
const PAGE_END = ']}'

/** An API root: what it leads to, by name, as absolute URLs. */
function renderRoot (base: string, children: ReadonlyArray<readonly [string, string]>): Rendered {
  return { body: Buffer.from(orderedObject(children.map(([name, path]) => [name, toJson(base + path)]))) }
}

export const ENDPOINTS: readonly Endpoint[] = [
  {
    path: API_ROOT_PATH,
    formats: API_FORMATS,
    name: 'API Root',
    description: 'The root of the REST API: what this service serves of it.',
    schema: () => ({ hide: true, response: responses(ApiRoot) }),
    render: ({ base }) => renderRoot(base, [['extras', EXTRAS_PATH], ['status', STATUS_PATH]]),
  },
  {
    path: EXTRAS_PATH,
    formats: API_FORMATS,
    name: 'Extras',
    description: 'Extras API root view.',
    schema: () => ({ hide: true, response: responses(ApiRoot) }),
    render: ({ base }) => renderRoot(base, [['object-types', OBJECT_TYPES_PATH]]),
  },
  {
    path: STATUS_PATH,
    formats: API_FORMATS,
    name: 'Status',
    description: "A lightweight read-only endpoint for conveying the service's current operational status.",
    schema: (statusKeys) => ({
      operationId: 'status_retrieve',
      description: "A lightweight read-only endpoint for conveying the service's current operational status.",
      tags: ['status'],
      security: SECURITY,
      response: responses(statusKeys === 'reference' ? ReferenceStatus : Status),
    }),
    render: ({ catalog, statusKeys }) => ({ body: catalog.statusBodies[statusKeys] }),
  },
  {
    path: OBJECT_TYPES_PATH,
    formatSuffix: true,
    formats: API_FORMATS,
    name: 'Object Type List',
    description: OBJECT_TYPES_DESCRIPTION,
    schema: () => ({
      operationId: 'extras_object_types_list',
      description: 'Read-only list of ObjectTypes.',
      tags: ['extras'],
      // Read the reference's way, not validated: an unusable limit or offset falls back (pagination.ts).
      querystring: Type.Object({
        app_label: Type.Optional(Type.String()),
        id: Type.Optional(Type.Integer()),
        limit: Type.Optional(Type.Integer({ description: 'Number of results to return per page.' })),
        model: Type.Optional(Type.String()),
        offset: Type.Optional(Type.Integer({ description: 'The initial index from which to return the results.' })),
        ordering: Type.Optional(Type.String({ description: 'Which field to use when ordering the results.' })),
        q: Type.Optional(Type.String({ description: 'Search' })),
      }),
      security: SECURITY,
      response: responses(Type.Ref(ObjectTypePage), { 400: FILTER_REFUSED }),
    }),
    render (context) {
      const { base, path, query, catalog, sizes } = context
      const items = ordered(catalog.select(filterOf(query)), orderingOf(query))
      const window = pageWindow(query, sizes)
      const [start, end] = pageRange(window, items.length)
      const [next, previous] = pageLinks(base + path, query, window, items.length)
      const head = `{"count":${items.length},"next":${toJson(next)},"previous":${toJson(previous)},"results":[`
      return { body: itemsJson(context).page(head, items, start, end, PAGE_END) }
    },
  },
  {
    path: `${OBJECT_TYPES_PATH}:id/`,
    formatSuffix: true,
    formats: API_FORMATS,
    name: 'Object Type Instance',
    description: OBJECT_TYPES_DESCRIPTION,
    schema: () => ({
      operationId: 'extras_object_types_retrieve',
      description: 'Read-only list of ObjectTypes.',
      tags: ['extras'],
      // Text that is no integer is a plain 404, as in the reference (see render).
      params: Type.Object({ id: Type.Integer({ description: 'A unique integer value identifying this object type.' }) }),
      security: SECURITY,
      response: responses(Type.Ref(ObjectType), {
        400: FILTER_REFUSED,
        404: described(Detail, 'An unknown `format`, no object type with this id, or one the filters leave out.'),
      }),
    }),
    render (context) {
      // As in the reference, the list's filters apply here too, and are checked first.
      const filter = filterOf(context.query)
      // The reference looks the id up as an integer: text that is none is a plain 404.
      const id = parseInteger(context.params.id!)
      if (id === undefined) throw errors.notFound()
      const item = context.catalog.item(String(id))
      if (item === undefined || !context.catalog.matches(item, filter)) throw errors.noObjectType()
      return { body: itemsJson(context).item(item) }
    },
  },
  {
    path: '/api/schema/',
    formats: new Set(['', 'json', 'yaml']),
    ownContentType: true,
    name: 'Schema',
    description: 'The OpenAPI 3.0.3 document of this API: YAML, or JSON with ?format=json.',
    schema: () => ({
      operationId: 'schema_retrieve',
      description: 'The OpenAPI 3.0.3 document of this API, made from its routes. YAML by default, JSON with `?format=json`.\n\n- YAML: application/vnd.oai.openapi\n- JSON: application/vnd.oai.openapi+json',
      tags: ['schema'],
      querystring: Type.Object({
        format: Type.Optional(Type.Unsafe<'json' | 'yaml'>({ type: 'string', enum: ['json', 'yaml'] })),
        // The reference's document in another language; this one is in English whatever is asked.
        lang: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['cs', 'da', 'de', 'en', 'es', 'fr', 'it', 'ja', 'nl', 'pl', 'pt', 'ru', 'tr', 'uk', 'zh'] })),
      }),
      security: [...SECURITY, {}],
      response: responses({
        content: {
          'application/vnd.oai.openapi': { schema: OpenApiDocument },
          'application/vnd.oai.openapi+json': { schema: OpenApiDocument },
        },
      }),
    }),
    async render ({ catalog, format, documented }) {
      const document = await documented(catalog)
      return format === 'json'
        ? { body: document.json, contentType: 'application/vnd.oai.openapi+json' }
        : { body: document.yaml, contentType: 'application/vnd.oai.openapi; charset=utf-8' }
    },
  },
]
