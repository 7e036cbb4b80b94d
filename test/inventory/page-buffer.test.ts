import t from 'tap'
import { once } from 'node:events'
import { connect } from 'node:net'
import { PageBuffer } from '../../lib/inventory/page-buffer.ts'
import { build, get } from '../helpers/build.ts'
import { DEADLINE_MS } from '../helpers/wait.ts'

/** An answer ended and written whole; one ended with bytes still to write; one not ended (a delayed answer). */
const SENT = { writableEnded: true, writableLength: 0 }
const HELD = { writableEnded: true, writableLength: 120 }
const LATER = { writableEnded: false, writableLength: 0 }

t.test('the buffer is lent to one page at a time, and again once that page is sent', async (t) => {
  const buffer = new PageBuffer()
  const first = buffer.take(7000)
  t.equal(first.length, 7000)
  const meanwhile = buffer.take(7000)
  t.not(meanwhile.buffer, first.buffer, 'lent: the next page gets memory of its own')
  buffer.handBack(meanwhile, SENT)
  t.not(buffer.take(10).buffer, first.buffer, 'memory of its own is not taken back')
  buffer.handBack(first, SENT)
  t.equal(buffer.take(5000).buffer, first.buffer, 'handed back once sent: lent again')
})

t.test('a page Node still holds keeps the buffer: the next page gets another, and the held bytes stay', async (t) => {
  const buffer = new PageBuffer()
  const held = buffer.take(3)
  held.write('abc')
  buffer.handBack(held, HELD)
  const next = buffer.take(3)
  next.write('xyz')
  t.not(next.buffer, held.buffer)
  t.equal(held.toString(), 'abc')
  buffer.handBack(next, LATER)
  const after = buffer.take(3)
  t.not(after.buffer, next.buffer, 'nor does an answer not ended yet')
  buffer.handBack(after, SENT)
  t.equal(buffer.take(3).buffer, after.buffer, 'the new one is lent again')
})

t.test('a page longer than the buffer gets memory of its own; text and other bytes are nothing to hand back', async (t) => {
  const buffer = new PageBuffer()
  const long = buffer.take(64 * 1024 + 1)
  const lent = buffer.take(100)
  t.not(lent.buffer, long.buffer)
  buffer.handBack('text', SENT)
  buffer.handBack(Buffer.alloc(100), SENT)
  t.not(buffer.take(100).buffer, lent.buffer, 'still lent')
  buffer.handBack(lent, SENT)
  t.equal(buffer.take(100).buffer, lent.buffer)
})

/** Writes every request at once on one connection, half-closes it, and resolves with all the bytes read back. */
async function pipelined (port: number, requests: string[]): Promise<Buffer> {
  const socket = connect(port, '127.0.0.1')
  socket.setTimeout(DEADLINE_MS, () => socket.destroy(new Error(`the connection stayed open ${DEADLINE_MS} ms`)))
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  await once(socket, 'connect')
  socket.end(requests.join(''))
  await once(socket, 'close')
  return Buffer.concat(chunks)
}

/** Answers read one after another from their bytes, by Content-Length. */
function answersIn (bytes: Buffer): Array<{ head: string, body: string }> {
  const answers = []
  for (let at = 0; at < bytes.length;) {
    const headEnd = bytes.indexOf('\r\n\r\n', at)
    const head = bytes.subarray(at, headEnd).toString('latin1')
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)![1])
    answers.push({ head, body: bytes.subarray(headEnd + 4, headEnd + 4 + length).toString() })
    at = headEnd + 4 + length
  }
  return answers
}

t.test('pipelined new pages each get their own bytes, written while Node still holds the pages before them', async (t) => {
  const { app, port } = await build(t, { listen: true })
  // Long pages (bytes), each new to the service: an answer waits in Node while the one before it is written.
  const paths = Array.from({ length: 40 }, (_, i) => `/api/extras/object-types/?limit=50&offset=${i}&n=${i}`)
  const answers = answersIn(await pipelined(port, paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: inventory.test\r\n\r\n`)))
  t.equal(answers.length, paths.length, 'every request answered')
  for (const [i, path] of paths.entries()) {
    t.match(answers[i]!.head, /^HTTP\/1\.1 200 /, path)
    t.equal(answers[i]!.body, (await get(app, path)).body, `${path}: its own page`)
  }
})
