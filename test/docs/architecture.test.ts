import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

// docs/architecture.md's layers hold in lib/: no module imports from a layer above its own.

const ROOT = new URL('../..', import.meta.url).pathname
const LAYOUT = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')
/** Each layer, lowest first, as the names of its folders and top-level modules. */
const LAYERS = /\n\((`reference`[^)]*)\), and no two modules import each other/.exec(LAYOUT)![1]!
  .split('<').map((layer) => [...layer.matchAll(/`([^`]+)`/g)].map((match) => match[1]!))
const layerOf = (file: string): number => {
  const [top] = relative(join(ROOT, 'lib'), file).split('/')
  return LAYERS.findIndex((names) => names.includes(top!))
}

t.test('no module of lib/ imports from a layer above its own', async (t) => {
  t.ok(LAYERS.length > 5, `the layers of docs/architecture.md: ${LAYERS.map((names) => names.join(', ')).join(' < ')}`)
  const upward: string[] = []
  for (const name of readdirSync(join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'))) {
    const file = join(ROOT, 'lib', name)
    const from = layerOf(file)
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?:from |import\()'(\.[^']+)'/g)) {
      const to = layerOf(join(dirname(file), specifier!))
      if (from !== -1 && to > from) upward.push(`lib/${name} imports ${specifier}`)
    }
  }
  t.same(upward, [])
})
