import t from 'tap'
import { orderedObject, toJson } from '../../lib/reference/json.ts'

t.test('text is JSON.stringify\'s, with U+2028 and U+2029 escaped: as it is only when nothing in it needs escaping', async (t) => {
  const texts = ['', 'a', ' ', '~', '!#[]^_`{|}', 'http://h/api/extras/object-types/?limit=5&offset=5&q=%22',
    '"', '\\', 'a"b', '\x7f', '\x1f', '\t', '\n', 'ab\n', '\nab', 'é', '✓', '\u{1F600}', 'a\u2028b', '\u2029']
  for (const text of texts) {
    const expected = JSON.stringify(text).replace('\u2028', '\\u2028').replace('\u2029', '\\u2029')
    // Named by the escaped form: a line separator in a test's name would end its line of TAP.
    t.equal(toJson(text), expected, expected)
    t.equal(JSON.parse(toJson(text)), text, `${expected}: reads back`)
  }
})

t.test('other values are JSON.stringify\'s, line separators escaped inside', async (t) => {
  t.equal(toJson(null), 'null')
  t.equal(toJson(12), '12')
  t.equal(toJson({ a: ['x\u2028'], b: true }), '{"a":["x\\u2028"],"b":true}')
})

t.test('an object keeps its keys in the order given, integer-like ones too', async (t) => {
  t.equal(orderedObject([['b', '1'], ['10', '"x"'], ['a"', 'null']]), '{"b":1,"10":"x","a\\"":null}')
})
