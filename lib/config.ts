import type { TSchema } from '@sinclair/typebox'
import { Check } from '@sinclair/typebox/value'
import { setting, VARIABLES, type Environment, type Words } from '../schemas/config.ts'
import type { Level } from 'pino'
import { net, os, v8 } from './builtins.ts'
import type { StatusKeys } from './inventory/catalog.ts'
import { DEFAULT_PROFILE_FILE } from './inventory/profile.ts'

export interface Config {
  port: number
  host: string
  profile: string
  profileWatch: boolean
  /** Replaces the request-derived base of every absolute URL; no trailing slash. */
  publicUrl?: string
  trustProxy?: string[]
  /** undefined: any Host is allowed. */
  allowedHosts?: string[]
  paginateCount: number
  maxPageSize: number
  /** Processes serving the port (node:cluster when more than one). */
  workers: number
  keepAliveTimeoutMs: number
  headersTimeoutMs: number
  requestTimeoutMs: number
  /** How long a client may take nothing of an answer written to it (a send timeout) before its connection is closed. */
  sendTimeoutMs: number
  maxHeaderSize: number
  /** Open connections a process keeps; one more is refused (front/server.ts). */
  maxConnections: number
  drainDelayMs: number
  shutdownTimeoutMs: number
  /** Every API path needs a known token (`Authorization: Token <key>`). */
  loginRequired: boolean
  /** The known tokens; unset, no key is known. */
  apiTokensFile?: string
  /** Where to read the live count of RQ workers; unset: the profile's count is served. */
  redisUrl?: string
  rqPollIntervalMs: number
  logLevel: Level | 'silent'
  accessLog: boolean
  metrics: boolean
  /** The status's key names (see StatusKeys). */
  statusKeys: StatusKeys
  /** Bytes of rendered answers the response cache may hold. */
  cacheBytes: number
  /** The faults file; unset, no fault is injected. */
  faults?: string
  /** What the service changed from what it was given, and variables it ignores that look like its own: warned of at start-up. */
  warnings: string[]
}

export class ConfigError extends Error {
  /** A start-up stopped by its configuration exits as one stopped by a wrong command line. */
  readonly exitCode = 2

  constructor (message: string) {
    super(message)
    this.name = 'ConfigError'
  }

  /** `PORT must be a whole number from 0 to 65535; got "abc"`, and what is wrong with it, if more is known. */
  static invalid (name: keyof Environment, value: string, detail?: string): ConfigError {
    return new ConfigError(`${name} must be ${setting(name).accepts}; got ${JSON.stringify(value)}${detail === undefined ? '' : ` (${detail})`}`)
  }
}

/** Whether a value is one its variable accepts: its schema, and the range of a whole number. */
function accepted (schema: TSchema & Words, value: string): boolean {
  if (!Check(schema, value)) return false
  if (schema.range === undefined || !/^[0-9]+$/.test(value)) return true
  const number = Number(value)
  return number >= schema.range[0] && number <= schema.range[1]
}

/**
 * Reads and validates the configuration; throws a ConfigError that names the variable, the value and
 * what is accepted. `adjusted` lists what the service changed from what it was given, and why.
 */
