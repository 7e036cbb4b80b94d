import t from 'tap'
import { ObjectType, ObjectTypePage } from '../../schemas/api.ts'
import type { Profile } from '../../schemas/profile.ts'
import { API_HEADERS, assertSchema, BASE, build, DEFAULT_PROFILE, get, LIST } from '../helpers/build.ts'
import { raw } from '../helpers/http.ts'

// The served order, worked out independently (Python: sorted by app_label, display.lower(), model).
const ORDER = [23, 5, 6, 24, 137, 138, 25, 26, 27, 28, 2, 143, 144, 145, 7, 16, 17, 18, 19, 20, 21, 136, 22, 29, 30,
  31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 146, 49, 50, 51, 52, 53, 149, 54, 55, 56, 57,
  58, 59, 60, 61, 62, 63, 139, 64, 65, 66, 1, 67, 68, 69, 135, 85, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 140, 141,
  99, 3, 100, 142, 150, 102, 103, 104, 70, 71, 72, 73, 74, 75, 76, 4, 77, 78, 79, 80, 81, 82, 83, 147, 148, 84, 155,
  156, 157, 158, 159, 160, 161, 162, 163, 168, 169, 164, 165, 166, 167, 170, 8, 9, 10, 11, 12, 13, 14, 15, 105, 106,
  107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 121, 119, 120, 122, 123, 124, 125, 126, 127, 128, 129,
  130, 131, 132, 133, 134]

interface Page { count: number, next: string | null, previous: string | null, results: Array<{ id: number }> }
const ids = (page: Page) => page.results.map((item) => item.id)

t.test('the first page: 50 items in the reference order, links with limit=50', async (t) => {
  const { app } = await build(t)
  const res = await get(app, '/api/extras/object-types/')
  t.equal(res.statusCode, 200)
  t.match(res.headers, API_HEADERS)
  const page = res.json()
  assertSchema(t, ObjectTypePage, page)
  t.same(Object.keys(page), ['count', 'next', 'previous', 'results'])
  t.equal(page.count, 163)
  t.equal(page.next, `${LIST}?limit=50&offset=50`)
  t.equal(page.previous, null)
  t.same(ids(page), ORDER.slice(0, 50))
  t.ok(res.body.startsWith(
    '{"count":163,"next":"http://inventory.test/api/extras/object-types/?limit=50&offset=50","previous":null,"results":[' +
    '{"id":23,"url":"http://inventory.test/api/extras/object-types/23/","display":"Account | token","app_label":"account","model":"usertoken"},' +
    '{"id":5,"url":"http://inventory.test/api/extras/object-types/5/","display":"Authentication and Authorization | group","app_label":"auth","model":"group"},'))
})

t.test('walking the pages with the spec examples', async (t) => {
  const { app } = await build(t)
  const at50 = (await get(app, '/api/extras/object-types/?limit=50&offset=50')).json()
  t.equal(at50.results.length, 50)
  t.equal(at50.next, `${LIST}?limit=50&offset=100`)
  t.equal(at50.previous, `${LIST}?limit=50`, 'the previous page starts at 0: no offset')
  t.same(ids(at50), ORDER.slice(50, 100))
  const at100 = (await get(app, '/api/extras/object-types/?limit=50&offset=100')).json()
  t.equal(at100.next, `${LIST}?limit=50&offset=150`)
  t.equal(at100.previous, `${LIST}?limit=50&offset=50`)
  t.same(ids(at100), ORDER.slice(100, 150))
  const at150 = (await get(app, '/api/extras/object-types/?offset=150')).json()
  t.equal(at150.results.length, 13, 'count minus offset')
  t.equal(at150.next, null)
  t.equal(at150.previous, `${LIST}?limit=50&offset=100`)
  t.same(ids(at150), ORDER.slice(150))

  const seen: number[] = []
  let next: string | null = `${LIST}?limit=17`
  for (let pages = 0; next !== null; pages++) {
    if (pages > 10) throw new Error(`still a next page after ${pages}: ${next}`)
    const page: Page = (await get(app, next.slice(BASE.length))).json()
    seen.push(...ids(page))
    next = page.next
  }
  t.same(seen, ORDER, 'following next from the first page visits every item once, in order')
})

