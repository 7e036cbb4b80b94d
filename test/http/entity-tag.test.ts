import t from 'tap'
import { digestOf, TagSeed } from '../../lib/http/entity-tag.ts'

t.test('a tag is 64 bits of hex, the same for the same inputs on any seed made of them', async (t) => {
  const tag = new TagSeed('profile\n100 1000').tag('http://inventory.test', '/api/status/')
  t.match(tag, /^"[0-9a-f]{16}"$/)
  t.equal(new TagSeed('profile\n100 1000').tag('http://inventory.test', '/api/status/'), tag, 'another seed of the same profile and settings: another replica')
})

t.test('any input that differs gives another tag', async (t) => {
  const seed = new TagSeed('profile\n100 1000')
  const tags = [
    seed.tag('http://inventory.test', '/api/status/'),
    new TagSeed('profile2\n100 1000').tag('http://inventory.test', '/api/status/'),
    new TagSeed('profile\n50 1000').tag('http://inventory.test', '/api/status/'),
    seed.tag('https://inventory.test', '/api/status/'),
    seed.tag('http://inventory.test', '/api/status/?format=json'),
    // Where the base URL ends and the request URL begins counts.
    seed.tag('http://inventory.test/api', '/status/'),
  ]
  t.equal(new Set(tags).size, tags.length, tags.join(' '))
  // Ten thousand request URLs, as a sweep of offsets makes them: no two share a tag.
  const sweep = new Set(Array.from({ length: 10_000 }, (_, i) => seed.tag('http://inventory.test', `/api/extras/object-types/?offset=${i}`)))
  t.equal(sweep.size, 10_000)
})

t.test('a seed asked of base URLs in turn gives each the tag a fresh seed gives it', async (t) => {
  const seed = new TagSeed('profile\n100 1000')
  const bases = ['http://inventory.test', 'http://other.test:8080', 'http://inventory.test', 'https://inventory.test', 'http://inventory.test']
  for (const [i, base] of bases.entries()) {
    const url = `/api/extras/object-types/?offset=${i}`
    t.equal(seed.tag(base, url), new TagSeed('profile\n100 1000').tag(base, url), `${base}${url}`)
  }
})

t.test('a digest is 16 hex digits, the same for the same text, and another for another text', async (t) => {
  t.equal(digestOf('{"status":{}}'), digestOf('{"status":{}}'))
  // Texts that differ by one character, by their order, by a character past the last whole four bytes.
  const texts = [...Array.from({ length: 10_000 }, (_, i) => `{"objectTypes":[${i}]}`), 'ab', 'ba', '', 'a', 'a\u0000', 'é', 'ü', 'abcdé', 'abcdü']
  const digests = texts.map(digestOf)
  t.same(digests.filter((digest) => !/^[0-9a-f]{16}$/.test(digest)), [], 'leading zeros written too')
  t.equal(new Set(digests).size, texts.length)
})
