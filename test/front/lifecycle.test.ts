import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { Lifecycle, queuedConnections } from '../../lib/front/lifecycle.ts'

/** Another process's 20 clients, which connect, write a request, and report how their connections ended. */
const CLIENTS = `
const net = require('node:net')
const ended = []
for (let i = 0; i < 20; i++) {
  const socket = net.connect(Number(process.argv[1]), '127.0.0.1', () => socket.write('GET /api/status/ HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n'))
  let how = 'closed'
  socket.on('error', (error) => { how = error.code })
  socket.on('close', () => { ended.push(how); if (ended.length === 20) console.log(JSON.stringify(ended.sort())) })
  socket.resume()
}
`

t.test('closing the listening sockets first accepts the connections the kernel queued in them, which closing would reset', async (t) => {
  const accepted: Socket[] = []
  const server = createServer((socket) => { accepted.push(socket) })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const lifecycle = new Lifecycle()
  lifecycle.accepts(server)
  const clients = spawn(process.execPath, ['-e', CLIENTS, String((server.address() as AddressInfo).port)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let report = ''
  clients.stdout.on('data', (chunk) => { report += chunk })
  // This event loop busy, as a loaded machine's, until the kernel has completed and queued the
  // clients' 20 connections (a minute at most: a hang detector).
  const { port } = server.address() as AddressInfo
  const busy = Date.now()
  while (queuedConnections(port) < 20 && Date.now() - busy < 60_000);
  t.equal(queuedConnections(port), 20, 'the 20 connections queued, none accepted yet')
  await lifecycle.stopAccepting()
  t.equal(accepted.length, 20, 'every queued connection accepted before its socket closed')
  for (const socket of accepted) socket.resume().end()
  await once(clients, 'exit')
  t.same(JSON.parse(report), Array(20).fill('closed'), 'none reset: each closed after the service ended it')
  await lifecycle.drained()
})