t.test('every item as the reference shows it, including the displays that differ from the model', async (t) => {
  const { app } = await build(t)
  const page = (await get(app, '/api/extras/object-types/?limit=0')).json()
  t.equal(page.results.length, 163)
  t.same(ids(page), ORDER)
  const byId = new Map(DEFAULT_PROFILE.objectTypes.map((type) => [type.id, type]))
  for (const item of page.results) {
    const type = byId.get(item.id)!
    t.same(item, { id: type.id, url: `${LIST}${type.id}/`, display: type.display, app_label: type.app_label, model: type.model })
    t.same(Object.keys(item), ['id', 'url', 'display', 'app_label', 'model'])
  }
  const display = (model: string) => page.results.find((item: { model: string }) => item.model === model).display
  t.equal(display('objectpermission'), 'Users | permission')
  t.equal(display('userconfig'), 'Users | user preferences')
  t.equal(display('vminterface'), 'Virtualization | interface')
  const topology = page.results.filter((item: { app_label: string }) => item.app_label === 'netbox_topology_views')
  t.same(topology.map((item: { display: string }) => item.display), [
    'powerfeedcoordinate', 'powerpanelcoordinate', 'Topology views | circuit coordinate', 'Topology views | coordinate',
    'Topology views | coordinate group', 'Topology views | individual options', 'Topology views | role image',
  ], 'bare-model-name plugin types sort among their own app label')
})

t.test('limit and offset follow the reference for every odd value', async (t) => {
  const { app } = await build(t)
  // [query, items, first id, next, previous]: links worked out with Python's urllib as the reference does.
  const cases: Array<[string, number, number | undefined, string | null, string | null]> = [
    ['limit=abc&offset=1.5', 50, 23, `${LIST}?limit=50&offset=50`, null],
    ['limit=-3&offset=-7', 50, 23, `${LIST}?limit=50&offset=50`, null],
    ['limit=1e3', 50, 23, `${LIST}?limit=50&offset=50`, null],
    ['limit=&offset=', 50, 23, `${LIST}?limit=50&offset=50`, null],
    ['limit=0', 163, 23, null, null],
    ['limit=5000&offset=10', 153, ORDER[10], null, `${LIST}?limit=1000`],
    ['limit=%2B7&offset=+1_0', 7, ORDER[10], `${LIST}?limit=7&offset=17`, `${LIST}?limit=7&offset=3`],
    ['limit=%2010%20&offset=20', 10, ORDER[20], `${LIST}?limit=10&offset=30`, `${LIST}?limit=10&offset=10`],
    ['limit=10&limit=5', 5, 23, `${LIST}?limit=5&offset=5`, null],
    ['offset=163', 0, undefined, null, `${LIST}?limit=50&offset=113`],
    ['offset=500', 0, undefined, null, `${LIST}?limit=50&offset=450`],
    ['offset=99999999999999999999999', 0, undefined, null, `${LIST}?limit=50&offset=99999999999999999999949`],
    [`offset=${'9'.repeat(4301)}`, 50, 23, `${LIST}?limit=50&offset=50`, null],
    ['limit=1&offset=162', 1, 134, null, `${LIST}?limit=1&offset=161`],
  ]
  for (const [query, count, first, next, previous] of cases) {
    const res = await get(app, `/api/extras/object-types/?${query}`)
    t.equal(res.statusCode, 200, query)
    const page = res.json()
    t.equal(page.count, 163, query)
    t.equal(page.results.length, count, query)
    t.equal(page.results[0]?.id, first, query)
    t.equal(page.next, next, query)
    t.equal(page.previous, previous, query)
  }
})

t.test('links keep every other parameter, sorted and re-encoded as the reference does', async (t) => {
  const { app } = await build(t)
  const cases: Array<[string, string | null, string | null]> = [
    ['z=1&a=2&z=3&limit=10&offset=20', `${LIST}?a=2&limit=10&offset=30&z=1&z=3`, `${LIST}?a=2&limit=10&offset=10&z=1&z=3`],
    ['name=caf%C3%A9&x=a+b&y=%zz&w=%ff', `${LIST}?limit=50&name=caf%C3%A9&offset=50&w=%EF%BF%BD&x=a+b&y=%25zz`, null],
    ['flag&empty=&&limit=10&offset=10', `${LIST}?empty=&flag=&limit=10&offset=20`, `${LIST}?empty=&flag=&limit=10`],
    ['b=%F0%9F%98%80&b=%EF%BF%BD&%F0%9F%98%80=1&%EF%BF%BD=2',
      `${LIST}?b=%F0%9F%98%80&b=%EF%BF%BD&limit=50&offset=50&%EF%BF%BD=2&%F0%9F%98%80=1`, null],
    ['%F0%9F%98%80b=1&%F0%9F%98%80a=2', `${LIST}?limit=50&offset=50&%F0%9F%98%80a=2&%F0%9F%98%80b=1`, null],
    ['format=api&offset=50', `${LIST}?format=api&limit=50&offset=100`, `${LIST}?format=api&limit=50`],
    ['format=json&format=api', `${LIST}?format=json&format=api&limit=50&offset=50`, null],
    ['x=%3Cscript%3E%22&limit=100', `${LIST}?limit=100&offset=100&x=%3Cscript%3E%22`, null],
  ]
  for (const [query, next, previous] of cases) {
    const page = (await get(app, `/api/extras/object-types/?${query}`)).json()
    t.equal(page.next, next, query)
    t.equal(page.previous, previous, query)
  }
})

