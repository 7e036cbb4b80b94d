/**
 * The ceiling for Node.js: a bare node:http server writing pre-fetched bytes.
 * Usage: reference-server.js <port> <service port> <host> <path>...
 * It copies the service's answers (body and API headers) for the given paths at start.
 */
import { createServer } from 'node:http'
import { fetchRaw } from './fetch.ts'

const [port, servicePort, host, ...paths] = process.argv.slice(2)
const answers = new Map<string, { headers: Record<string, string | number>, body: Buffer }>()
for (const path of paths) {
  const { headers, body } = await fetchRaw(Number(servicePort), path, host!)
  answers.set(path, {
    headers: { 'content-type': headers['content-type']!, vary: headers.vary!, allow: headers.allow!, 'content-length': body.length },
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
  res.writeHead(200, answer.headers)
  res.end(answer.body)
}).listen(Number(port), '127.0.0.1')
