import type { Test } from 'tap'
import type { AddressInfo } from 'node:net'
import { pino, type Logger } from 'pino'
import type { FastifyInstance, FastifyPluginCallback, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { loadConfig } from '../../lib/config.ts'
import { DEFAULT_PROFILE_FILE, loadProfile } from '../../lib/inventory/profile.ts'
import type { Metrics } from '../../lib/metrics.ts'
import type { Replays } from '../../lib/replay/replays.ts'
import type { Endpoint } from '../../lib/routes/endpoint.ts'
import { OBJECT_TYPE, OBJECT_TYPE_LIST } from '../../lib/routes/object-types.ts'
import { ROOTS } from '../../lib/routes/roots.ts'
import { SCHEMA } from '../../lib/routes/schema.ts'
import { STATUS } from '../../lib/routes/status.ts'
import { createService, load, type Service } from '../../lib/service.ts'
import { SHARED_SCHEMAS } from '../../schemas/api.ts'
import type { Profile } from '../../schemas/profile.ts'
import { checkAnswer } from './contract.ts'

/** Every endpoint the route modules declare. */
export const ENDPOINTS: readonly Endpoint[] = [...ROOTS, STATUS, OBJECT_TYPE_LIST, OBJECT_TYPE, SCHEMA]

/** The embedded default profile, as the service reads it. */
export const DEFAULT_PROFILE: Profile = loadProfile(DEFAULT_PROFILE_FILE)

export interface BuildOptions {
  env?: NodeJS.ProcessEnv
  profile?: Profile
  logger?: Logger
  /** Listen on a free port of 127.0.0.1 (replays need a real socket). */
  listen?: boolean
  /** Fastify plugins, registered before the routes. */
  plugins?: FastifyPluginCallback[]
}

export interface Built {
  /** The service's Fastify app (not ready until it first answers or listens). */
  app: FastifyInstance
  service: Service
  /** The answers kept to be replayed; none with ACCESS_LOG. */
  replays: Replays | undefined
  /** Set with METRICS=true. */
  metrics: Metrics | undefined
  /** Set with `listen`. */
  port: number
}

/** The service as `serve` builds it (service.ts) for this environment and profile, closed when the test ends. */
export async function build (t: Test, { env = {}, profile = DEFAULT_PROFILE, logger = pino({ level: 'silent' }), listen = false, plugins = [] }: BuildOptions = {}): Promise<Built> {
  const config = loadConfig(env)
  const service = await createService(config, await load(config, profile), logger, plugins)
  t.teardown(() => service.close())
  const { app, replays, metrics } = service
  if (!listen) return { app, service, replays, metrics, port: 0 }
  await service.listen(0, '127.0.0.1')
  return { app, service, replays, metrics, port: (service.server.address() as AddressInfo).port }
}

/** app.inject, with the answer checked against the schema its route declares for its status. */
export async function inject (app: FastifyInstance, options: InjectOptions): Promise<LightMyRequestResponse> {
  const res = await app.inject(options)
  // What the app receives: light-my-request parses the URL as a WHATWG URL, which resolves `..` (even as %2e%2e).
  const { pathname, search } = new URL(String(options.url ?? options.path), 'http://inventory.test')
  checkAnswer(options.method ?? 'GET', pathname + search, res.statusCode, res.headers['content-type'] as string | undefined, res.body)
  return res
}

/** GET with the Host a client would send to the examples of the spec. */
export function get (app: FastifyInstance, url: string, headers: InjectOptions['headers'] = {}) {
  return inject(app, { method: 'GET', url, headers: { host: 'inventory.test', ...headers } })
}

export const BASE = 'http://inventory.test'
export const LIST = `${BASE}/api/extras/object-types/`

/** Headers every JSON answer on an API path carries. */
export const API_HEADERS = { 'content-type': 'application/json', vary: 'Accept', allow: 'GET, HEAD, OPTIONS' }

/** Asserts that a value is valid against a TypeBox schema, listing every error when not. */
export function assertSchema (t: Test, schema: TSchema, value: unknown, message = 'matches the schema'): void {
  t.same([...Value.Errors(schema, SHARED_SCHEMAS, value)].map((error) => `${error.path}: ${error.message}`), [], message)
}