t.test('format=api and format=json are carried into item urls and links', async (t) => {
  const { app } = await build(t)
  for (const format of ['api', 'json', '']) {
    const page = (await get(app, `/api/extras/object-types/?format=${format}&limit=2&offset=2`)).json()
    t.same(page, {
      count: 163,
      next: `${LIST}?format=${format}&limit=2&offset=4`,
      previous: `${LIST}?format=${format}&limit=2`,
      results: [
        { id: 6, url: `${LIST}6/?format=${format}`, display: 'Authentication and Authorization | permission', app_label: 'auth', model: 'permission' },
        { id: 24, url: `${LIST}24/?format=${format}`, display: 'Circuits | circuit', app_label: 'circuits', model: 'circuit' },
      ],
    }, format)
    const item = await get(app, `/api/extras/object-types/6/?format=${format}`)
    t.equal(item.body, JSON.stringify(page.results[0]))
  }
  const unknown = await get(app, '/api/extras/object-types/?format=yaml')
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.body, '{"detail":"Not found."}')
})

t.test('filters: id, app_label, model and q, each one value (the last), AND-ed together', async (t) => {
  const { app } = await build(t)
  const page = async (query: string) => (await get(app, `/api/extras/object-types/?${query}`)).json()

  t.same(ids(await page('id=112')), [112])
  t.same(ids(await page('id=5&id=112')), [112], 'a repeated filter: the last value')
  t.same(ids(await page('id=abc&id=5')), [5], 'an invalid value before the last is not read')
  t.equal((await page('id=5&id=')).count, 163, 'an empty last value is no filter; the earlier ones are not read')
  t.equal((await page('id=')).count, 163, 'an empty id is no filter')
  for (const five of ['5', '+5', '5.0', '5.9', '0.5e1', '%205%20', '05', '5.', '50e-1', '5_0e-1']) {
    t.same(ids(await page(`id=${five}`)), [5], `id=${five} is 5`)
  }
  t.same(ids(await page('id=-0.5')), [], '0: no such id')
  t.same(ids(await page('id=0.000')), [], 'zero')
  t.same(ids(await page('id=-5')), [], 'a negative id: none')
  t.same(ids(await page('id=99999999999999999999')), [], 'a valid number past any id matches nothing')
  t.same(ids(await page('id=1e50')), [], 'up to 1e50')
  t.same(ids(await page('id=-1e60')), [], 'there is no lower limit')

  const vpn = await page('app_label=vpn&limit=4')
  t.equal(vpn.count, 10)
  t.same(ids(vpn), [122, 123, 124, 125])
  t.equal(vpn.next, `${LIST}?app_label=vpn&limit=4&offset=4`)
  t.same(ids(await page('app_label=vpn&app_label=account')), [23], 'the last app_label')
  t.same(ids(await page('app_label=%20account%20')), [23], 'stripped')
  t.equal((await page('app_label=VPN')).count, 0, 'exact and case-sensitive')
  t.equal((await page('app_label=%20')).count, 163, 'blank: no filter')

  t.same(ids(await page('model=tag')), [102, 14])
  t.same(ids(await page('model=tag&app_label=taggit')), [14])
  t.same(ids(await page('model=group&model=token')), [113], 'the last model')

  const dcim = await page('q=dcim&offset=50')
  t.equal(dcim.count, 45)
  t.equal(dcim.results.length, 0)
  t.equal(dcim.next, null)
  t.equal(dcim.previous, `${LIST}?limit=50&q=dcim`)
  t.same(ids(await page('q=PREFIXL')), [160, 161], 'q is a case-insensitive substring of app_label or model')
  t.equal((await page('q=%20%20')).count, 163, 'a blank q filters nothing')
  t.equal((await page('q=%20Tunnel%20')).count, 3, 'stripped')
  t.equal((await page('q=zzz&q=Tunnel')).count, 3, 'the last q')
  t.same(ids(await page('q=social&model=code')), [10])
  t.same(ids(await page('q=zzz')), [])
  t.equal((await page('q=%25')).count, 0, '% is a literal character')
  t.equal((await page('q=_')).count, 22, '_ too: only labels and models that have one')
  const lookups = await page('id__gt=5&app_label__ic=dc&limit=1')
  t.equal(lookups.count, 163, 'lookup-style names are unknown parameters: ignored')
  t.equal(lookups.next, `${LIST}?app_label__ic=dc&id__gt=5&limit=1&offset=1`, 'and kept in links')
})

