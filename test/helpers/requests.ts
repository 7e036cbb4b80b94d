import fc from 'fast-check'

/** Generated requests: hostile paths, queries and methods, shared by the property tests. */

const word = fc.constantFrom('limit', 'offset', 'format', 'q', 'id', 'app_label', 'model', 'ordering', 'utm_source', 'LIMIT', 'limit[]',
  'id__gt', 'app_label__ic', '', 'a b', 'é', '%6Cimit')
const junk = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('%zz', '%', '%e9', '%C3%A9', '%00', '+', '1e3', '0x10', ' 12 ', '1_0', '１２', '-0', '9'.repeat(40), 'api', 'json', '#frag'),
  // Decimal ids, values of the filters and of ordering.
  fc.constantFrom('5.0', '5.9', '+5', '0.5e1', '.5', '5.', '1e50', '1e51', 'NaN', 'Infinity', '7%00', 'dcim', 'ipam', ' dcim ', 'DCIM',
    'tag', 'token', '_', '-id', 'id', 'app_label,-model', ' -model , id ', 'display', '--id', 'id,bogus')
)
/** Sometimes percent-encoded as a browser would, sometimes raw; sometimes repeated with another value. */
const part = fc.tuple(fc.oneof(word, fc.string({ unit: 'binary', maxLength: 6 })), junk, fc.option(junk), fc.boolean())
  .map(([key, value, again, encode]) => [value, ...(again === null ? [] : [again])]
    .map((one) => encode ? `${encodeURIComponent(key)}=${encodeURIComponent(one)}` : `${key}=${one}`).join('&'))
export const query = fc.array(part, { maxLength: 6 }).chain((parts) => fc.constantFrom('&', ';').map((separator) => parts.join(separator)))
export const path = fc.oneof(
  fc.constantFrom('/api/status/', '/api/extras/object-types/', '/api/extras/object-types/7/', '/api/extras/object-types/abc/',
    '/api/extras/object-types/%zz/', '/api/extras/object-types/99999999999999999999999/', '/api/extras/object-types/-1/',
    '/api/status', '/api/extras/object-types', '/api/', '/api/extras/', '/api', '/', '/healthz', '/readyz', '/api//status/', '/api/status/%2e%2e/',
    '/api/extras/object-types.json', '/api/extras/object-types.json/', '/api/extras/object-types/7.json', '/api/extras/object-types/7.json/',
    '/api/extras/object-types/7.xml', '/api/extras/object-types.api', '/api/extras/object-types/7.5/'),
  fc.array(fc.string({ unit: 'grapheme-ascii', maxLength: 8 }), { maxLength: 4 }).map((segments) => '/api/' + segments.map(encodeURIComponent).join('/'))
)
export const method = fc.constantFrom<'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'DELETE' | 'PATCH'>('GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE', 'PATCH')
