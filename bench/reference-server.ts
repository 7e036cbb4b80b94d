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
import { answerOf, copyAnswers } from './answers.ts'

const [port, servicePort, host, ...paths] = process.argv.slice(2)
const answers = await copyAnswers(Number(servicePort), host!, paths)
createServer((req, res) => {
  const answer = answerOf(answers, req.url!)
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
