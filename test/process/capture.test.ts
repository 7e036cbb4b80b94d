import t from 'tap'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { progressOn } from '../../lib/process/capture.ts'
import { childEnv, start, TYPESCRIPT } from '../helpers/process.ts'

// The capture command's progress: rewritten in place on a terminal, its finished lines only elsewhere.

function recorded (isTTY: boolean) {
  const written: string[] = []
  return { stream: { isTTY, write: (text: string) => written.push(text) > 0 }, written }
}

t.test('on a terminal, a step is drawn as it goes, at most every 100 ms, and stays once finished', async (t) => {
  const { stream, written } = recorded(true)
  const progress = progressOn(stream)
  progress.line('status: read')
  for (let page = 1; page <= 50; page++) progress.step(`page ${page} of 50`, page === 50)
  progress.step('samples: 1 of 9', false)
  progress.line('capture failed: gone')
  t.same(written, [
    'status: read\n',
    '\r\x1b[Kpage 1 of 50',
    // Pages 2 to 49 came within 100 ms of the first: not drawn.
    '\r\x1b[Kpage 50 of 50\n',
    '\r\x1b[Ksamples: 1 of 9',
    // A line after an unfinished step starts below it.
    '\ncapture failed: gone\n',
  ])
})

t.test('elsewhere (a pipe, a log), only the lines that stay and each step once finished', async (t) => {
  const { stream, written } = recorded(false)
  const progress = progressOn(stream)
  progress.line('status: read')
  for (let page = 1; page <= 3; page++) progress.step(`page ${page} of 3`, page === 3)
  progress.line('wrote it')
  t.same(written, ['status: read\n', 'page 3 of 3\n', 'wrote it\n'])
})

t.test('a real capture on a terminal shows the pages as they are read', async (t) => {
  const source = await start(t, { MAX_PAGE_SIZE: '50' })
  const out = join(t.testdir(), 'captured.json')
  const main = new URL('../../lib/process/main.ts', import.meta.url).pathname
  const command = [process.execPath, ...TYPESCRIPT, main, 'capture', `http://127.0.0.1:${source.port}`, '--out', out].map((word) => `'${word}'`).join(' ')
  // util-linux's script runs the command on a terminal of its own, and copies what it writes. Its
  // coverage comes through tap's process-info module, which tap adds to the NODE_OPTIONS of a child.
  const run = spawnSync('script', ['-qefc', command, '/dev/null'], { encoding: 'utf8', timeout: 60_000, env: childEnv() })
  t.equal(run.status, 0, run.stdout)
  t.match(run.stdout, '\r\x1b[Kobject types: 50 of 163, page 1 of 4', 'the first page, drawn in place')
  t.match(run.stdout, '\r\x1b[Kobject types: 163 of 163, page 4 of 4\r\n', 'the last, which stays')
  t.match(run.stdout, `wrote ${out}: 163 object types\r\n`)
})
