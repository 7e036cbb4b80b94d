import type { IncomingMessage } from 'node:http'
import type { Profile, ProfileObjectType } from '../../schemas/profile.ts'
import { http } from '../builtins.ts'
import { plural } from '../plural.ts'

/**
 * Reads a live deployment of the inventory API (this service or the real one) into a profile:
 * its status and every object type, page after page. Anything unexpected stops the capture with a
 * CaptureError that says what was asked and what came back; nothing is guessed.
 */
export class CaptureError extends Error {
  constructor (problem: string) {
    super(problem)
    this.name = 'CaptureError'
  }
}

export interface CaptureOptions {
  /** Sent as `Authorization: Token <key>`, to the base URL's origin only. */
  token?: string
  /** The deadline of each request. */
  timeoutMs: number
  /** Where what was read goes, and how far a long step is. */
  progress: Progress
  /** Where each request's time to its whole answer goes, in milliseconds, by the path template it asked. */
  latencies?: Latencies
}

/** What a capture says as it goes. */
export interface Progress {
  /** A line that stays: what was read. */
  line: (text: string) => void
  /** How far a long step is, `finished` at its end: shown as it goes on a terminal, once done elsewhere. */
  step: (text: string, finished: boolean) => void
}

/** Milliseconds from a request to its whole answer, by the path template asked (`/api/extras/object-types/{id}/`). */
export type Latencies = Map<string, number[]>

const STATUS = '/api/status/'
const OBJECT_TYPES = '/api/extras/object-types/'
const OBJECT_TYPE = '/api/extras/object-types/{id}/'

/** A page of a real deployment is at most its MAX_PAGE_SIZE (1000 by default): ask for that, follow `next` for the rest. */
const PAGE_LIMIT = 1000
/** No answer of this API comes near this; a larger one is not this API. */
const MAX_BODY_BYTES = 16 * 1024 * 1024
/** The most object types a capture takes: far beyond any deployment, and within what a profile may hold. */
export const MAX_OBJECT_TYPES = 100_000

let trust: { ca?: string[] } | undefined

/**
 * The system's CAs besides Node's own, so that a deployment behind a company CA is trusted as curl
 * trusts it. Node before 22.15 cannot list them: there, Node's own and NODE_EXTRA_CA_CERTS. Read
 * on the first capture, as node:https and node:tls are loaded: serving imports this module too.
 */
function trusted (): { ca?: string[] } {
  if (trust === undefined) {
    const tls = process.getBuiltinModule('node:tls')
    /* c8 ignore next 3: which branch runs depends on the Node version, and CI runs the suite on two */
    trust = typeof tls.getCACertificates === 'function'
      ? { ca: [...tls.getCACertificates('default'), ...tls.getCACertificates('system')] }
      : {}
  }
  return trust
}

export async function capture (baseUrl: URL, options: CaptureOptions): Promise<Profile> {
  const statusUrl = new URL('api/status/', baseUrl)
  const status = readStatus(statusUrl, await getJson(statusUrl, STATUS, options))
  options.progress.line(`status: service-version ${status['service-version']}, ${plural(Object.keys(status.plugins).length, 'plugin')}, ${plural(status['rq-workers-running'], 'RQ worker')}`)
  return { status, objectTypes: await readObjectTypes(baseUrl, options) }
}

/**
 * Follows `next` from the first page to the last, and holds the items to the `count` every page
 * states, at most MAX_OBJECT_TYPES. Every page must bring object types not received before: a `next`
 * after one that brings none (or a link read before) makes no progress, and stops the capture.
 */
