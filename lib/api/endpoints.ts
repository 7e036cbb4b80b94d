import type { TSchema } from '@sinclair/typebox'
import * as Type from '@sinclair/typebox'
import type { Body } from '../answer/answer.ts'
import { ApiRoot, Description, Detail, FieldErrors, ObjectType, ObjectTypePage, OpenApiDocument, Status } from '../../schemas/api.ts'
import type { Catalog } from '../inventory/catalog.ts'
import type { ItemsJson } from '../inventory/items-json.ts'
import { filterOf } from '../reference/filters.ts'
import { orderedObject, toJson } from '../reference/json.ts'
import { ordered, orderingOf } from '../reference/ordering.ts'
import { pageLinks, pageRange, pageWindow, type PageSizes } from '../reference/pagination.ts'
import { parseInteger, type QueryParams } from '../reference/query.ts'
import { errors } from './errors.ts'
import { openApiDocument, type Parameter } from './openapi.ts'

/**
 * The API, declared once: every endpoint's path, what its OPTIONS answer says, the body of
 * each status its GET can get, and its renderer. Route registration (routes.ts), the
 * trailing-slash redirects, the OpenAPI document and the test suite's check of every body
 * all read this table; adding an endpoint is adding a row.
 */

/** What a renderer may depend on: nothing else, since its answer is cached by Host and URL. */
export interface RenderContext {
  /** Scheme and host (or PUBLIC_URL) that absolute URLs start with. */
  readonly base: string
  /** The path as requested (a `.json` suffix included): links lead back to it. */
  readonly path: string
  readonly query: QueryParams
  /** The path's parameters, by the names in its template. */
  readonly params: Readonly<Record<string, string | undefined>>
  /** What an item's url has after its id: `/`, or `.json` for a suffixed request, then the request's `format` if any. */
  readonly itemTail: string
  readonly catalog: Catalog
  readonly sizes: PageSizes
}

/** One status of a GET: its body's schema (none for a 304) and what it means. */
export interface Response {
  readonly schema?: TSchema
  readonly description: string
}

export interface Endpoint {
  /** The route template, trailing slash included (`:name` for a parameter). */
  readonly path: string
  /** Also served with a `.json` format suffix in place of the trailing slash (with or without one after it). */
  readonly formatSuffix?: true
  /** What the OPTIONS answer calls it. */
  readonly name: string
  readonly description: string
  /** For the OpenAPI document. */
  readonly operationId: string
  readonly summary: string
  /** Parameters beyond `format`, which every endpoint takes. */
  readonly parameters: readonly Parameter[]
  /** The statuses of its own; SHARED_RESPONSES has the rest. */
  readonly responses: { readonly 200: Response } & Readonly<Partial<Record<400 | 404, Response>>>
  /** The body of a 200 to GET and HEAD, or a thrown error of the catalogue (errors.ts). */
  readonly render: (context: RenderContext) => Body
}

/** What every endpoint's GET may answer besides its own statuses. */
export const SHARED_RESPONSES: Readonly<Record<304 | 400 | 403 | 404, Response>> = {
  304: { description: 'If-None-Match names the current tag: the same headers, no body.' },
  400: { schema: Detail, description: 'A Host that ALLOWED_HOSTS refuses.' },
  403: { schema: Detail, description: 'With LOGIN_REQUIRED: no token, or not a known one.' },
  404: { schema: Detail, description: 'An unknown `format` (or format suffix).' },
}

/** OPTIONS answers this on every endpoint; any other method a 405 (after the same checks as GET). */
export const OPTIONS_RESPONSE: Response = { schema: Description, description: 'What the endpoint is.' }
const ERROR_RESPONSE: Response = { schema: Detail, description: 'An error.' }

/** The response an endpoint declares for this method and status; undefined if it declares none. */
export function declaredResponse (endpoint: Endpoint, method: string, status: number): Response | undefined {
  if (method === 'GET' || method === 'HEAD') {
    return (endpoint.responses as Record<number, Response>)[status] ?? (SHARED_RESPONSES as Record<number, Response>)[status]
  }
  if (method === 'OPTIONS' && status === 200) return OPTIONS_RESPONSE
  return status >= 400 && status < 500 ? ERROR_RESPONSE : undefined
}

const API_ROOT_PATH = '/api/'
const EXTRAS_PATH = '/api/extras/'
const STATUS_PATH = '/api/status/'
const OBJECT_TYPES_PATH = '/api/extras/object-types/'

/** The reference's filter set for object types: one value each (the last), AND-ed. */
const FILTERS: readonly Parameter[] = [
  { name: 'id', description: 'Only this id: a decimal number, truncated to an integer (`5.9` is 5); at most 1e50.', schema: { type: 'string' } },
  { name: 'app_label', description: 'Only this app label, exactly.', schema: { type: 'string' } },
  { name: 'model', description: 'Only this model, exactly.', schema: { type: 'string' } },
  { name: 'q', description: 'Only types whose app label or model contains this, in any case.', schema: { type: 'string' } },
]
const OBJECT_TYPES_DESCRIPTION = 'Read-only list of object types.'

/** The JSON of the catalog's items as this request's urls make them. */
function itemsJson ({ catalog, base, itemTail }: RenderContext): ItemsJson {
  return catalog.itemsJson(base + OBJECT_TYPES_PATH, itemTail)
}
const PAGE_END = Buffer.from(']}')

