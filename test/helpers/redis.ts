import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { freePort } from './http.ts'
import { until } from './wait.ts'

/** Starts redis-server on this port and resolves once it answers PING. */
export async function startRedis (port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => 20 })
  client.on('error', () => {})
  await client.connect().catch(() => {})
  await until(`redis-server on port ${port}`, async () => (await client.ping().catch(() => '')) === 'PONG')
  client.disconnect()
  return child
}

export async function stopRedis (child: ChildProcess): Promise<void> {
  child.kill('SIGTERM')
  await once(child, 'exit')
}

/** A redis-server on a free port and a client to it (it reconnects after a restart), both gone when the test ends. */
export async function redisFor (t: Test): Promise<{ port: number, redis: ChildProcess, admin: Redis }> {
  const port = await freePort()
  const redis = await startRedis(port)
  t.teardown(() => { redis.kill() })
  const admin = new Redis(port, '127.0.0.1', { retryStrategy: () => 50 })
  admin.on('error', () => {})
  t.teardown(() => admin.disconnect())
  return { port, redis, admin }
}