async function readObjectTypes (baseUrl: URL, options: CaptureOptions): Promise<ProfileObjectType[]> {
  const byId = new Map<number, ProfileObjectType>()
  const seen = new Set<string>()
  let expected: number | undefined
  /** Pages as the first one counts them: the count over its length. */
  let pages = 1
  let next: URL | undefined = new URL(`api/extras/object-types/?limit=${PAGE_LIMIT}`, baseUrl)
  for (let read = 1; next !== undefined; read++) {
    seen.add(next.href)
    const url: URL = next
    const page = readPage(url, await getJson(url, OBJECT_TYPES, options))
    if (expected !== undefined && page.count !== expected) {
      throw new CaptureError(`${url.href} says count ${page.count}, the first page said ${expected}: the object types changed during the capture`)
    }
    if (page.count > MAX_OBJECT_TYPES) throw new CaptureError(`${url.href} says count ${page.count}: more object types than a capture takes (at most ${MAX_OBJECT_TYPES})`)
    expected = page.count
    const before = byId.size
    for (const [index, item] of page.results.entries()) {
      const type = readObjectType(url, index, item)
      if (byId.has(type.id)) throw new CaptureError(`${url.href}: object type id ${type.id} was already received`)
      byId.set(type.id, type)
    }
    if (byId.size > expected) throw new CaptureError(`${url.href}: ${byId.size} object types received, more than the count ${expected}`)
    if (page.next !== null && byId.size === before) throw new CaptureError(`${url.href}: no object type on this page, and a next page: the pages make no progress`)
    if (read === 1) pages = Math.max(1, Math.ceil(expected / Math.max(1, page.results.length)))
    next = page.next === null ? undefined : nextPage(url, page.next, baseUrl, seen)
    options.progress.step(`object types: ${byId.size} of ${expected}, page ${read} of ${Math.max(pages, read)}`, next === undefined)
  }
  if (byId.size !== expected) throw new CaptureError(`the last page was read with ${byId.size} object types received, not the count ${expected}`)
  return [...byId.values()].sort((a, b) => a.id - b.id)
}

/** A `next` link is followed only on the base URL's origin (the token goes with it) and only once. */
function nextPage (url: URL, link: string, baseUrl: URL, seen: Set<string>): URL {
  let next: URL
  try {
    next = new URL(link, url)
  } catch {
    throw new CaptureError(`${url.href}: next ${JSON.stringify(link)} is not a URL`)
  }
  if (next.origin !== baseUrl.origin) {
    throw new CaptureError(`${url.href}: next ${next.href} leaves ${baseUrl.origin}; not following it (the token would go with it)`)
  }
  if (seen.has(next.href)) throw new CaptureError(`${url.href}: next ${next.href} was already read: the pages loop`)
  return next
}

/**
 * Each version under this service's key or the real deployment's own (`netbox-version`,
 * `django-version`, `python-version`, `netbox-full-version`).
 */
function readStatus (url: URL, body: unknown): Profile['status'] {
  const status = objectAt(url, body, 'the status')
  const version = (ours: string, theirs: string) => {
    const value = status[ours] ?? status[theirs]
    if (typeof value !== 'string') throw unexpected(url, `no "${ours}" or "${theirs}" text`)
    return value
  }
  const installed = versionsAt(url, status, 'installed-apps')
  const plugins = versionsAt(url, status, 'plugins')
  const workers = status['rq-workers-running']
  if (!Number.isSafeInteger(workers)) throw unexpected(url, `"rq-workers-running" is ${JSON.stringify(workers)}, not a whole number`)
  return {
    'framework-version': version('framework-version', 'django-version'),
    // The profile keeps the components; the service serves them with the plugins as `installed-apps`.
    'installed-apps': Object.fromEntries(Object.entries(installed).filter(([name]) => !Object.hasOwn(plugins, name))),
    plugins,
    'rq-workers-running': workers as number,
    'runtime-version': version('runtime-version', 'python-version'),
    'service-version': version('service-version', 'netbox-version'),
    ...fullVersion(url, status),
  }
}

/** The full version, when the deployment gives one. */
function fullVersion (url: URL, status: Record<string, unknown>): Pick<Profile['status'], 'service-full-version'> {
  const value = status['service-full-version'] ?? status['netbox-full-version']
  if (value === undefined) return {}
  if (typeof value !== 'string' || value === '') throw unexpected(url, `the full version is ${JSON.stringify(value)}, not a version`)
  return { 'service-full-version': value }
}

function versionsAt (url: URL, status: Record<string, unknown>, key: string): Record<string, string> {
  const versions = objectAt(url, status[key], `"${key}"`)
  for (const [name, version] of Object.entries(versions)) {
    if (typeof version !== 'string') throw unexpected(url, `"${key}" gives ${name} the version ${JSON.stringify(version)}, not a text`)
  }
  return versions as Record<string, string>
}

interface Page { count: number, next: string | null, results: unknown[] }

