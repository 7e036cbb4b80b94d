import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { until } from './wait.ts'

// A real redis-server (Debian's package: apt-get install redis-server); only the Redis tests import this.
if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
  throw new Error('redis-server is not installed: apt-get install redis-server (.ci/run does)')
}

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
