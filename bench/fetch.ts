import { request, type IncomingHttpHeaders } from 'node:http'

export interface Answer { status: number, headers: IncomingHttpHeaders, body: Buffer }

/** One GET on loopback with the given Host (and other headers), body collected. */
export function fetchRaw (port: number, path: string, host: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers: { ...headers, host } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
    }).on('error', reject).end()
  })
}
