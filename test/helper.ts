import type { Test } from 'tap'
import type { AddressInfo } from 'node:net'
import { pino, type Logger } from 'pino'
import type { FastifyInstance, FastifyPluginCallback, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { FAULT_PATHS, faultsPlugin } from '../lib/api/faults.ts'
import { ApiTokens } from '../lib/tokens.ts'
import { loadConfig } from '../lib/config.ts'
import { Faults } from '../lib/faults/faults.ts'
import { Catalog } from '../lib/inventory/catalog.ts'
import { DEFAULT_PROFILE_FILE, loadProfile } from '../lib/inventory/profile.ts'
import { Served } from '../lib/inventory/served.ts'
import { Metrics } from '../lib/metrics.ts'
import { Replays } from '../lib/replay/replays.ts'
import { Service } from '../lib/service.ts'
import { SHARED_SCHEMAS } from '../schemas/api.ts'
import type { Profile } from '../schemas/profile.ts'
import { checkAnswer } from './contract.ts'

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

/** The service as the entry point wires it (tokens, metrics) for this environment and profile, closed when the test ends. */
export async function build (t: Test, { env = {}, profile = DEFAULT_PROFILE, logger = pino({ level: 'silent' }), listen = false, plugins = [] }: BuildOptions = {}): Promise<Built> {
  const config = loadConfig(env)
  const served = new Served(new Catalog(profile))
  const faults = config.faults === undefined ? undefined : new Faults(config.faults, FAULT_PATHS)
  const replays = config.accessLog ? undefined : new Replays(served, config.cacheBytes, config.trustProxy !== undefined, faults)
  const metrics = config.metrics ? new Metrics(served, replays) : undefined
  const service = new Service({
    config,
    served,
    ...(replays !== undefined && { replays }),
    tokens: new ApiTokens(config.apiTokensFile, config.loginRequired),
    ...(metrics !== undefined && { metrics }),
    logger,
    plugins: faults === undefined ? plugins : [...plugins, faultsPlugin({ faults, metrics, statusKeys: config.statusKeys })],
  })
  t.teardown(() => service.close())
  const { app } = service
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
