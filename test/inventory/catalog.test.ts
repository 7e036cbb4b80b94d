import t from 'tap'
import { Catalog } from '../../lib/inventory/catalog.ts'
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
})

t.test('an item is a slice of the catalog\'s rendering of its items; a page, its head, the runs of them and its tail', async (t) => {
  const catalog = new Catalog(DEFAULT_PROFILE)
  const json = catalog.itemsJson('http://h/api/extras/object-types/', '/')
  const { items } = catalog
  const [head, tail] = ['{"results":[', ']}']
  const ids = (page: string) => (JSON.parse(page) as { results: Array<{ id: number }> }).results.map((item) => item.id)
  t.equal(json.item(items[7]!), `{"id":${items[7]!.id},"url":"http://h/api/extras/object-types/${items[7]!.id}/${items[7]!.tail}`)
  t.same(ids(json.page(head, items, 50, 100, tail)), items.slice(50, 100).map((item) => item.id), 'items side by side')
  t.same(ids(json.page(head, [items[0]!, items[5]!], 0, 2, tail)), [items[0]!.id, items[5]!.id], 'two runs, each carrying its comma')
  t.same(ids(json.page(head, [items.at(-1)!, items[0]!, items[1]!], 0, 3, tail)), [items.at(-1)!.id, items[0]!.id, items[1]!.id], 'the last item has no comma after it: one of its own')
  const reversed = items.slice(0, -1).reverse()
  t.same(ids(json.page(head, reversed, 0, 50, tail)), reversed.slice(0, 50).map((item) => item.id), 'fifty runs of one')
  t.same(ids(json.page(head, items, 3, 3, tail)), [], 'no items: head and tail')
})
