import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv } from 'ajv'
import t from 'tap'
import YAML from 'yaml'
import { API_HEADERS, build, get, inject } from '../helpers/build.ts'

/**
 * The reference's own OpenAPI document (from its 4.2 release; these paths are the same up to
 * 4.3.7), cut to the paths this service serves: what a client generated for them is made from.
 */
const REFERENCE = JSON.parse(readFileSync(new URL('../fixtures/reference-openapi.json', import.meta.url), 'utf8'))

type Schema = Record<string, unknown>
interface Operation {
  operationId: string
  tags: string[]
  security: unknown[]
  parameters?: Array<{ name: string, in: string, schema: Schema, required?: boolean }>
  responses: Record<string, { description: string, content?: Record<string, { schema: Schema }> }>
}
interface Document {
  openapi: string
  info: { title: string, version: string }
  paths: Record<string, { get: Operation }>
  components: { schemas: Record<string, Schema>, securitySchemes: Record<string, Schema> }
}

/** A schema with its `required` as a set: the order a generator reads it in makes no difference. */
function unordered (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(unordered)
  if (typeof schema !== 'object' || schema === null) return schema
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'required' ? [...value as string[]].sort() : unordered(value)]))
}

/** What a generated client reads of a parameter: where it goes, its name, its type; by name. */
const parameters = (operation: Operation) =>
  Object.fromEntries((operation.parameters ?? []).map(({ name, in: where, schema }) => [name, { in: where, schema }]))

t.test('GET /api/schema/ is the OpenAPI 3.0.3 document, in YAML; ?format=json, the same in JSON', async (t) => {
  const { app } = await build(t)
  const yaml = await get(app, '/api/schema/')
  t.equal(yaml.statusCode, 200)
  t.match(yaml.headers, { ...API_HEADERS, 'content-type': 'application/vnd.oai.openapi; charset=utf-8' })
  const json = await get(app, '/api/schema/?format=json')
  t.match(json.headers, { ...API_HEADERS, 'content-type': 'application/vnd.oai.openapi+json' })
  const document: Document = json.json()
  t.same(YAML.parse(yaml.body), document, 'the same document')
  t.same((await get(app, '/api/schema/?format=yaml')).body, yaml.body)
  t.same(await new Validator().validate(document as unknown as Record<string, unknown>), { valid: true }, 'a valid OpenAPI document')
  t.equal(document.openapi, '3.0.3')
  t.same(document.info, { title: 'Inventory status API', version: '4.3.7 (4.3)', description: 'The read-only status and object-type API of the inventory service.' },
    "this service, at the profile's version, written as the reference writes it")
  for (const format of ['api', 'xml']) {
    t.same([(await get(app, `/api/schema/?format=${format}`)).statusCode], [404], `format=${format}: no such renderer`)
  }
  t.equal((await get(app, '/api/schema')).headers.location, 'http://inventory.test/api/schema/', 'redirected like the other API paths')
  const options = await inject(app, { method: 'OPTIONS', url: '/api/schema/', headers: { host: 'inventory.test' } })
  t.equal(options.body, '{"name":"Schema","description":"The OpenAPI 3.0.3 document of this API: YAML, or JSON with ?format=json.","renders":["application/json"],"parses":["application/json"]}')
})

t.test('for the paths it serves, the document is the reference\'s: operations, tags, parameters, components, security', async (t) => {
  const { app } = await build(t)
  const document: Document = (await get(app, '/api/schema/?format=json')).json()
  const reference = REFERENCE as Document
  t.same(Object.keys(document.paths).sort(), Object.keys(reference.paths).sort(), 'no roots, OPTIONS or .json suffixes: the reference leaves them out')
  for (const [path, { get: theirs }] of Object.entries(reference.paths)) {
    const ours = document.paths[path]!.get
    t.same(Object.keys(document.paths[path]!), ['get'], `${path}: GET only`)
    t.same([ours.operationId, ours.tags, ours.security], [theirs.operationId, theirs.tags, theirs.security], `${path}: operationId, tags, security`)
    t.same(parameters(ours), parameters(theirs), `${path}: parameters`)
    t.same(Object.keys(ours.responses), ['200', '304', '400', '403', '404'], `${path}: the reference's 200, and what this service answers besides`)
  }
  for (const path of ['/api/extras/object-types/', '/api/extras/object-types/{id}/']) {
    t.same(document.paths[path]!.get.responses[200]!.content, reference.paths[path]!.get.responses[200]!.content, `${path}: the 200 is the reference's component`)
  }
  t.same(unordered(document.components.schemas), unordered(reference.components.schemas), 'ObjectType and PaginatedObjectTypeList, readOnly fields included')
  t.same(document.components.securitySchemes, reference.components.securitySchemes)
  t.same(Object.keys(document.paths['/api/schema/']!.get.responses[200]!.content!), ['application/vnd.oai.openapi', 'application/vnd.oai.openapi+json'])
  const status = document.paths['/api/status/']!.get.responses[200]!.content!['application/json']!.schema
  t.same(Object.keys(status.properties as object), ['framework-version', 'installed-apps', 'plugins', 'rq-workers-running', 'runtime-version', 'service-version'],
    "the status: the specification's keys, where the reference says only `object`")
  t.same(document.paths['/api/status/']!.get.responses[304], { description: 'If-None-Match names the current tag: the same headers, no body.' })
})

t.test('real answers validate against the schemas the document declares', async (t) => {
  const { app } = await build(t)
  const document: Document = (await get(app, '/api/schema/?format=json')).json()
  // OpenAPI 3.0's dialect: ajv reads `nullable` as it means there.
  const ajv = new Ajv({ strict: false })
  ajv.addFormat('uri', (value: string) => URL.canParse(value))
  for (const [name, schema] of Object.entries(document.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`)
  const validator = (path: string, status: string) => {
    const schema = document.paths[path]!.get.responses[status]!.content!['application/json']!.schema
    return schema.$ref === undefined ? ajv.compile(schema) : ajv.getSchema(schema.$ref as string)!
  }
  const cases: Array<[string, string, string]> = [
    ['/api/status/', '200', '/api/status/'],
    ['/api/extras/object-types/', '200', '/api/extras/object-types/?limit=3&offset=5&format=api'],
    ['/api/extras/object-types/', '200', '/api/extras/object-types/?q=zzz'],
    ['/api/extras/object-types/', '400', '/api/extras/object-types/?id=x'],
    ['/api/extras/object-types/{id}/', '200', '/api/extras/object-types/7/'],
    ['/api/extras/object-types/{id}/', '404', '/api/extras/object-types/99999/'],
    ['/api/status/', '404', '/api/status/?format=xml'],
  ]
  for (const [path, status, url] of cases) {
    const res = await get(app, url)
    t.equal(String(res.statusCode), status, url)
    const validate = validator(path, status)
    t.ok(validate(res.json()), `${url}: ${JSON.stringify(validate.errors)}`)
  }
  const tokens = join(t.testdir(), 'tokens')
  writeFileSync(tokens, 'a-token\n')
  const { app: locked } = await build(t, { env: { LOGIN_REQUIRED: 'true', API_TOKENS_FILE: tokens } })
  t.ok(validator('/api/status/', '403')((await get(locked, '/api/status/')).json()), 'the 403 of LOGIN_REQUIRED')
})
