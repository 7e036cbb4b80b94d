import t from 'tap'
import type { Body } from '../lib/answer/answer.ts'
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

t.test('a page is views of the catalog\'s rendering of its items, with no body of its own', async (t) => {
  const catalog = new Catalog(DEFAULT_PROFILE)
  const json = catalog.itemsJson('http://h/api/extras/object-types/', '/')
  const { items } = catalog
  const [head, tail] = ['{"results":[', Buffer.from(']}')]
  const rendering = json.item(items[0]!).buffer
  const text = (pieces: Body) => pieces.map((piece) => piece.toString()).join('')
  const ids = (pieces: Body) => (JSON.parse(text(pieces)) as { results: Array<{ id: number }> }).results.map((item) => item.id)
  const bufferOf = (piece: Body[number] | undefined) => (piece as Buffer).buffer
  t.equal(json.item(items[7]!).toString(), `{"id":${items[7]!.id},"url":"http://h/api/extras/object-types/${items[7]!.id}/${items[7]!.tail}`)

  const side = json.page(head, items, 50, 100, tail)
  t.equal(side.length, 3, 'items side by side: one view between head and tail')
  t.equal(side[0], head, 'the head as it was given, text')
  t.equal(bufferOf(side[1]), rendering, 'a view, not a copy')
  t.same(ids(side), items.slice(50, 100).map((item) => item.id))

  const apart = json.page(head, [items[0]!, items[5]!], 0, 2, tail)
  t.equal(apart.length, 4, 'two runs: the first carries its own comma')
  t.same([apart[0], apart[3]], [head, tail])
  t.ok(bufferOf(apart[1]) === rendering && bufferOf(apart[2]) === rendering, 'both views of the rendering')
  t.same(ids(apart), [items[0]!.id, items[5]!.id])

  const wrapped = json.page(head, [items.at(-1)!, items[0]!, items[1]!], 0, 3, tail)
  t.same(wrapped.map((piece) => piece.toString()).filter((piece) => piece.length === 1), [','], 'the last item has no comma after it: one of its own')
  t.same(ids(wrapped), [items.at(-1)!.id, items[0]!.id, items[1]!.id])

  // Every item's own comma serves: all but the last of the catalog.
  const reversed = items.slice(0, -1).reverse()
  const scattered = json.page(head, reversed, 0, 50, tail)
  t.equal(scattered.length, 1, 'past 32 pieces, one copy')
  t.ok(Buffer.isBuffer(scattered[0]), 'the head copied in too')
  t.same(ids(scattered), reversed.slice(0, 50).map((item) => item.id))
  t.same(ids(json.page(head, reversed, 0, 31, tail)), reversed.slice(0, 31).map((item) => item.id), '31 runs of one: 33 pieces, copied')
  t.equal(json.page(head, reversed, 0, 30, tail).length, 32, '30 runs of one: 32 pieces, written as they are')
  t.same(ids(json.page(head, items, 3, 3, tail)), [], 'no items: head and tail')
})
