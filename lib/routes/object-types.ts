import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { Detail, FieldErrors, ObjectType, ObjectTypePage } from '../../schemas/api.ts'
import { OBJECT_TYPES_PATH, renderItem, type Filter } from '../catalog.ts'
import { toJson } from '../json.ts'
import { pageLinks, pageRange, pageWindow, type PageSizes } from '../pagination.ts'
import { lastValue, parseInteger, type QueryParams } from '../query.ts'
import { addEndpoint, type ApiGuards } from './endpoint.ts'

const DESCRIPTION = 'Read-only list of object types.'

export function objectTypeRoutes (app: FastifyInstance, guards: ApiGuards, sizes: PageSizes): void {
  /** The filters the reference offers; a value that cannot match anything is a 400 there. */
  function filterOf (params: QueryParams): Filter {
    const given = (name: string) => {
      const values = params.get(name)?.filter((value) => value !== '')
      return values === undefined || values.length === 0 ? undefined : values
    }
    const ids = given('id')?.map((text) => {
      const id = parseInteger(text)
      if (id === undefined) throw Object.assign(app.httpErrors.badRequest('Enter a number.'), { field: 'id' })
      return String(id)
    })
    const appLabels = given('app_label')
    const models = given('model')
    const q = lastValue(params, 'q')
    return {
      ...(ids !== undefined && { ids: new Set(ids) }),
      ...(appLabels !== undefined && { appLabels: new Set(appLabels) }),
      ...(models !== undefined && { models: new Set(models) }),
      ...(q !== undefined && q.trim() !== '' && { q: q.toUpperCase() }),
    }
  }

  addEndpoint(app, guards, {
    url: OBJECT_TYPES_PATH,
    name: 'Object Type List',
    description: DESCRIPTION,
    schemas: { 200: ObjectTypePage, '4xx': Type.Union([Detail, FieldErrors]) },
    render (request, formatSuffix, catalog) {
      const params = request.query
      const items = catalog.select(filterOf(params))
      const window = pageWindow(params, sizes)
      const [start, end] = pageRange(window, items.length)
      const base = request.baseUrl
      const [next, previous] = pageLinks(base + OBJECT_TYPES_PATH, params, window, items.length)
      let body = `{"count":${items.length},"next":${toJson(next)},"previous":${toJson(previous)},"results":[`
      for (let i = start; i < end; i++) {
        body += (i === start ? '' : ',') + renderItem(items[i]!, base, formatSuffix)
      }
      return Buffer.from(body + ']}')
    },
  })

  addEndpoint<{ id: string }>(app, guards, {
    url: `${OBJECT_TYPES_PATH}:id/`,
    name: 'Object Type Instance',
    description: DESCRIPTION,
    schemas: { 200: ObjectType },
    render (request, formatSuffix, catalog) {
      // The reference looks the id up as an integer: text that is none is a plain 404.
      const id = parseInteger(request.params.id)
      if (id === undefined) throw app.httpErrors.notFound('Not found.')
      const item = catalog.item(String(id))
      if (item === undefined) throw app.httpErrors.notFound('No ObjectType matches the given query.')
      return Buffer.from(renderItem(item, request.baseUrl, formatSuffix))
    },
  })
}
