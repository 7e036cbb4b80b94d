import type { Test } from 'tap'
import { pino } from 'pino'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { buildApp } from '../lib/app.ts'
import { Catalog } from '../lib/catalog.ts'
import { loadConfig } from '../lib/config.ts'
import { loadProfile } from '../lib/profile.ts'
import { Served } from '../lib/served.ts'
import { ApiTokens } from '../lib/tokens.ts'
import type { Profile } from '../schemas/profile.ts'

export const DEFAULT_PROFILE: Profile = loadProfile(loadConfig({}).profile)

/** An app on the given environment (and profile), closed when the test ends. */
export async function build (t: Test, env: NodeJS.ProcessEnv = {}, profile: Profile = DEFAULT_PROFILE): Promise<FastifyInstance> {
  const config = loadConfig(env)
  const app = await buildApp({
    config,
    served: new Served(new Catalog(profile)),
    ...(config.apiTokensFile !== undefined && { tokens: new ApiTokens(config.apiTokensFile) }),
    logger: pino({ level: 'silent' }),
  })
  t.teardown(() => app.close())
  return app
}

/** GET with the Host a client would send to the examples of the spec. */
export function get (app: FastifyInstance, url: string, headers: InjectOptions['headers'] = {}) {
  return app.inject({ method: 'GET', url, headers: { host: 'inventory.test', ...headers } })
}

export const BASE = 'http://inventory.test'
export const LIST = `${BASE}/api/extras/object-types/`

/** Headers every JSON answer on an API path carries. */
export const API_HEADERS = { 'content-type': 'application/json', vary: 'Accept', allow: 'GET, HEAD, OPTIONS' }

/** Asserts that a value is valid against a TypeBox schema, listing every error when not. */
export function assertSchema (t: Test, schema: TSchema, value: unknown, message = 'matches the schema'): void {
  t.same([...Value.Errors(schema, value)].map((error) => `${error.path}: ${error.message}`), [], message)
}
