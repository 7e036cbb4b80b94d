import { once } from 'node:events'
import { request, type Agent, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http'
import { connect, createServer, type AddressInfo } from 'node:net'
import { checkAnswer } from './contract.ts'
import { DEADLINE_MS } from './wait.ts'

/** Real sockets and real HTTP: every answer read here is checked against its declared schema. */

export interface Reply {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/** A raw answer split into status, lower-cased headers and body. */
export function parseAnswer (text: string): Reply {
  const headerEnd = text.indexOf('\r\n\r\n')
  const [statusLine = '', ...lines] = text.slice(0, headerEnd).split('\r\n')
  const headers: IncomingHttpHeaders = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(headerEnd + 4) }
}

/** Checks a raw answer against the request that asked for it, when that request is one we can read. */
function checkRaw (requestText: string, answerText: string): void {
  const requestLine = /^([A-Z]+) (\/\S*) HTTP\/1\.[01]\r\n/.exec(requestText)
  if (requestLine === null || !answerText.includes('\r\n\r\n')) return
  const { status, headers, body } = parseAnswer(answerText)
  checkAnswer(requestLine[1]!, requestLine[2]!, status, headers['content-type'] as string | undefined, body)
}

const REQUEST_ID = /\r\nx-request-id: ([^\r]*)/i
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const requestIds = new Set<string>()

/**
 * An answer as two answers to the same request may be compared: without its Date and its
 * X-Request-ID, which must be a random UUID v4 never seen before (then `x-request-id: <v4>`).
 */
function comparable (answer: string): string {
  const id = REQUEST_ID.exec(answer)?.[1]
  if (id !== undefined) {
    if (!UUID_V4.test(id) || requestIds.has(id)) throw new Error(`X-Request-ID ${id}: not a fresh UUID v4`)
    requestIds.add(id)
  }
  return answer.replace(/\r\ndate: [^\r]*/i, '').replace(REQUEST_ID, '\r\nx-request-id: <v4>')
}

/**
 * Sends requests one after another on one keep-alive connection and resolves with the raw
 * answers, comparable (see above).
 */
export function exchange (port: number, requests: string[], host = '127.0.0.1'): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host)
    socket.setTimeout(DEADLINE_MS, () => socket.destroy(new Error(`no answer in ${DEADLINE_MS} ms to ${JSON.stringify(requests[answers.length])}`)))
    const answers: string[] = []
    let buffer = ''
    const sendNext = () => socket.write(requests[answers.length]!, 'latin1')
    socket.on('connect', sendNext)
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1')
      for (;;) {
        const headerEnd = buffer.indexOf('\r\n\r\n')
        if (headerEnd === -1) return
        const head = buffer.slice(0, headerEnd)
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0)
        const bodiless = requests[answers.length]!.startsWith('HEAD ') || / (304|1\d\d) /.test(head.slice(0, 13))
        const end = headerEnd + 4 + (bodiless ? 0 : length)
        if (buffer.length < end) return
        const answer = Buffer.from(buffer.slice(0, end), 'latin1').toString()
        try {
          checkRaw(requests[answers.length]!, answer)
          answers.push(comparable(answer))
        } catch (error) {
          socket.destroy()
          return reject(error)
        }
        buffer = buffer.slice(end)
        if (answers.length === requests.length) {
          socket.end()
          return resolve(answers)
        }
        sendNext()
      }
    })
    socket.on('error', reject)
  })
}

/** Sends raw bytes, half-closes, and resolves with everything the server writes back before closing. */
export function raw (port: number, bytes: string, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => socket.end(Buffer.from(bytes, 'latin1')))
    socket.setTimeout(DEADLINE_MS, () => socket.destroy(new Error(`the server kept the connection open ${DEADLINE_MS} ms`)))
    let answer = ''
    socket.on('data', (chunk) => { answer += chunk })
    socket.on('close', () => {
      try {
        checkRaw(bytes, answer)
        resolve(answer)
      } catch (error) {
        reject(error)
      }
    })
    socket.on('error', reject)
  })
}

export interface FetchOptions {
  method?: string
  headers?: OutgoingHttpHeaders
  agent?: Agent
  host?: string
}

/** One request with node:http; resolves with the whole answer. */
export function fetch (port: number, path: string, { method = 'GET', headers = {}, agent, host = '127.0.0.1' }: FetchOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host, path, method, headers, timeout: DEADLINE_MS, ...(agent !== undefined && { agent }) }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => {
        try {
          checkAnswer(method, path, res.statusCode!, res.headers['content-type'], body)
          resolve({ status: res.statusCode!, headers: res.headers, body })
        } catch (error) {
          reject(error)
        }
      })
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer in ${DEADLINE_MS} ms to ${method} ${path}`)))
    req.on('error', reject)
    req.end()
  })
}

/** What a client sees of one request on a connection of its own: the answer, or how the connection failed. */
export interface Seen {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The body received (cut short if the connection ended early). */
  body: string
  /** Milliseconds from sending the request to the connection's end. */
  ms: number
  /** When (ms after sending) each chunk of the answer arrived, its head in the first. */
  arrivals: number[]
  /** `ECONNRESET`, or `closed` when the connection ended with no answer at all. */
  failure?: string
}

/**
 * One request (a GET unless said) on a connection of its own (`Connection: close`), read to the connection's end: the
 * answer is never checked against the API's schemas, since an injected fault is not the API's.
 */
export function askAlone (port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const lines = Object.entries({ host: 'inventory.test', connection: 'close', ...headers }).map(([name, value]) => `${name}: ${value}\r\n`)
    let started = 0
    let received = Buffer.alloc(0)
    const arrivals: number[] = []
    socket.setTimeout(DEADLINE_MS, () => socket.destroy(new Error(`no end in ${DEADLINE_MS} ms to ${path}`)))
    socket.on('connect', () => {
      started = performance.now()
      socket.write(`${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`)
    })
    socket.on('data', (chunk) => {
      arrivals.push(performance.now() - started)
      received = Buffer.concat([received, chunk])
    })
    const done = (failure?: string) => {
      const ms = performance.now() - started
      if (received.length === 0) return resolve({ status: 0, headers: {}, body: '', ms, arrivals, failure: failure ?? 'closed' })
      const { status, headers, body } = parseAnswer(received.toString())
      resolve({ status, headers, body, ms, arrivals, ...(failure !== undefined && { failure }) })
    }
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET') done('ECONNRESET')
      else reject(error)
    })
    socket.on('close', (hadError) => { if (!hadError) done() })
  })
}

/** A port nothing listens on (for the moment). */
export async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  return port
}
