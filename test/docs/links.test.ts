import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

// Every way the docs and lib/'s comments point a reader elsewhere leads somewhere: a relative link
// to a file that exists (and to a heading it has), a path of the repository, and a "file, Section"
// reference to a section that file has.

const ROOT = new URL('../..', import.meta.url).pathname
const walk = (folder: string, ending: string): string[] => readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith(ending)).map((file) => join(folder, file))
const DOCS = ['README.md', ...['CONTRIBUTING.md'].filter((file) => existsSync(join(ROOT, file))), ...walk('docs', '.md'), ...walk('deploy', '.md')]
const SOURCES = [...walk('lib', '.ts'), ...walk('lib', '.mjs')]

/** A heading as GitHub anchors it. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
const headings = (file: string) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^#+ (.+)$/gm)].map((match) => match[1]!.trim())

/** What a text points at that is not there, each as `where: what`. */
function broken (file: string, text: string, firstLine = 1): string[] {
  const problems: string[] = []
  const at = (index: number) => `${file}:${firstLine + text.slice(0, index).split('\n').length - 1}`
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]!
    if (/^[a-z]+:/.test(target)) continue
    const [path, anchor] = target.split('#') as [string, string | undefined]
    const resolved = path === '' ? file : relative(ROOT, join(ROOT, dirname(file), path))
    if (!existsSync(join(ROOT, resolved))) problems.push(`${at(match.index)}: ${target}: no such file`)
    else if (anchor !== undefined && !headings(resolved).map(slug).includes(anchor)) problems.push(`${at(match.index)}: ${target}: no such heading`)
  }
  for (const match of text.matchAll(/(?<![\w/.-])((?:lib|test|bench|deploy|schemas|docs|data|\.ci)\/[\w./-]*[\w])(?![\w/])/g)) {
    const path = match[1]!
    if (!existsSync(join(ROOT, path))) problems.push(`${at(match.index)}: ${path}: no such path`)
  }
  for (const match of text.matchAll(/((?:docs\/)?[\w-]+\.md),\s+"?([A-Z][\w' -]*[\w])/g)) {
    const [, name, section] = match as unknown as [string, string, string]
    const target = [name, join('docs', name)].find((candidate) => existsSync(join(ROOT, candidate)))
    if (target === undefined) problems.push(`${at(match.index)}: ${name}: no such file`)
    else if (!headings(target).some((heading) => heading.toLowerCase().startsWith(section.toLowerCase()))) problems.push(`${at(match.index)}: ${name}, ${section}: no such section`)
  }
  return problems
}

t.test('every link and reference in the docs leads somewhere', async (t) => {
  t.same(DOCS.flatMap((file) => broken(file, readFileSync(join(ROOT, file), 'utf8'))), [])
})

/** Every module of lib/ by its name, and by its path under lib/. */
const MODULES = new Set(SOURCES.flatMap((file) => [file.slice('lib/'.length), file.slice(file.lastIndexOf('/') + 1)]))

/** A module a comment names by its path under lib/ (`front/server.ts`) or its own name (`cache.ts`) that is not there. */
function unknownModules (file: string, text: string, firstLine: number): string[] {
  const at = (index: number) => `${file}:${firstLine + text.slice(0, index).split('\n').length - 1}`
  return [...text.matchAll(/(?<![\w/.-])((?:[\w-]+\/)*[\w-]+\.(?:ts|mjs))(?![\w/])/g)]
    .filter((match) => !match[1]!.startsWith('lib/') && !/^(test|bench|schemas)\//.test(match[1]!) && !MODULES.has(match[1]!))
    .map((match) => `${at(match.index)}: ${match[1]}: no such module in lib/`)
}

t.test('every file, module and section that lib/\'s comments point at exists', async (t) => {
  const comments = (file: string) => {
    const text = readFileSync(join(ROOT, file), 'utf8')
    return [...text.matchAll(/\/\/.*$|\/\*[^]*?\*\//gm)].flatMap((match) => {
      const line = text.slice(0, match.index).split('\n').length
      return [...broken(file, match[0], line), ...unknownModules(file, match[0], line)]
    })
  }
  t.same(SOURCES.flatMap(comments), [])
})
