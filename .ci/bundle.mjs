// `npm run bundle`: the service as the image and the npm package ship it, in dist/service. esbuild
// makes one chunk of what each import reaches; beside them, each chunk's licence comments
// (*.LEGAL.txt) and THIRD-PARTY-LICENSES.txt, the licence of every package the bundle holds.
// `--outdir=` and `--metafile=` (esbuild's metadata, as JSON) are for the tests.
import { build } from 'esbuild'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3)
const outdir = option('outdir') ?? 'dist/service'
// Afresh: what ships is what this build makes, no chunk of an earlier one.
rmSync(outdir, { recursive: true, force: true })

const { metafile } = await build({
  entryPoints: ['lib/process/main.ts', 'lib/process/healthcheck.ts'],
  bundle: true,
  splitting: true,
  format: 'esm',
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
    // Its UMD build requires its modules by path at run time.
    'jsonc-parser': 'jsonc-parser/lib/esm/main.js',
  },
  legalComments: 'external',
  logLevel: 'warning',
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  metafile: true,
})
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
