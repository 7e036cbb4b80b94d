import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { RouteOptions } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { pino } from 'pino'
import YAML from 'yaml'
import { loadConfig } from '../../lib/config.ts'
import { pathEnd } from '../../lib/http/target.ts'
import type { StatusKeys } from '../../lib/inventory/catalog.ts'
import { pathPattern } from '../../lib/routes/endpoint.ts'
import { API_PATHS } from '../../lib/paths.ts'
import { STATUS } from '../../lib/routes/status.ts'
import { createService, load } from '../../lib/service.ts'
import { Detail, SHARED_SCHEMAS } from '../../schemas/api.ts'

/** The routes as Fastify registers them, with their schemas: each answer is checked against its route's. */
async function registeredRoutes (): Promise<RouteOptions[]> {
  const routes: RouteOptions[] = []
  const recorder = fastifyPlugin((app, _options, done) => {
    app.addHook('onRoute', (route) => { routes.push(route) })
    done()
  })
  const config = loadConfig({ METRICS: 'true' })
  const { app } = await createService(config, await load(config), pino({ level: 'silent' }), [recorder])
  await app.ready()
  await app.close()
  return routes
}

/** The routes as Fastify registered them, each with its methods and a matcher of its concrete paths. */
export const ROUTES = (await registeredRoutes()).map((route) => ({ ...route, methods: [route.method].flat(), pattern: pathPattern(route.url) }))
/** What any path may answer that no route declares: redirects, 404s, a refused Host, requests Node refuses. */
const UNROUTED_STATUSES = new Set([301, 400, 404, 408, 417, 431])
/** What Node answers before any route sees the request (see clientErrorHandler in lib/plugins/errors.ts). */
const REFUSED_BY_NODE = new Set([408, 417, 431])

type Declared = TSchema | { type: 'null' } | { content: Record<string, { schema: TSchema }> }

/** The schema a route declares for this answer (as its `response` says it); undefined for one without a body (a 304). */
function declaredSchema (method: string, path: string, status: number, statusKeys: StatusKeys = 'neutral'): TSchema | undefined {
  const routed = method === 'HEAD' ? 'GET' : method
  const route = ROUTES.find(({ methods, pattern }) => methods.includes(routed) && pattern.test(path))
  const responses = (route?.url === API_PATHS.status && routed === 'GET' ? STATUS.schema(statusKeys) : route?.schema)?.response as Record<number, Declared> | undefined
  if (route !== undefined && responses !== undefined && !REFUSED_BY_NODE.has(status)) {
    const response = responses[status]
    if (response === undefined) throw new Error(`${method} ${path}: ${route.url} declares no ${status}`)
    if ('content' in response) return Object.values(response.content as Record<string, { schema: TSchema }>)[0]!.schema
    return (response as { type?: string }).type === 'null' ? undefined : response as TSchema
  }
  if (UNROUTED_STATUSES.has(status)) return Detail
  throw new Error(`${method} ${path}: nothing declares a ${status}`)
}

/**
 * Checks an answer against the schema its route declares for its status: every request the
 * tests send goes through here (see helper.ts and http.ts), first answers and replays alike, so
 * a body that breaks its schema fails the suite. Throws, naming the request and every problem.
 */
export function checkAnswer (method: string, url: string, status: number, contentType: string | undefined, body: string): void {
  const path = url.slice(0, pathEnd(url))
  if (path === '/metrics' && status === 200) return
  const schema = declaredSchema(method, path, status)
  if (schema === undefined || method === 'HEAD') {
    if (body !== '') throw new Error(`${method} ${url} -> ${status}: a body where none is declared`)
    return
  }
  // The document is YAML unless asked for as JSON; every other body is JSON.
  const document = path === '/api/schema/' && status === 200 && method === 'GET'
  const yaml = document && contentType === 'application/vnd.oai.openapi; charset=utf-8'
  const json = document ? 'application/vnd.oai.openapi+json' : 'application/json'
  if (!yaml && contentType !== json) throw new Error(`${method} ${url} -> ${status}: Content-Type ${contentType}`)
  let value: unknown
  try {
    value = yaml ? YAML.parse(body) : JSON.parse(body)
  } catch {
    throw new Error(`${method} ${url} -> ${status}: not ${yaml ? 'YAML' : 'JSON'}: ${body.slice(0, 200)}`)
  }
  // The status under either naming of its keys (STATUS_KEYS), whichever the service was started with.
  const problems = [...Value.Errors(schema, SHARED_SCHEMAS, value)].map((error) => `${error.path}: ${error.message}`)
  if (problems.length > 0 && path === '/api/status/' && status === 200 && Value.Check(declaredSchema(method, path, status, 'reference')!, value)) return
  if (problems.length > 0) throw new Error(`${method} ${url} -> ${status}: the body breaks its declared schema: ${problems.join('; ')}`)
}