export function loadConfig (env: NodeJS.ProcessEnv): Config {
  const values: Partial<Record<keyof Environment, string>> = {}
  for (const name of VARIABLES) {
    const schema = setting(name)
    const value = env[name] ?? schema.default as string | undefined
    if (value === undefined) continue
    if (!accepted(schema, value)) throw ConfigError.invalid(name, name === 'REDIS_URL' ? withoutPassword(value) : value)
    values[name] = value
  }
  // Every variable with a default now has a value.
  const given = values as Environment
  const hosts = allowedHosts(given.ALLOWED_HOSTS)
  if (given.LOGIN_REQUIRED === 'true' && given.API_TOKENS_FILE === undefined) {
    throw new ConfigError('LOGIN_REQUIRED=true needs API_TOKENS_FILE, the path of the file of the tokens to accept')
  }
  const headersTimeoutMs = Number(given.HEADERS_TIMEOUT_MS)
  const requestTimeoutMs = Number(given.REQUEST_TIMEOUT_MS)
  // Node refuses a headers timeout longer than the request timeout it is part of.
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(`REQUEST_TIMEOUT_MS must be at least HEADERS_TIMEOUT_MS (${headersTimeoutMs}); got ${JSON.stringify(given.REQUEST_TIMEOUT_MS)}`)
  }
  const paginateCount = Number(given.PAGINATE_COUNT)
  const maxPageSize = Number(given.MAX_PAGE_SIZE)
  const warnings = misspelt(env)
  // As in the reference, the maximum never undercuts the default page size.
  if (maxPageSize < paginateCount) {
    warnings.push(`MAX_PAGE_SIZE=${maxPageSize} is below PAGINATE_COUNT=${paginateCount}: pages of up to ${paginateCount} items are served, as the reference does`)
  }
  return {
    port: Number(given.PORT),
    host: given.HOST,
    profile: given.PROFILE ?? DEFAULT_PROFILE_FILE,
    profileWatch: given.PROFILE_WATCH === 'true',
    ...(given.PUBLIC_URL !== undefined && { publicUrl: publicUrl(given.PUBLIC_URL) }),
    ...(given.TRUST_PROXY !== undefined && { trustProxy: trustProxy(given.TRUST_PROXY) }),
    ...(hosts !== undefined && { allowedHosts: hosts }),
    paginateCount,
    maxPageSize: Math.max(maxPageSize, paginateCount),
    workers: given.WORKERS === 'auto' ? os.availableParallelism() : Number(given.WORKERS),
    keepAliveTimeoutMs: Number(given.KEEP_ALIVE_TIMEOUT_MS),
    headersTimeoutMs,
    requestTimeoutMs,
    sendTimeoutMs: Number(given.SEND_TIMEOUT_MS),
    maxHeaderSize: Number(given.MAX_HEADER_SIZE),
    maxConnections: given.MAX_CONNECTIONS === undefined ? defaultMaxConnections() : Number(given.MAX_CONNECTIONS),
    drainDelayMs: Number(given.DRAIN_DELAY_MS),
    shutdownTimeoutMs: Number(given.SHUTDOWN_TIMEOUT_MS),
    loginRequired: given.LOGIN_REQUIRED === 'true',
    ...(given.API_TOKENS_FILE !== undefined && { apiTokensFile: given.API_TOKENS_FILE }),
    ...(given.REDIS_URL !== undefined && { redisUrl: redisUrl(given.REDIS_URL) }),
    rqPollIntervalMs: Number(given.RQ_POLL_INTERVAL_MS),
    logLevel: given.LOG_LEVEL,
    accessLog: given.ACCESS_LOG === 'true',
    metrics: given.METRICS === 'true',
    statusKeys: given.STATUS_KEYS,
    cacheBytes: given.CACHE_MAX_MB === undefined ? defaultCacheBytes() : Number(given.CACHE_MAX_MB) * MiB,
    ...(given.FAULTS !== undefined && { faults: given.FAULTS }),
    warnings,
  }
}

/**
 * A variable that is not one of the service's but looks like one (the same first letter, then one
 * letter off, two swapped, or two off in a long name): most likely a typo, which would otherwise
 * leave a setting at its default unseen (`ALLOWED_HOST`, `LOGIN_REQUIERD`).
 */
function misspelt (env: NodeJS.ProcessEnv): string[] {
  const known = new Set<string>(VARIABLES)
  const warnings: string[] = []
  for (const name of Object.keys(env)) {
    // Ours are upper case; a typo that changes the first letter is taken for another name. Few
    // names are compared at all: a start that compared every one paid for V8 compiling the loop.
    if (known.has(name) || !/^[A-Z][A-Z0-9_]*$/.test(name)) continue
    const like = VARIABLES.find((variable) => variable[0] === name[0] && distance(name, variable) <= (variable.length >= 10 ? 2 : 1))
    if (like !== undefined) warnings.push(`${name} is not a setting of this service and is ignored: did you mean ${like}?`)
  }
  return warnings
}

/** Rows of the edit distance below, made once: names longer than this are no typo of ours. */
const LONGEST_NAME = 64
const rows = [new Uint8Array(LONGEST_NAME + 1), new Uint8Array(LONGEST_NAME + 1), new Uint8Array(LONGEST_NAME + 1)] as const

