/** Where each route is: the one list of the service's paths (`:name` for a parameter). */
export const API_PATHS = {
  root: '/api/',
  extras: '/api/extras/',
  status: '/api/status/',
  objectTypes: '/api/extras/object-types/',
  objectType: '/api/extras/object-types/:id/',
  schema: '/api/schema/',
} as const

/** The probes' paths, outside /api/. */
export const PROBE_PATHS = ['/healthz', '/readyz'] as const

export const METRICS_PATH = '/metrics'

/**
 * A route's path as the OpenAPI document writes it: `/api/extras/object-types/{id}/`; the routes
 * of a format suffix (`/api/extras/object-types/:id.:format/`) are their path's.
 */
export const templateOf = (url: string): string => url.replace(/\.:format\/?$/, '/').replace(/:(\w+)/g, '{$1}')

/** The paths a faults rule may name, as the OpenAPI document writes them: every endpoint's, and the probes'. */
export const FAULT_PATHS: readonly string[] = [...Object.values(API_PATHS).map(templateOf), ...PROBE_PATHS]
