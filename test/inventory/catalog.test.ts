import t from 'tap'
import { Catalog } from '../../lib/inventory/catalog.ts'
import { PageBuffer } from '../../lib/inventory/page-buffer.ts'
import { DEFAULT_PROFILE } from '../helpers/build.ts'

t.test('a catalog keeps the renderings of its items for the last 8 url prefixes and tails', async (t) => {
  const catalog = new Catalog(DEFAULT_PROFILE)
  const first = catalog.itemsJson('http://h0/', '/')
  t.equal(catalog.itemsJson('http://h0/', '/'), first, 'made once')
  t.not(catalog.itemsJson('http://h0/', '/?format=api'), first, 'another tail is another rendering')
  for (let i = 1; i < 7; i++) catalog.itemsJson(`http://h${i}/`, '/')
  t.equal(catalog.itemsJson('http://h0/', '/'), first, 'still kept with 8 made')
  const ninth = catalog.itemsJson('http://h7/', '/')
  t.not(catalog.itemsJson('http://h0/', '/'), first, 'the oldest made way for the ninth')
  t.equal(catalog.itemsJson('http://h7/', '/'), ninth)
  // Asked for last, and made of equal text: the same rendering, not another.
  t.equal(catalog.itemsJson(['http://h7', '/'].join(''), '/'), ninth, 'the last again, by equal prefix and tail')
  t.not(catalog.itemsJson('http://h7/', '/?format=api'), ninth, 'the last prefix with another tail: another')
})

t.test('an item is a slice of the catalog\'s rendering of its items; a page, its head, the runs of them and its tail', async (t) => {
  const catalog = new Catalog(DEFAULT_PROFILE)
  const json = catalog.itemsJson('http://h/api/extras/object-types/', '/')
  const { items } = catalog
  const [head, tail] = ['{"results":[', ']}']
  const buffer = new PageBuffer()
  const ids = (page: Buffer | string) => (JSON.parse(String(page)) as { results: Array<{ id: number }> }).results.map((item) => item.id)
  t.equal(json.item(items[7]!), `{"id":${items[7]!.id},"url":"http://h/api/extras/object-types/${items[7]!.id}/${items[7]!.tail}`)
  t.same(ids(json.page(head, items, 50, 100, tail, buffer)), items.slice(50, 100).map((item) => item.id), 'items side by side')
  t.same(ids(json.page(head, [items[0]!, items[5]!], 0, 2, tail, buffer)), [items[0]!.id, items[5]!.id], 'two runs, each carrying its comma')
  t.same(ids(json.page(head, [items.at(-1)!, items[0]!, items[1]!], 0, 3, tail, buffer)), [items.at(-1)!.id, items[0]!.id, items[1]!.id], 'the last item has no comma after it: one of its own')
  const reversed = items.slice(0, -1).reverse()
  t.same(ids(json.page(head, reversed, 0, 50, tail, buffer)), reversed.slice(0, 50).map((item) => item.id), 'fifty runs of one')
  t.same(ids(json.page(head, items, 3, 3, tail, buffer)), [], 'no items: head and tail')
})

t.test('a page longer than Node writes from its stack is the same text as bytes, copied from the rendering\'s UTF-8', async (t) => {
  // Names of more than one UTF-8 byte move every byte offset after them.
  const profile = { ...DEFAULT_PROFILE, objectTypes: DEFAULT_PROFILE.objectTypes.map((type, i) => i % 3 === 0 ? { ...type, display: `${type.display} ✓ é` } : type) }
  const catalog = new Catalog(profile)
  const json = catalog.itemsJson('http://h/api/extras/object-types/', '/')
  const { items } = catalog
  const text = (list: typeof items) => list.map((item) => json.item(item)).join(',')
  const buffer = new PageBuffer()
  const cases: Array<[string, typeof items, string]> = [
    ['one run', items.slice(10, 110), '{"results":['],
    ['runs of one, the catalog\'s last item first', [items.at(-1)!, ...items.slice(0, -1).reverse()].slice(0, 60), '{"results":['],
    ['no items, a long head', [], `{"next":"${'x'.repeat(6000)}","results":[`],
    ['a head that is not ASCII', items.slice(0, 60), '{"next":"http://ü.example/","results":['],
  ]
  for (const [name, list, head] of cases) {
    const page = json.page(head, list, 0, list.length, ']}', buffer)
    t.ok(Buffer.isBuffer(page), `${name}: bytes`)
    t.same(page, Buffer.from(head + text(list) + ']}'), `${name}: the same bytes as the text`)
  }
  const short = json.page('{"results":[', items, 0, 5, ']}', buffer)
  t.equal(short, '{"results":[' + text(items.slice(0, 5)) + ']}', 'a short page stays text')
})
