import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fetch } from '../helpers/http.ts'
import { start } from '../helpers/process.ts'
import { needs } from '../helpers/programs.ts'

// docs/load-testing.md's wrk scripts, as a load tester copies them, against the service: the misses
// script never asks for a URL twice, the pipelining one gets every answer.

const GUIDE = readFileSync(new URL('../../docs/load-testing.md', import.meta.url), 'utf8')
const script = (name: string) => new RegExp(`\`\`\`lua\\n(-- ${name.replace('.', '\\.')}:[^]*?)\`\`\``).exec(GUIDE)![1]!
const PAGE = '/api/extras/object-types/?limit=50&offset=50'
const counted = (metrics: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)![1])

t.test('unique.lua: every request a new URL, so every answer is made by Fastify, none replayed', { skip: needs('wrk') }, async (t) => {
  const service = await start(t, { METRICS: 'true' })
  const file = join(t.testdir(), 'unique.lua')
  writeFileSync(file, script('unique.lua'))
  // wrk's timeout as a hang detector.
  const out = execFileSync('wrk', ['-t2', '-c20', '-d2s', '--timeout', '60s', '-s', file, '-H', 'Host: inventory.example.com', `http://127.0.0.1:${service.port}${PAGE}`]).toString()
  const requests = Number(/(\d+) requests in/.exec(out)![1])
  t.notMatch(out, /Socket errors|Non-2xx/, 'no error, every answer a 200')
  const metrics = (await fetch(service.port, '/metrics')).body
  t.equal(counted(metrics, 'inventory_cache_hits_total'), 0, 'nothing replayed')
  t.ok(counted(metrics, 'inventory_cache_misses_total') >= requests, `every one of the ${requests} answers made by Fastify`)
})

t.test('pipeline.lua: 64 requests at a time on each connection, every answer a 200', { skip: needs('wrk') }, async (t) => {
  const service = await start(t)
  const file = join(t.testdir(), 'pipeline.lua')
  writeFileSync(file, script('pipeline.lua'))
  const out = execFileSync('wrk', ['-t2', '-c20', '-d2s', '--timeout', '60s', '-s', file, '-H', 'Host: inventory.example.com', `http://127.0.0.1:${service.port}/api/status/`]).toString()
  t.ok(Number(/(\d+) requests in/.exec(out)![1]) > 0)
  t.notMatch(out, /Socket errors|Non-2xx/, 'no error, every answer a 200')
})
