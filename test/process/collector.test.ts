import t from 'tap'
import { v8 } from '../../lib/builtins.ts'
import { collectForServing, collectForStopping } from '../../lib/process/collector.ts'

t.test('the collector is set for serving until the drain begins, and stays set for stopping after it', async (t) => {
  const flags: string[] = []
  const { setFlagsFromString } = v8
  v8.setFlagsFromString = (flag: string) => { flags.push(flag) }
  t.teardown(() => { v8.setFlagsFromString = setFlagsFromString })
  collectForServing()
  t.same(flags.splice(0), ['--no-allocation-site-pretenuring', '--no-incremental-marking'], 'set for serving')
  collectForStopping()
  t.same(flags.splice(0), ['--incremental-marking'], 'set for stopping')
  collectForServing()
  t.same(flags, [], 'a first answer sent during the drain leaves it set for stopping')
})
