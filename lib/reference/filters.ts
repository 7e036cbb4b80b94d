import { errors, MESSAGES } from '../api/errors.ts'
import type { Filter } from '../inventory/catalog.ts'
import { lastValue, parseInteger, type QueryParams } from './query.ts'

/** The object-type filters the reference offers; a value that cannot match anything is a 400 there. */
export function filterOf (params: QueryParams): Filter {
  const given = (name: string) => {
    const values = params.get(name)?.filter((value) => value !== '')
    return values === undefined || values.length === 0 ? undefined : values
  }
  const ids = given('id')?.map((text) => {
    const id = parseInteger(text)
    if (id === undefined) throw errors.fields({ id: [MESSAGES.notANumber] })
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