t.test('invalid filters: one 400 naming each, in the order id, app_label, model, q', async (t) => {
  const { app } = await build(t)
  const cases: Array<[string, string]> = [
    ['id=abc', '{"id":["Enter a number."]}'],
    ['id=5&id=x', '{"id":["Enter a number."]}'],
    ['id=NaN', '{"id":["Enter a number."]}'],
    ['id=Infinity', '{"id":["Enter a number."]}'],
    ['id=1.2.3', '{"id":["Enter a number."]}'],
    ['id=0x10', '{"id":["Enter a number."]}'],
    ['id=1e51', '{"id":["Ensure this value is less than or equal to 1e+50."]}'],
    ['id=100000000000000007629769841091887003294964970946561', '{"id":["Ensure this value is less than or equal to 1e+50."]}'],
    ['id=100000000000000007629769841091887003294964970946560.5', '{"id":["Ensure this value is less than or equal to 1e+50."]}'],
    ['app_label=dcim%00', '{"app_label":["Null characters are not allowed."]}'],
    ['q=%00&model=a%00b&id=x&app_label=%00', '{"id":["Enter a number."],"app_label":["Null characters are not allowed."],"model":["Null characters are not allowed."],"q":["Null characters are not allowed."]}'],
    ['id=x&q=%00', '{"id":["Enter a number."],"q":["Null characters are not allowed."]}'],
    ['id=5%00', '{"id":["Null characters are not allowed."]}'],
    // A number field strips its value, and what is left of a blank one is not a number.
    ['id=%20', '{"id":["Enter a number."]}'],
    ['id=5&id=%09%0A%20', '{"id":["Enter a number."]}'],
    ['id=%C2%A0&q=%00', '{"id":["Enter a number."],"q":["Null characters are not allowed."]}'],
  ]
  for (const [query, body] of cases) {
    const res = await get(app, `/api/extras/object-types/?${query}`)
    t.same([res.statusCode, res.body], [400, body], query)
    t.match(res.headers, API_HEADERS, query)
  }
  t.equal((await get(app, '/api/extras/object-types/?id=100000000000000007629769841091887003294964970946560')).statusCode, 200, '1e50 as a double is the limit, exactly')
})

t.test('one object type', async (t) => {
  const { app } = await build(t)
  const res = await get(app, '/api/extras/object-types/121/')
  t.equal(res.statusCode, 200)
  t.match(res.headers, API_HEADERS)
  t.equal(res.body, `{"id":121,"url":"${LIST}121/","display":"Virtualization | interface","app_label":"virtualization","model":"vminterface"}`)
  assertSchema(t, ObjectType, res.json())
  t.equal((await get(app, '/api/extras/object-types/0121/')).body, res.body, 'the id is read as an integer')

  const missing: Array<[string, string]> = [
    ['86', 'No ObjectType matches the given query.'], ['-1', 'No ObjectType matches the given query.'],
    ['99999999999999999999', 'No ObjectType matches the given query.'], ['abc', 'Not found.'], ['1.0', 'Not found.'],
  ]
  for (const [id, message] of missing) {
    const res = await get(app, `/api/extras/object-types/${id}/`)
    t.equal(res.statusCode, 404, id)
    t.equal(res.body, JSON.stringify({ detail: message }), id)
    t.match(res.headers, API_HEADERS, id)
  }
})

