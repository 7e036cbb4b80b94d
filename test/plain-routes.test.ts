import t from 'tap'
import fc from 'fast-check'
import FindMyWay from 'find-my-way'
import { isDeepStrictEqual } from 'node:util'
import { ENDPOINTS } from '../lib/api/endpoints.ts'
import { PlainRoutes } from '../lib/api/plain-routes.ts'
import { routeUrls } from '../lib/api/renderings.ts'
import { ROUTER_OPTIONS } from '../lib/service.ts'
import { query } from './requests.ts'

/**
 * The fast path finds a miss's route with PlainRoutes, Fastify with find-my-way: where the first
 * finds a route, the second must find the same, with the same params and query, or the two
 * would answer one URL differently. Here find-my-way is set up as Fastify sets it up.
 */
const templates = ENDPOINTS.flatMap(routeUrls)
const plain = new PlainRoutes(templates.map((url) => [url, url] as const), ROUTER_OPTIONS.querystringParser)
const fastify = FindMyWay(ROUTER_OPTIONS)
for (const url of templates) fastify.on('GET', url, () => {}, { url })

/** What each router finds for a URL, in one form; undefined when it finds nothing. */
const ours = (url: string) => {
  const found = plain.find(url)
  return found && { route: found.route, params: { ...found.params }, query: [...found.query] }
}
const theirs = (url: string) => {
  const found = fastify.find('GET', url)
  return found === null ? undefined : { route: (found.store as { url: string }).url, params: { ...found.params }, query: [...found.searchParams as unknown as Map<string, string[]>] }
}

t.test('a plain path is found as Fastify\'s router finds it: the route, its params and the query', async (t) => {
  const id = '1-_~+!'.padEnd(100, '7')
  const urls = [
    '/api/', '/api/extras/', '/api/status/', '/api/schema/', '/api/extras/object-types/', '/api/extras/object-types.json', '/api/extras/object-types.json/',
    '/api/extras/object-types/7/', '/api/extras/object-types/7.json', '/api/extras/object-types/7.json/', `/api/extras/object-types/${id}.${id}/`,
    '/api/extras/object-types/?limit=50&offset=50', '/api/status/?', '/api/status/?format=json#top', '/api/extras/object-types/7/?q=a%20b&q=c;d',
  ]
  for (const url of urls) {
    t.not(ours(url), undefined, url)
    t.same(ours(url), theirs(url), url)
  }
  t.same(ours('/api/extras/object-types/7.json/?a=1'), { route: '/api/extras/object-types/:id.:format/', params: { id: '7', format: 'json' }, query: [['a', ['1']]] })
})

t.test('any other path is left to Fastify, whatever its router makes of it', async (t) => {
  const id = '7'.repeat(101)
  for (const [url, found] of [
    ['/api/extras/object-types/%37/', '/api/extras/object-types/:id/'],
    ['http://inventory.test/api/status/', '/api/status/'],
    ['/api/status/#x?y', '/api/status/'],
    ['/api/extras/object-types/7.5.json/', '/api/extras/object-types/:id.:format/'],
    ['/api/extras/object-types.json.api', '/api/extras/object-types.:format'],
    ['/api/extras/object-types//', '/api/extras/object-types/:id/'],
    ['/api/extras/object-types/.json', '/api/extras/object-types/:id.:format'],
    [`/api/extras/object-types/${id}/`, undefined],
    ['/api/status', undefined],
    ['/API/status/', undefined],
    ['//api/status/', undefined],
    ['', undefined],
  ] as const) {
    t.equal(ours(url), undefined, url)
    t.equal(theirs(url)?.route, found, `${url}: Fastify's router`)
  }
})

t.test('on any URL, what is found is what Fastify\'s router finds', async (t) => {
  // A template's params filled in with anything, and now and then a piece added around it.
  const text = fc.string({ unit: fc.constantFrom('7', '1', 'j', 's', 'Z', '.', '/', '%', '%2E', '%37', '#', '?', '+', ';', '~', '-', '*', ':', ' '), maxLength: 6 })
  const long = fc.constantFrom('', '7'.repeat(100), '7'.repeat(101))
  const url = fc.tuple(fc.constantFrom(...templates), text, text, long, fc.constantFrom('', '/', '.', 'x', '//'), fc.constantFrom('', '/', 'http://inventory.test', '/api'))
    .map(([template, id, format, padding, after, before]) => before + template.replace(':id', id + padding).replace(':format', format) + after)
  let found = 0
  fc.assert(fc.property(url, fc.option(query), (path, query) => {
    const url = query === null ? path : `${path}?${query}`
    const plainFound = ours(url)
    if (plainFound === undefined) return
    found++
    if (!isDeepStrictEqual(plainFound, theirs(url))) throw new Error(`${url}: ${JSON.stringify(plainFound)}, Fastify's router ${JSON.stringify(theirs(url))}`)
  }), { numRuns: 20_000 })
  t.ok(found > 500, `${found} of them found, as Fastify's router finds them`)
})
