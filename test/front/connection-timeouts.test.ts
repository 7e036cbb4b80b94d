import t from 'tap'
import type { Connection } from '../../lib/http/connection.ts'
import { ConnectionTimeouts } from '../../lib/front/connection-timeouts.ts'
import { until } from '../helpers/wait.ts'

/**
 * A connection as the sweeps read it: between requests unless it has an answer being written
 * (`_httpMessage`); the bytes written to it and those still waiting to be taken; when it was destroyed.
 */
function connection () {
  const socket = {
    parser: null,
    _httpMessage: null as object | null,
    bytesWritten: 0,
    writableLength: 0,
    destroyedAt: undefined as number | undefined,
    destroy () { socket.destroyedAt ??= Date.now() },
  }
  return socket
}

const IDLE_MS = 120
/** Far beyond any test's length: the send timeout plays no part but where a test sets it. */
const NEVER_MS = 3_600_000

t.test('a connection is closed once idle for the time given, never before; a busy or active one is left open', async (t) => {
  const idle = new ConnectionTimeouts(IDLE_MS, NEVER_MS)
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
  const idle = new ConnectionTimeouts(IDLE_MS, NEVER_MS)
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

t.test('a connection whose client takes nothing of what is written to it is closed after the send timeout, never before', async (t) => {
  const SEND_MS = 150
  const timeouts = new ConnectionTimeouts(NEVER_MS, SEND_MS)
  const stalled = connection()
  const reading = connection()
  const opened = Date.now()
  for (const socket of [stalled, reading]) {
    socket._httpMessage = {}
    socket.bytesWritten = 100_000
    socket.writableLength = 50_000
    timeouts.opened(socket as unknown as Connection)
  }
  // One client takes a little of what waits every 30 ms, more being written all the while; the other nothing.
  const takes = setInterval(() => {
    reading.bytesWritten += 1000
    reading.writableLength = Math.max(1, reading.writableLength - 500)
  }, 30)
  t.teardown(() => clearInterval(takes))
  await until('the stalled connection closed', () => stalled.destroyedAt !== undefined)
  t.ok(stalled.destroyedAt! - opened >= SEND_MS, `closed ${stalled.destroyedAt! - opened} ms after its client last took a byte`)
  const since = Date.now()
  await until('three send timeouts', () => Date.now() - since >= 3 * SEND_MS)
  t.equal(reading.destroyedAt, undefined, 'the one whose client reads is open')
  // Nothing left to write, a busy connection is not stalled, however long its answer takes.
  clearInterval(takes)
  reading.writableLength = 0
  const idleSince = Date.now()
  await until('three send timeouts more', () => Date.now() - idleSince >= 3 * SEND_MS)
  t.equal(reading.destroyedAt, undefined, 'an answer being made with nothing waiting to be written is no stall')
  reading.writableLength = 10
  await until('the reading connection closed once its client stops', () => reading.destroyedAt !== undefined)
  t.ok(reading.destroyedAt! - idleSince >= 3 * SEND_MS + SEND_MS, 'closed a send timeout after it stopped taking bytes')
  for (const socket of [stalled, reading]) timeouts.closed(socket as unknown as Connection)
})
