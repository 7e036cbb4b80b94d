// `npm run bundle`: the service as the image and the npm package ship it, in dist/service. esbuild
// makes the commands one CommonJS file, commands.cjs, which the entry point main.js loads with the
// code V8 compiled of it at the last start (lib/process/code-cache.ts), and the image's healthcheck
// a file of its own; the packages that only a setting or a rare request loads, a file each
// (ON_DEMAND); beside them, each file's licence comments (*.LEGAL.txt) and
// THIRD-PARTY-LICENSES.txt, the licence of every package the bundle holds.
// `--outdir=` and `--metafile=` (esbuild's metadata of the builds, as JSON) are for the tests.
import { build } from 'esbuild'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'

const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3)
const outdir = option('outdir') ?? 'dist/service'
// Afresh: what ships is what this build makes, no file of an earlier one.
rmSync(outdir, { recursive: true, force: true })

const shared = {
  bundle: true,
  platform: 'node',
  target: 'node22.12',
  outdir,
  minifyWhitespace: true,
  minifySyntax: true,
  // Fastify requires these only on paths the service never takes (lib/schema-controller.ts).
  external: ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request'],
  alias: {
    'node:https': './lib/deferred/https.ts',
    'node:http2': './lib/deferred/http2.ts',
    'type-is': './lib/deferred/type-is.cjs',
    'jsonc-parser': './lib/deferred/jsonc-parser.cjs',
    assert: './lib/deferred/assert.cjs',
    'node:assert': './lib/deferred/assert.cjs',
    worker_threads: './lib/deferred/worker-threads.cjs',
    'node:worker_threads': './lib/deferred/worker-threads.cjs',
  },
  legalComments: 'external',
  logLevel: 'warning',
  metafile: true,
}

/**
 * Packages that only a setting or a rare request loads, each its own file beside the commands'
 * file, whose `require` loads it on first use, so that a start reads the commands' text without
 * them: ioredis for REDIS_URL; @fastify/swagger, with yaml, for the OpenAPI document; jsonc-parser
 * for a file that is not valid JSON (as lib/deferred/jsonc-parser.cjs requires it). prom-client
 * (METRICS) and type-is stay in the commands' file: shorter than Node's threshold of about 1 MB,
 * its text would become a string in V8's heap rather than one outside it, which costs a start more
 * than the shorter read saves.
 */
const ON_DEMAND = {
  ioredis: { file: 'ioredis', entry: 'ioredis' },
  '@fastify/swagger': { file: 'fastify-swagger', entry: '@fastify/swagger' },
  '../../node_modules/jsonc-parser/lib/esm/main.js': { file: 'jsonc-parser', entry: 'jsonc-parser/lib/esm/main.js' },
}
const resolve = createRequire(import.meta.url).resolve
const onDemand = await build({
  ...shared,
  entryPoints: Object.fromEntries(Object.values(ON_DEMAND).map(({ file, entry }) => [file, relative(process.cwd(), resolve(entry))])),
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
})
/** In the commands' file, an import of an ON_DEMAND package is a require of its file. */
const onDemandFiles = {
  name: 'on-demand-files',
  setup (build) {
    const paths = Object.keys(ON_DEMAND).map((path) => path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    build.onResolve({ filter: new RegExp(`^(${paths.join('|')})$`) }, ({ path }) => ({ path: `./${ON_DEMAND[path].file}.cjs`, external: true }))
  },
}

// The commands' file is one function, whose text Node reads as it is and V8 compiles with the
// code kept: CommonJS's arguments, and import.meta's url, which the loader gives.
const IMPORT_META_URL = '__importMetaUrl'
const commands = await build({
  ...shared,
  entryPoints: { commands: 'lib/process/cli.ts' },
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  define: { 'import.meta.url': IMPORT_META_URL },
  banner: { js: `(function (exports, require, module, __filename, __dirname, ${IMPORT_META_URL}) {` },
  footer: { js: '})' },
  plugins: [onDemandFiles],
})

/** The entry point's import of the commands (main.ts's, the one there is), made the loader of the commands' file. */
const commandsFile = {
  name: 'commands-file',
  setup (build) {
    build.onResolve({ filter: /^\.\/cli\.ts$/ }, () => ({ path: 'commands', namespace: 'commands-file' }))
    build.onLoad({ filter: /./, namespace: 'commands-file' }, () => ({
      resolveDir: 'lib/process',
      loader: 'ts',
      contents: `import { codeCacheFile, loadBundle } from './code-cache.ts'
const file = process.getBuiltinModule('node:url').fileURLToPath(new URL('./commands.cjs', import.meta.url))
const { exports, keep } = loadBundle(file, codeCacheFile(process.env, file))
export const run = (argv: string[]) => (exports.run as (argv: string[], keep: () => void) => Promise<void>)(argv, keep)`,
    }))
  },
}
const entries = await build({
  ...shared,
  entryPoints: ['lib/process/main.ts', 'lib/process/healthcheck.ts'],
  format: 'esm',
  plugins: [commandsFile],
})
const builds = [entries, commands, onDemand]
const metafile = { inputs: Object.assign({}, ...builds.map(({ metafile }) => metafile.inputs)), outputs: Object.assign({}, ...builds.map(({ metafile }) => metafile.outputs)) }
if (option('metafile') !== undefined) writeFileSync(option('metafile'), JSON.stringify(metafile))

/** Each package folder the bundle takes code from: the innermost node_modules/<name> of an input. */
const folders = new Set(Object.keys(metafile.inputs).flatMap((input) => /^(?:.*\/)?node_modules\/(?:@[^/]+\/)?[^/]+/.exec(input)?.[0] ?? []))
const notices = [...folders].sort().map((folder) => {
  const { name, version, license } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
  const file = readdirSync(folder).find((entry) => /^licen[cs]e/i.test(entry))
  const text = file !== undefined ? readFileSync(join(folder, file), 'utf8').trim() : `(the package has no licence file; its package.json says ${license})`
  return `== ${name} ${version} (${license})\n\n${text}\n`
})
writeFileSync(join(outdir, 'THIRD-PARTY-LICENSES.txt'),
  `The service's bundle holds code of these ${notices.length} packages, each under its own licence, whose text follows.\n\n${notices.join('\n')}`)
