import type { AddressInfo } from 'node:net'
import t from 'tap'
import { build } from '../helpers/build.ts'
import { exchange, raw } from '../helpers/http.ts'

t.test('on IPv6, a request whose Host is empty is for the bracketed address it reached, and is kept under it', async (t) => {
  const { service, replays } = await build(t)
  await service.listen(0, '::1')
  const { port } = service.server.address() as AddressInfo
  const request = 'GET /api/extras/object-types/23/ HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n'
  for (let i = 0; i < 3; i++) {
    t.match(await raw(port, request, '::1'), `"url":"http://[::1]:${port}/api/extras/object-types/23/"`)
  }
  t.same([replays!.stats.admissions, replays!.stats.hits], [1, 1], 'kept the second time, replayed the third')
})

t.test('an answer made while the service closes is kept without its Connection: close', async (t) => {
  const { service, port } = await build(t, { listen: true })
  const ask = 'GET /api/status/ HTTP/1.1\r\nHost: inventory.test\r\n\r\n'
  await exchange(port, [ask])
  service.lifecycle.closing = true
  const [closing] = await exchange(port, [ask])
  t.match(closing, /\r\nConnection: close\r\n/i, 'made while closing: the connection closes')
  service.lifecycle.closing = false
  const [replayed] = await exchange(port, [ask])
  t.notMatch(replayed, /\r\nconnection: close\r\n/i, 'replayed later: the connection stays')
  t.match(replayed, /\r\nConnection: keep-alive\r\n/)
})
