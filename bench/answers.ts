/**
 * The service's answers, copied for the servers it is measured beside (reference-server.ts,
 * fastify-floor.ts): each path's body and headers as the service wrote them, without those Node
 * writes itself per connection and the request id, which both give each answer afresh.
 */
import { fetchRaw } from './fetch.ts'

export interface Answer {
  /** Name, value, name, value…: what writeHead takes. */
  headers: string[]
  /** The 304's: the same without Content-Type and Content-Length. */
  notModifiedHeaders: string[]
  etag: string
  body: Buffer
}

/** Headers Node writes by itself, and the one that changes per answer. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'x-request-id'])

/** Each path's answer, as the service on `port` gives it to `host`. */
export async function copyAnswers (port: number, host: string, paths: readonly string[]): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>()
  for (const path of paths) {
    const { headers, body } = await fetchRaw(port, path, host)
    const flat = Object.entries(headers).filter(([name]) => !PER_CONNECTION.has(name)).flatMap(([name, value]) => [name, String(value)])
    const notModified: string[] = []
    for (let i = 0; i < flat.length; i += 2) if (flat[i] !== 'content-type' && flat[i] !== 'content-length') notModified.push(flat[i]!, flat[i + 1]!)
    answers.set(path, { headers: flat, notModifiedHeaders: notModified, etag: headers.etag!, body })
  }
  return answers
}

/** The benchmark's uncached cases add `&n=<counter>`: both answer them with the copy of the path without it. */
const UNIQUE = /&n=\d+$/
export const answerOf = (answers: ReadonlyMap<string, Answer>, url: string) => answers.get(url) ?? answers.get(url.replace(UNIQUE, ''))
