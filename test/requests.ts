import fc from 'fast-check'

/** Generated requests: hostile paths, queries and methods, shared by the property tests. */

const word = fc.constantFrom('limit', 'offset', 'format', 'q', 'id', 'app_label', 'model', 'utm_source', 'LIMIT', 'limit[]', '', 'a b', 'é', '%6Cimit')
const junk = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('%zz', '%', '%e9', '%C3%A9', '%00', '+', '1e3', '0x10', ' 12 ', '1_0', '１２', '-0', '9'.repeat(40), 'api', 'json', '#frag')
)
/** Sometimes percent-encoded as a browser would, sometimes raw. */
const part = fc.tuple(fc.oneof(word, fc.string({ unit: 'binary', maxLength: 6 })), junk, fc.boolean())
  .map(([key, value, encode]) => encode ? `${encodeURIComponent(key)}=${encodeURIComponent(value)}` : `${key}=${value}`)
export const query = fc.array(part, { maxLength: 6 }).chain((parts) => fc.constantFrom('&', ';').map((separator) => parts.join(separator)))
export const path = fc.oneof(
  fc.constantFrom('/api/status/', '/api/extras/object-types/', '/api/extras/object-types/7/', '/api/extras/object-types/abc/',
    '/api/extras/object-types/%zz/', '/api/extras/object-types/99999999999999999999999/', '/api/extras/object-types/-1/',
    '/api/status', '/api/extras/object-types', '/api/', '/', '/healthz', '/readyz', '/api//status/', '/api/status/%2e%2e/'),
  fc.array(fc.string({ unit: 'grapheme-ascii', maxLength: 8 }), { maxLength: 4 }).map((segments) => '/api/' + segments.map(encodeURIComponent).join('/'))
)
export const method = fc.constantFrom<'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'DELETE' | 'PATCH'>('GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE', 'PATCH')
