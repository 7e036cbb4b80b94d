import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { Redis } from 'ioredis'

// A real redis-server (Debian's package: apt-get install redis-server), started on a free port.
if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
  throw new Error('redis-server is not installed: apt-get install redis-server (.ci/run does)')
}

export async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  return port
}

export async function startRedis (port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => 20 })
  client.on('error', () => {})
  await client.connect().catch(() => {})
  while ((await client.ping().catch(() => '')) !== 'PONG') await new Promise((resolve) => setTimeout(resolve, 20))
  client.disconnect()
  return child
}

export async function stopRedis (child: ChildProcess): Promise<void> {
  child.kill('SIGTERM')
  await once(child, 'exit')
}
