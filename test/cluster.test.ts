import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { TYPESCRIPT } from './service.ts'
import { until } from './wait.ts'

const PRIMARY = new URL('./fixtures/supervise.ts', import.meta.url).pathname

t.test('a signal while the workers stop after a failed start changes nothing: one stop, exit 1', async (t) => {
  const primary = spawn(process.execPath, [...TYPESCRIPT, PRIMARY], { stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  primary.stdout.on('data', (chunk) => { output += chunk })
  const exited = once(primary, 'exit')
  await until('the failed start', () => output.includes('"msg":"stopping all workers"'))
  primary.kill('SIGTERM')
  primary.kill('SIGINT')
  const [code] = await exited
  t.equal(code, 1, 'the failed start decides the exit code')
  t.match(output, '"msg":"SIGTERM: closing all workers; already stopping"')
  t.match(output, '"msg":"SIGINT: closing all workers; already stopping"')
  t.notMatch(output, 'did not finish in time', 'no second kill timer fired')
})
