import t from 'tap'
import type { Connection } from '../../lib/server/connection.ts'
import { IdleConnections } from '../../lib/server/idle-connections.ts'
import { until } from '../wait.ts'

/** A connection as the sweeps read it: between requests unless it has an answer being written (`_httpMessage`); when it was destroyed. */
function connection () {
  const socket = {
    parser: null,
    _httpMessage: null as object | null,
    destroyedAt: undefined as number | undefined,
    destroy () { socket.destroyedAt ??= Date.now() },
  }
  return socket
}

const IDLE_MS = 120

t.test('a connection is closed once idle for the time given, never before; a busy or active one is left open', async (t) => {
  const idle = new IdleConnections(IDLE_MS)
  const quiet = connection()
  const busy = connection()
  const chatty = connection()
  const opened = Date.now()
  for (const socket of [quiet, busy, chatty]) idle.opened(socket as unknown as Connection)
  busy._httpMessage = {}
  // A request every 30 ms on one; the other two read nothing more.
  let lastRequest = Date.now()
  const requests = setInterval(() => {
    idle.active(chatty as unknown as Connection)
    lastRequest = Date.now()
  }, 30)
  t.teardown(() => clearInterval(requests))

  await until('the quiet connection closed', () => quiet.destroyedAt !== undefined)
  t.ok(quiet.destroyedAt! - opened >= IDLE_MS, `closed ${quiet.destroyedAt! - opened} ms after it opened`)
  // Three times the idle time more: a busy connection is never idle, nor one that reads a request every 30 ms.
  const since = Date.now()
  await until('three idle times', () => Date.now() - since >= 3 * IDLE_MS)
  t.equal(busy.destroyedAt, undefined, 'the busy one is open')
  t.equal(chatty.destroyedAt, undefined, 'the active one is open')

  // Its answer written, the busy one is idle from then on; so is the other once it stops.
  busy._httpMessage = null
  const answered = Date.now()
  clearInterval(requests)
  await until('both closed', () => busy.destroyedAt !== undefined && chatty.destroyedAt !== undefined)
  t.ok(busy.destroyedAt! - answered >= IDLE_MS, `closed ${busy.destroyedAt! - answered} ms after its answer`)
  t.ok(chatty.destroyedAt! - lastRequest >= IDLE_MS, `closed ${chatty.destroyedAt! - lastRequest} ms after its last request`)
  for (const socket of [quiet, busy, chatty]) idle.closed(socket as unknown as Connection)
})

t.test('a connection closed by its client is forgotten', async (t) => {
  const idle = new IdleConnections(IDLE_MS)
  const gone = connection()
  const opened = Date.now()
  idle.opened(gone as unknown as Connection)
  idle.closed(gone as unknown as Connection)
  await until('two idle times', () => Date.now() - opened >= 2 * IDLE_MS)
  t.equal(gone.destroyedAt, undefined, 'not destroyed again')
  // The sweeps start again with the next connection.
  const next = connection()
  idle.opened(next as unknown as Connection)
  await until('the next connection closed', () => next.destroyedAt !== undefined)
  t.ok(next.destroyedAt! - opened >= IDLE_MS)
  idle.closed(next as unknown as Connection)
})
