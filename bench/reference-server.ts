/**
 * The ceiling for Node.js: a bare node:http server writing pre-fetched bytes.
 * Usage: reference-server.js <port> <service port> <host> <path>...
 * It copies the service's answers (body and headers) for the given paths at start, and
 * answers If-None-Match with their tag as the service does: 304, the same headers, no body.
 * Like the service, it gives every answer a fresh X-Request-ID (the spec asks one per answer),
 * so both write the same bytes and do the same per-answer work.
 */
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { fetchRaw } from './fetch.ts'

const [port, servicePort, host, ...paths] = process.argv.slice(2)
/** Headers Node writes by itself, and the one that changes per answer. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'x-request-id'])
interface Answer { headers: string[], notModifiedHeaders: string[], etag: string, body: Buffer }
const answers = new Map<string, Answer>()
for (const path of paths) {
  const { headers, body } = await fetchRaw(Number(servicePort), path, host!)
  const flat = Object.entries(headers).filter(([name]) => !PER_CONNECTION.has(name)).flatMap(([name, value]) => [name, String(value)])
  const notModified: string[] = []
  for (let i = 0; i < flat.length; i += 2) if (flat[i] !== 'content-type' && flat[i] !== 'content-length') notModified.push(flat[i]!, flat[i + 1]!)
  answers.set(path, { headers: flat, notModifiedHeaders: notModified, etag: headers.etag!, body })
}
// The benchmark's uncached case adds `&n=<counter>`: answer it with the page without it.
const UNIQUE = /&n=\d+$/
createServer((req, res) => {
  const answer = answers.get(req.url!) ?? answers.get(req.url!.replace(UNIQUE, ''))
  if (answer === undefined) {
    res.writeHead(404).end()
    return
  }
  if (req.headers['if-none-match'] === answer.etag) {
    res.writeHead(304, [...answer.notModifiedHeaders, 'x-request-id', randomUUID()]).end()
    return
  }
  res.writeHead(200, [...answer.headers, 'x-request-id', randomUUID()])
  res.end(answer.body)
}).listen(Number(port), '127.0.0.1')
