/**
 * The ceiling for Node.js: a bare node:http server writing pre-fetched bytes.
 * Usage: reference-server.js <port> <service port> <host> <path>...
 * It copies the service's answers (body and API headers) for the given paths at start, and
 * answers If-None-Match with their tag as the service does: 304, the same headers, no body.
 */
import { createServer } from 'node:http'
import { fetchRaw } from './fetch.ts'

const [port, servicePort, host, ...paths] = process.argv.slice(2)
interface Answer { headers: Record<string, string | number>, notModifiedHeaders: Record<string, string>, etag: string, body: Buffer }
const answers = new Map<string, Answer>()
for (const path of paths) {
  const { headers, body } = await fetchRaw(Number(servicePort), path, host!)
  const cacheHeaders = { vary: headers.vary!, allow: headers.allow!, 'cache-control': headers['cache-control']!, etag: headers.etag! }
  answers.set(path, {
    headers: { 'content-type': headers['content-type']!, ...cacheHeaders, 'content-length': body.length },
    notModifiedHeaders: cacheHeaders,
    etag: headers.etag!,
    body,
  })
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
    res.writeHead(304, answer.notModifiedHeaders).end()
    return
  }
  res.writeHead(200, answer.headers)
  res.end(answer.body)
}).listen(Number(port), '127.0.0.1')