function readPage (url: URL, body: unknown): Page {
  const page = objectAt(url, body, 'a page of object types')
  if (!Number.isSafeInteger(page.count) || (page.count as number) < 0) throw unexpected(url, `"count" is ${JSON.stringify(page.count)}`)
  if (page.next !== null && typeof page.next !== 'string') throw unexpected(url, `"next" is ${JSON.stringify(page.next)}`)
  if (!Array.isArray(page.results)) throw unexpected(url, 'no "results" list')
  return page as unknown as Page
}

function readObjectType (url: URL, index: number, item: unknown): ProfileObjectType {
  const { id, app_label: appLabel, model, display } = objectAt(url, item, `results[${index}]`)
  if (!Number.isSafeInteger(id) || typeof appLabel !== 'string' || typeof model !== 'string' || typeof display !== 'string') {
    throw unexpected(url, `results[${index}] is not an object type with an id, app_label, model and display (${JSON.stringify(item)})`)
  }
  return { id: id as number, app_label: appLabel, model, display }
}

function objectAt (url: URL, value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unexpected(url, `${what} is not a JSON object`)
  return value as Record<string, unknown>
}

function unexpected (url: URL, problem: string): CaptureError {
  return new CaptureError(`${url.href} is not the inventory API's answer: ${problem}`)
}

/**
 * Times `samples` more requests of each endpoint, taking turns: the status, the first page of
 * object types, and the object type `id` (if there is one). Each must be answered as a capture's are.
 */
export async function sampleLatencies (baseUrl: URL, id: number | undefined, samples: number, options: CaptureOptions): Promise<void> {
  const asked: Array<readonly [URL, string]> = [[new URL('api/status/', baseUrl), STATUS], [new URL('api/extras/object-types/', baseUrl), OBJECT_TYPES]]
  if (id !== undefined) asked.push([new URL(`api/extras/object-types/${id}/`, baseUrl), OBJECT_TYPE])
  for (let sample = 1; sample <= samples; sample++) {
    for (const [url, template] of asked) await getJson(url, template, options)
    options.progress.step(`latency samples: ${sample} of ${samples}`, sample === samples)
  }
}

/**
 * GET with a deadline for the whole answer; 200 with a JSON body, or a CaptureError that says what
 * the server did. Its time to the whole answer is one of `template`'s latencies.
 */
async function getJson (url: URL, template: string, { token, timeoutMs, latencies }: CaptureOptions): Promise<unknown> {
  const started = performance.now()
  const request = url.protocol === 'https:' ? process.getBuiltinModule('node:https').request : http.request
  const headers = { accept: 'application/json', ...(token !== undefined && { authorization: `Token ${token}` }) }
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    const body = await new Promise((resolve, reject) => {
      request(url, { headers, signal, ...trusted() }, (response) => { readAnswer(url, response, token !== undefined).then(resolve, reject) })
        .on('error', reject)
        .end()
    })
    if (latencies !== undefined) {
      if (!latencies.has(template)) latencies.set(template, [])
      latencies.get(template)!.push(performance.now() - started)
    }
    return body
  } catch (error) {
    if (signal.aborted) throw new CaptureError(`${url.href}: no whole answer within ${timeoutMs / 1000} s`)
    if (error instanceof CaptureError) throw error
    // Newer Nodes append to a certificate error a hint to run with --use-system-ca, which
    // TRUST already does: the message is what comes before it.
    throw new CaptureError(`${url.href}: cannot be reached (${(error as Error).message.split(';', 1)[0]})`)
  }
}

async function readAnswer (url: URL, response: IncomingMessage, withToken: boolean): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) {
      response.destroy()
      throw unexpected(url, `the answer is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB`)
    }
    chunks.push(chunk)
  }
  const status = response.statusCode!
  if (status === 401 || status === 403) {
    throw new CaptureError(`${url.href} answered ${status}: ${withToken ? 'the token was refused' : 'a token is needed (--token or INVENTORY_TOKEN)'}`)
  }
  if (status === 404) throw new CaptureError(`${url.href} answered 404: the inventory API is not there (is the base URL the address before /api/?)`)
  if (status !== 200) {
    const location = response.headers.location
    throw new CaptureError(`${url.href} answered ${status}` + (location === undefined ? '' : `, to ${location} (redirects are not followed: give the base URL it leads to)`))
  }
  const text = Buffer.concat(chunks).toString('utf8')
  try {
    return JSON.parse(text)
  } catch {
    throw unexpected(url, `the body is not JSON (${JSON.stringify(text.slice(0, 80))})`)
  }
}