/** An API root: what it leads to, by name, as absolute URLs. */
function renderRoot (base: string, children: ReadonlyArray<readonly [string, string]>): Body {
  return [Buffer.from(orderedObject(children.map(([name, path]) => [name, toJson(base + path)])))]
}

// One document per profile (its version is the service's), made when first asked for.
const documents = new WeakMap<Catalog, Buffer>()

export const ENDPOINTS: readonly Endpoint[] = [
  {
    path: API_ROOT_PATH,
    name: 'API Root',
    description: 'The root of the REST API: what this service serves of it.',
    operationId: 'api_root',
    summary: 'Links to what this service serves: extras and status.',
    parameters: [],
    responses: { 200: { schema: ApiRoot, description: 'Names and absolute URLs.' } },
    render: ({ base }) => renderRoot(base, [['extras', EXTRAS_PATH], ['status', STATUS_PATH]]),
  },
  {
    path: EXTRAS_PATH,
    name: 'Extras',
    description: 'Extras API root view.',
    operationId: 'extras_root',
    summary: 'Links to what this service serves of extras: object types.',
    parameters: [],
    responses: { 200: { schema: ApiRoot, description: 'Names and absolute URLs.' } },
    render: ({ base }) => renderRoot(base, [['object-types', OBJECT_TYPES_PATH]]),
  },
  {
    path: STATUS_PATH,
    name: 'Status',
    description: "A lightweight read-only endpoint for conveying the service's current operational status.",
    operationId: 'status_retrieve',
    summary: "The service's versions, installed apps, plugins and running workers.",
    parameters: [],
    responses: { 200: { schema: Status, description: 'The status.' } },
    render: ({ catalog }) => [catalog.statusBody],
  },
  {
    path: OBJECT_TYPES_PATH,
    formatSuffix: true,
    name: 'Object Type List',
    description: OBJECT_TYPES_DESCRIPTION,
    operationId: 'extras_object_types_list',
    summary: 'Object types by app label, then display; paginated by limit and offset.',
    parameters: [
      { name: 'limit', description: 'Page size: PAGINATE_COUNT (50) when absent or not a whole number, MAX_PAGE_SIZE (1000) for 0 or anything larger.', schema: { type: 'integer' } },
      { name: 'offset', description: 'Items to skip: 0 when absent, negative or not a whole number.', schema: { type: 'integer' } },
      ...FILTERS,
      { name: 'ordering', description: 'Replaces the order: `id`, `app_label`, `model`, each with an optional `-` for descending, comma-separated; unknown terms are dropped, ties keep the default order (app label, display).', schema: { type: 'string' } },
    ],
    responses: {
      200: { schema: ObjectTypePage, description: 'A page of object types with links to the next and previous pages.' },
      400: { schema: Type.Union([FieldErrors, Detail]), description: 'A Host that ALLOWED_HOSTS refuses, or a filter value that is not valid (`{"id":["Enter a number."]}`).' },
    },
    render (context) {
      const { base, path, query, catalog, sizes } = context
      const items = ordered(catalog.select(filterOf(query)), orderingOf(query))
      const window = pageWindow(query, sizes)
      const [start, end] = pageRange(window, items.length)
      const [next, previous] = pageLinks(base + path, query, window, items.length)
      const head = `{"count":${items.length},"next":${toJson(next)},"previous":${toJson(previous)},"results":[`
      return itemsJson(context).page(head, items, start, end, PAGE_END)
    },
  },
  {
    path: `${OBJECT_TYPES_PATH}:id/`,
    formatSuffix: true,
    name: 'Object Type Instance',
    description: OBJECT_TYPES_DESCRIPTION,
    operationId: 'extras_object_types_retrieve',
    summary: 'One object type, as the list shows it.',
    parameters: [{ name: 'id', in: 'path', required: true, description: 'The object type\'s id.', schema: { type: 'integer' } }, ...FILTERS],
    responses: {
      200: { schema: ObjectType, description: 'The object type.' },
      400: { schema: Type.Union([FieldErrors, Detail]), description: 'A Host that ALLOWED_HOSTS refuses, or a filter value that is not valid.' },
      404: { schema: Detail, description: 'An unknown `format`, no object type with this id, or one the filters leave out.' },
    },
    render (context) {
      // As in the reference, the list's filters apply here too, and are checked first.
      const filter = filterOf(context.query)
      // The reference looks the id up as an integer: text that is none is a plain 404.
      const id = parseInteger(context.params.id!)
      if (id === undefined) throw errors.notFound()
      const item = context.catalog.item(String(id))
      if (item === undefined || !context.catalog.matches(item, filter)) throw errors.noObjectType()
      return [itemsJson(context).item(item)]
    },
  },
  {
    path: '/api/schema/',
    name: 'Schema',
    description: 'The OpenAPI 3.1 document of this API.',
    operationId: 'schema_retrieve',
    summary: 'This document.',
    parameters: [],
    responses: { 200: { schema: OpenApiDocument, description: 'The OpenAPI document.' } },
    render ({ catalog }) {
      let document = documents.get(catalog)
      if (document === undefined) {
        document = openApiDocument(ENDPOINTS, catalog.profile.status['service-version'])
        documents.set(catalog, document)
      }
      return [document]
    },
  },
]