/**
 * Edits between two names (letters inserted, deleted or replaced, or two neighbours swapped), or
 * 3 for any more, without allocating: a process's environment is checked name by name at start.
 */
function distance (a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > LONGEST_NAME || b.length > LONGEST_NAME) return 3
  let [before, previous, current] = rows
  for (let j = 0; j <= b.length; j++) previous[j] = j
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1)
      current[j] = best
    }
    const reused = before
    before = previous
    previous = current
    current = reused
  }
  return previous[b.length]!
}

const MiB = 1024 * 1024

/**
 * A share of the heap V8 may grow to (which Node sizes from the container's memory limit, or
 * --max-old-space-size sets): the cache must leave room for the answers being made and their
 * garbage, or a small container runs out of heap under load. At most 4 MiB, some 470 full
 * pages: what a full cache adds to the worst minute under load (docs/performance.md).
 */
function defaultCacheBytes (): number {
  return Math.min(4 * MiB, Math.floor(v8.getHeapStatistics().heap_size_limit / 8))
}

/**
 * The connections the heap limit holds: what the process holds besides them (its code, the
 * profile, the cache, the answers the process lets wait: pipelining.ts) is within 24 MiB, and a
 * connection whose client pipelines and never reads holds up to 10 KiB of heap (idle, 4).
 */
function defaultMaxConnections (): number {
  return Math.max(64, Math.floor((v8.getHeapStatistics().heap_size_limit - 24 * MiB) / (10 * 1024)))
}

/**
 * What stops the service from listening, in the words of its settings: a HOST that is no address of
 * this machine (or a name that does not resolve) is the configuration error it is; a port in use or
 * not permitted names PORT, HOST and the address; any other error is the system's own.
 */
export function listenProblem (error: NodeJS.ErrnoException, port: number, host: string): Error {
  if (['ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL', 'EAI_NONAME'].includes(String(error.code))) return ConfigError.invalid('HOST', host, error.message)
  // Node's listen errors name the address the host resolved to.
  const { address, port: bound } = error as NodeJS.ErrnoException & { address: string, port: number }
  const at = `${address}:${bound}`
  if (error.code === 'EADDRINUSE') return new Error(`PORT=${port} HOST=${host}: ${at} is already in use; set PORT to a free port, or stop what listens there`)
  if (error.code === 'EACCES') return new Error(`PORT=${port} HOST=${host}: listening on ${at} is not permitted (a port below 1024 needs privileges); set PORT to 1024 or above`)
  return error
}

function redisUrl (value: string): string {
  if (!/^rediss?:\/\/[^/]/.test(value) || !URL.canParse(value)) throw ConfigError.invalid('REDIS_URL', withoutPassword(value))
  return value
}

/** Configuration errors are logged: never with a password. */
function withoutPassword (url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
}

function publicUrl (value: string): string {
  const url = URL.parse(value)
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw ConfigError.invalid('PUBLIC_URL', value)
  }
  return url.origin + url.pathname.replace(/\/+$/, '')
}

function list (value: string): string[] {
  return value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
}

function trustProxy (value: string): string[] {
  const entries = list(value)
  for (const entry of entries) {
    const [address = '', bits, ...rest] = entry.split('/')
    const family = net.isIP(address)
    const maxBits = family === 6 ? 128 : 32
    const validBits = bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= maxBits)
    if (family === 0 || !validBits || rest.length > 0) {
      throw ConfigError.invalid('TRUST_PROXY', value, `${JSON.stringify(entry)} is neither`)
    }
  }
  if (entries.length === 0) throw ConfigError.invalid('TRUST_PROXY', value, 'none is given')
  return entries
}

// A host name, or a domain with a leading dot for it and its subdomains, or a bracketed IPv6 address.
const HOST_PATTERN = /^(\.?[a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/

function allowedHosts (value: string): string[] | undefined {
  const entries = list(value).map((entry) => entry.toLowerCase())
  if (entries.length === 0) throw ConfigError.invalid('ALLOWED_HOSTS', value, 'none is given')
  for (const entry of entries) {
    if (entry !== '*' && !HOST_PATTERN.test(entry)) {
      throw ConfigError.invalid('ALLOWED_HOSTS', value, `${JSON.stringify(entry)} is none of these`)
    }
  }
  return entries.includes('*') ? undefined : entries
}