t.test('another profile is served in its own order with its own ids', async (t) => {
  const profile: Profile = structuredClone(DEFAULT_PROFILE)
  profile.objectTypes = [
    { id: 9, app_label: 'b', model: 'x', display: 'B | x' },
    { id: 3, app_label: 'a', model: 'zeta', display: 'zeta' },
    { id: 4, app_label: 'a', model: 'alpha', display: 'A | Alpha' },
    { id: 5, app_label: 'a', model: 'beta', display: 'a | alpha' },
  ]
  const { app } = await build(t, { env: { PAGINATE_COUNT: '2', MAX_PAGE_SIZE: '3' }, profile })
  const first = (await get(app, '/api/extras/object-types/')).json()
  t.same(ids(first), [4, 5], 'display case-insensitively, then model')
  t.equal(first.next, `${LIST}?limit=2&offset=2`)
  t.same(ids((await get(app, '/api/extras/object-types/?limit=0')).json()), [4, 5, 3], 'limit=0 is the maximum page size')
  t.same(ids((await get(app, '/api/extras/object-types/?limit=9')).json()), [4, 5, 3], 'and so is its cap')
})

t.test('pages are exact bytes whatever the characters, the order, the filter and the Host', async (t) => {
  const profile: Profile = structuredClone(DEFAULT_PROFILE)
  // Two-, three- and four-byte UTF-8, and U+2028, which the reference escapes. By display: c, d, Ä, e, f.
  profile.objectTypes = [
    { id: 1, app_label: 'a', model: 'b', display: 'Ärger' },
    { id: 2, app_label: 'a', model: 'c', display: 'c ✓' },
    { id: 3, app_label: 'a', model: 'd', display: 'd 😀' },
    { id: 4, app_label: 'b', model: 'e', display: 'e\u2028' },
    { id: 5, app_label: 'b', model: 'f', display: 'f' },
  ]
  const { app } = await build(t, { profile })
  const item = (id: number, model: string, display: string, base = BASE, tail = '/') =>
    `{"id":${id},"url":"${base}/api/extras/object-types/${id}${tail}","display":"${display}","app_label":"${id < 4 ? 'a' : 'b'}","model":"${model}"}`
  const [a, c, d, e, f] = [item(1, 'b', 'Ärger'), item(2, 'c', 'c ✓'), item(3, 'd', 'd 😀'), item(4, 'e', 'e\\u2028'), item(5, 'f', 'f')]
  const page = (query: string, count: number, next: string | null, previous: string | null, items: string[]) => {
    const link = (value: string | null) => value === null ? 'null' : `"${LIST}?${value}"`
    return [query, `{"count":${count},"next":${link(next)},"previous":${link(previous)},"results":[${items.join(',')}]}`] as const
  }
  const cases = [
    page('', 5, null, null, [c, d, a, e, f]),
    page('limit=2&offset=1', 5, 'limit=2&offset=3', 'limit=2', [d, a]),
    page('ordering=-id', 5, null, null, [f, e, d, c, a]),
    page('ordering=model&q=%C3%A4', 0, null, null, []),
    page('q=e', 1, null, null, [e]),
    page('model=d&app_label=a', 1, null, null, [d]),
    page('ordering=-app_label&limit=3&offset=1', 5, 'limit=3&offset=4&ordering=-app_label', 'limit=3&ordering=-app_label', [f, c, d]),
    page('id=3', 1, null, null, [d]),
  ]
  for (const [query, body] of cases) {
    const res = await get(app, `/api/extras/object-types/?${query}`)
    t.equal(res.body, body, query)
    t.equal(res.headers['content-length'], String(Buffer.byteLength(body)), query)
  }
  t.equal((await get(app, '/api/extras/object-types/3/')).body, d, 'one item')
  t.equal((await get(app, '/api/extras/object-types/4.json?format=api')).body, item(4, 'e', 'e\\u2028', BASE, '.json?format=api'))
  // Each Host has its own urls: more Hosts than the catalog keeps renderings for, then the first again.
  for (const host of ['h0.test', 'h1.test', 'h2.test', 'h3.test', 'h4.test', 'h5.test', 'h6.test', 'h7.test', 'h8.test', 'h0.test']) {
    const res = await get(app, '/api/extras/object-types/?limit=2&offset=3', { host })
    t.equal(res.body, `{"count":5,"next":null,"previous":"http://${host}/api/extras/object-types/?limit=2&offset=1","results":[${
      [item(4, 'e', 'e\\u2028', `http://${host}`), item(5, 'f', 'f', `http://${host}`)].join(',')}]}`, host)
  }
})

t.test('a fragment sent in the target is no part of the query: links leave it out', async (t) => {
  const { port } = await build(t, { listen: true })
  const answer = await raw(port, 'GET /api/extras/object-types/?limit=1#top HTTP/1.1\r\nHost: inventory.test\r\nConnection: close\r\n\r\n')
  t.match(answer, '"next":"http://inventory.test/api/extras/object-types/?limit=1&offset=1"')
})
