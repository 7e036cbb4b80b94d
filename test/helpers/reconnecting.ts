import { connect, type Socket } from 'node:net'
import { DEADLINE_MS } from './wait.ts'

/** What keep-alive clients that reconnect saw across a shutdown. */
export interface Outcome {
  /** Requests written. */
  sent: number
  /** Complete answers. */
  answered: number
  /** Answers that carried `Connection: close`. */
  closing: number
  /** Requests written to a connection that was then reset or closed without their answer. */
  dropped: number
  /** Connects refused: the service no longer accepted. */
  refused: number
  /** Each drop, each answer other than a 200 (its status line and body), and any other error. */
  problems: string[]
}

const REQUEST = 'GET /api/status/ HTTP/1.1\r\nHost: load.test\r\n\r\n'

/**
 * `count` clients, each with one keep-alive connection and one request in flight at a time, as
 * HTTP client pools and load balancers' back-end pools are: a connection the service closes, or
 * an answer with `Connection: close`, makes the client connect again at once. A client ends
 * when a connect is refused, or when `stop` resolves. Raw sockets, so that every outcome is
 * counted exactly: once a connect succeeded, any error or close before the answer is a drop.
 */
export function reconnectingClients (port: number, count: number, stop: Promise<unknown>, host = '127.0.0.1'): Promise<Outcome> {
  const outcome: Outcome = { sent: 0, answered: 0, closing: 0, dropped: 0, refused: 0, problems: [] }
  let stopped = false
  stop.then(() => { stopped = true }, () => {})

  /** One connection: requests back to back; resolves true to connect again, false to end. */
  const connection = () => new Promise<boolean>((resolve) => {
    const socket: Socket = connect(port, host)
    let connected = false
    let waiting = false
    let buffer = ''
    const send = () => {
      outcome.sent++
      waiting = true
      buffer = ''
      socket.write(REQUEST)
    }
    const end = (again: boolean) => {
      socket.destroy()
      resolve(again)
    }
    socket.setTimeout(DEADLINE_MS, () => socket.destroy(new Error(`no answer in ${DEADLINE_MS} ms`)))
    socket.on('connect', () => {
      connected = true
      send()
    })
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1')
      const headerEnd = buffer.indexOf('\r\n\r\n')
      if (headerEnd === -1) return
      const head = buffer.slice(0, headerEnd)
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1])
      if (buffer.length < headerEnd + 4 + length) return
      waiting = false
      outcome.answered++
      if (!head.startsWith('HTTP/1.1 200 ')) outcome.problems.push(`${head.split('\r\n', 1)[0]!} ${buffer.slice(headerEnd + 4)}`)
      if (/\r\nconnection: close\r\n/i.test(`${head}\r\n`)) {
        outcome.closing++
        return end(!stopped)
      }
      if (stopped) return end(false)
      send()
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected && error.code === 'ECONNREFUSED') {
        outcome.refused++
        return end(false)
      }
      if (waiting || !connected) {
        outcome.dropped++
        outcome.problems.push(`${connected ? 'a request' : 'a connect'}: ${error.code ?? error.message}`)
      }
      end(!stopped)
    })
    socket.on('close', () => {
      if (waiting) {
        outcome.dropped++
        outcome.problems.push('a request: the connection closed without an answer')
        waiting = false
      }
      end(!stopped && connected)
    })
  })

  const client = async () => {
    while (await connection());
  }
  return Promise.all(Array.from({ length: count }, client)).then(() => outcome)
}
