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
