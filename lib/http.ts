import type { IncomingMessage } from 'node:http'
import type { FastifyReply } from 'fastify'
import { toJson } from './json.ts'

/** Headers of every answer; the Content-Type carries no charset, as the reference's. */
export const JSON_HEADERS = { 'content-type': 'application/json', vary: 'Accept' } as const

/** Headers of every answer on an API path, errors included. */
export const API_HEADERS = { ...JSON_HEADERS, allow: 'GET, HEAD, OPTIONS' } as const

/** Sends a JSON body that was rendered ahead of time. A Buffer payload skips Fastify's serializer. */
export function sendJson (reply: FastifyReply, status: number, body: Buffer): void {
  reply.code(status).header('content-type', JSON_HEADERS['content-type']).send(body)
}

/** The reference's error body: `{"detail":"…"}`. */
export function detail (message: string): Buffer {
  return Buffer.from(toJson({ detail: message }))
}

/**
 * The first header of this (lower-case) name, without building `request.headers`: cheaper on
 * the fast path, and the same reading of a repeated header on both paths.
 */
export function headerOf (request: IncomingMessage, name: string): string | undefined {
  const raw = request.rawHeaders
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) return raw[i + 1]
  }
  return undefined
}
