import t, { type Test } from 'tap'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { digestOf } from '../../lib/http/entity-tag.ts'
import { codeCacheFile, loadBundle } from '../../lib/process/code-cache.ts'
import { until } from '../helpers/wait.ts'

/** A commands' file as the bundle writes it (.ci/bundle.mjs): one function of CommonJS's arguments and import.meta's url. */
const COMMANDS = `(function (exports, require, module, __filename, __dirname, __importMetaUrl) {
  exports.where = { file: __filename, dir: __dirname, url: __importMetaUrl, beside: require.resolve('./beside.cjs') }
  exports.twice = (n) => 2 * n
  module.exports.builtin = require('node:path').sep
})`

/** The test's folder, with the commands' file and a file beside it; `more`: other files. */
function commands (t: Test, more: Record<string, string> = {}): string {
  const dir = t.testdir({ 'commands.cjs': COMMANDS, 'beside.cjs': 'module.exports = 1', ...more })
  return join(dir, 'commands.cjs')
}

/** Whether a load of `file` reads the code kept in `cache`: one that does writes none, so the file, removed meanwhile, stays gone. */
function readsKept (file: string, cache: string): boolean {
  const { keep } = loadBundle(file, cache)
  rmSync(cache)
  keep()
  return !existsSync(cache)
}

t.test('the commands run with what CommonJS and import.meta would give them', async (t) => {
  const file = commands(t)
  const { exports } = loadBundle(file, undefined)
  t.same(exports.where, { file, dir: join(file, '..'), url: pathToFileURL(file).href, beside: join(file, '../beside.cjs') })
  t.equal((exports.twice as (n: number) => number)(21), 42)
  t.equal(exports.builtin, '/')
})

t.test('the code is kept once, then read: a start that read it does not write it again', async (t) => {
  const file = commands(t)
  const cache = join(file, '../cache/commands.code')
  const first = loadBundle(file, cache)
  t.notOk(existsSync(cache), 'nothing written at load')
  first.keep()
  const kept = readFileSync(cache)
  t.ok(kept.length > 0, `kept, in a folder made for it (${kept.length} bytes)`)
  first.keep()
  t.same(readdirSync(join(cache, '..')), ['commands.code'], 'kept once, and no temporary file left')
  t.ok(readsKept(file, cache), 'read at the next load, and not written again')
})

t.test('the kept code is read into the memory the text was read into where it fits, and read as well where it does not', async (t) => {
  // A text longer than its code (a long comment, of which V8 keeps no code), and the short one.
  for (const [what, text] of [['a longer text', `${COMMANDS}\n/*${'x'.repeat(64 * 1024)}*/\n`], ['a shorter text', COMMANDS]] as const) {
    await t.test(what, async (t) => {
      const file = commands(t, { 'commands.cjs': text })
      const cache = join(file, '../commands.code')
      loadBundle(file, cache).keep()
      const code = readFileSync(cache).length
      t.equal(code <= text.length, what === 'a longer text', `${code} bytes of code, ${text.length} of text`)
      t.ok(readsKept(file, cache), 'the code read at the next load')
      t.equal((loadBundle(file, undefined).exports.twice as (n: number) => number)(4), 8, 'the commands run')
    })
  }
})

t.test('code V8 refuses (another text, other flags, a torn file) is compiled afresh and kept anew', async (t) => {
  const file = commands(t, { 'commands.code': 'not code' })
  const cache = join(file, '../commands.code')
  const refused = loadBundle(file, cache)
  t.equal((refused.exports.twice as (n: number) => number)(3), 6, 'the commands run all the same')
  refused.keep()
  t.not(readFileSync(cache, 'utf8'), 'not code', 'kept anew')
  t.ok(readsKept(file, cache), 'and read at the next load')
})

t.test('where it cannot be written, the code is not kept, and nothing fails', async (t) => {
  const file = commands(t, { 'a-file': '' })
  // A folder that cannot be made: its parent is a file.
  const blocked = join(file, '../a-file/commands.code')
  const { keep } = loadBundle(file, blocked)
  t.doesNotThrow(keep)
  t.notOk(existsSync(blocked))
  // A file that cannot be replaced: a folder stands in its place. Its temporary file is removed.
  const occupied = join(file, '../occupied')
  mkdirSync(join(occupied, 'inside'), { recursive: true })
  t.doesNotThrow(loadBundle(file, occupied).keep)
  await until('the temporary file removed', () => readdirSync(join(file, '..')).every((name) => !name.startsWith('occupied.')))
  t.same(readdirSync(occupied), ['inside'])
  t.doesNotThrow(loadBundle(file, undefined).keep, 'nor without a file to keep it in')
})

t.test('the code is kept where Node keeps its compile cache, one file per Node version, machine and bundle', async (t) => {
  const file = '/app/dist/service/commands.cjs'
  const name = `inventory-status-api-${process.version}-${process.arch}-${digestOf(file)}.code`
  t.equal(codeCacheFile({ NODE_COMPILE_CACHE: '/var/cache/service' }, file), join('/var/cache/service', name))
  t.equal(codeCacheFile({}, file), join(tmpdir(), 'node-compile-cache', name), 'else node-compile-cache in the temporary folder')
  t.equal(codeCacheFile({ NODE_COMPILE_CACHE: '' }, file), join(tmpdir(), 'node-compile-cache', name), 'an empty one is none')
  t.not(codeCacheFile({}, '/elsewhere/dist/service/commands.cjs'), codeCacheFile({}, file), 'another bundle\'s is another file')
  t.equal(codeCacheFile({ NODE_DISABLE_COMPILE_CACHE: '1', NODE_COMPILE_CACHE: '/var/cache/service' }, file), undefined, 'NODE_DISABLE_COMPILE_CACHE turns it off')
})
