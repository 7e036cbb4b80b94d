import t from 'tap'
import { Catalog } from '../lib/inventory/catalog.ts'
import { DEFAULT_PROFILE } from './helper.ts'

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
})

t.test('an item is a view of the catalog\'s rendering of its items; a page, the runs of them copied into one Buffer of its own', async (t) => {
  const catalog = new Catalog(DEFAULT_PROFILE)
  const json = catalog.itemsJson('http://h/api/extras/object-types/', '/')
  const { items } = catalog
  const [head, tail] = ['{"results":[', Buffer.from(']}')]
  const ids = (page: Buffer) => (JSON.parse(page.toString()) as { results: Array<{ id: number }> }).results.map((item) => item.id)
  t.equal(json.item(items[7]!).toString(), `{"id":${items[7]!.id},"url":"http://h/api/extras/object-types/${items[7]!.id}/${items[7]!.tail}`)
  t.equal(json.item(items[0]!).buffer, json.item(items[7]!).buffer, 'items are views of one rendering')

  const side = json.page(head, items, 50, 100, tail)
  t.same(ids(side), items.slice(50, 100).map((item) => item.id), 'items side by side')
  t.same([side.byteOffset, side.buffer.byteLength], [0, side.length], 'memory of its own, exactly the page')
  t.ok(side.toString().startsWith(head) && side.toString().endsWith(']}'))
  t.same(ids(json.page(head, [items[0]!, items[5]!], 0, 2, tail)), [items[0]!.id, items[5]!.id], 'two runs, each carrying its comma')
  t.same(ids(json.page(head, [items.at(-1)!, items[0]!, items[1]!], 0, 3, tail)), [items.at(-1)!.id, items[0]!.id, items[1]!.id], 'the last item has no comma after it: one of its own')
  const reversed = items.slice(0, -1).reverse()
  t.same(ids(json.page(head, reversed, 0, 50, tail)), reversed.slice(0, 50).map((item) => item.id), 'fifty runs of one')
  t.same(ids(json.page(head, items, 3, 3, tail)), [], 'no items: head and tail')
  t.equal(json.page('{"h":"é","results":[', items, 0, 1, tail).toString(), `{"h":"é","results":[${json.item(items[0]!).toString()}]}`, 'a head that is not ASCII, by its bytes')
})
