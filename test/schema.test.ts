import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { API_HEADERS, build, get, inject } from './helper.ts'

interface Document {
  info: { version: string }
  paths: Record<string, { get: { responses: Record<string, { content: { 'application/json': { schema: { $ref?: string } } } }> } }>
  components: { schemas: Record<string, object> }
}

t.test('GET /api/schema/ is a valid OpenAPI 3.1 document of the API', async (t) => {
  const { app } = await build(t)
  const res = await get(app, '/api/schema/')
  t.equal(res.statusCode, 200)
  t.match(res.headers, API_HEADERS)
  const document: Document = res.json()
  const result = await new Validator().validate(document as unknown as Record<string, unknown>)
  t.same(result, { valid: true }, 'the OpenAPI 3.1 schema accepts it')
  t.equal(document.info.version, '4.3.7', "the profile's service version")
  t.same(Object.keys(document.paths), ['/api/', '/api/extras/', '/api/status/', '/api/extras/object-types/', '/api/extras/object-types.json',
    '/api/extras/object-types/{id}/', '/api/extras/object-types/{id}.json', '/api/schema/'])
  const list = document.paths['/api/extras/object-types/']!.get as unknown as { parameters: Array<{ name: string }> }
  t.same(list.parameters.map((parameter) => parameter.name), ['limit', 'offset', 'id', 'app_label', 'model', 'q', 'ordering', 'format'])
  for (const [path, item] of Object.entries(document.paths)) {
    t.same(Object.keys(item.get.responses), ['200', '304', '400', '403', '404'], `every status a GET of ${path} can get`)
  }
  t.same(document.paths['/api/status/']!.get.responses['304'], { description: 'If-None-Match names the current tag: the same headers, no body.' })
  t.equal((await get(app, '/api/schema')).headers.location, 'http://inventory.test/api/schema/', 'redirected like the other API paths')
  const options = await inject(app, { method: 'OPTIONS', url: '/api/schema/', headers: { host: 'inventory.test' } })
  t.equal(options.body, '{"name":"Schema","description":"The OpenAPI 3.1 document of this API.","renders":["application/json"],"parses":["application/json"]}')
})

t.test('real answers validate against the schemas the document declares', async (t) => {
  const { app } = await build(t)
  const document: Document = (await get(app, '/api/schema/')).json()
  const ajv = new Ajv2020({ strict: false })
  ajv.addFormat('uri', (value: string) => URL.canParse(value))
  for (const [name, schema] of Object.entries(document.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`)
  const validator = (path: string, status: string) => {
    const schema = document.paths[path]!.get.responses[status]!.content['application/json'].schema
    return schema.$ref === undefined ? ajv.compile(schema) : ajv.getSchema(schema.$ref)!
  }
  const cases: Array<[string, string, string]> = [
    ['/api/status/', '200', '/api/status/'],
    ['/api/extras/object-types/', '200', '/api/extras/object-types/?limit=3&offset=5&format=api'],
    ['/api/extras/object-types/', '200', '/api/extras/object-types/?q=zzz'],
    ['/api/extras/object-types/', '400', '/api/extras/object-types/?id=x'],
    ['/api/extras/object-types/{id}/', '200', '/api/extras/object-types/7/'],
    ['/api/extras/object-types/{id}/', '404', '/api/extras/object-types/99999/'],
    ['/api/status/', '404', '/api/status/?format=xml'],
    ['/api/schema/', '200', '/api/schema/'],
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
