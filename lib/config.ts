import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { getHeapStatistics } from 'node:v8'
import type { TSchema } from '@sinclair/typebox'
import { Errors } from '@sinclair/typebox/errors'
import { Default } from '@sinclair/typebox/value'
import { Environment } from '../schemas/config.ts'
import type { Level } from 'pino'
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
  maxHeaderSize: number
  drainDelayMs: number
  shutdownTimeoutMs: number
  /** Set when LOGIN_REQUIRED: every API path needs one of these tokens. */
  apiTokensFile?: string
  /** Where to read the live count of RQ workers; unset: the profile's count is served. */
  redisUrl?: string
  rqPollIntervalMs: number
  logLevel: Level | 'silent'
  accessLog: boolean
  metrics: boolean
  /** Bytes of rendered answers the response cache may hold. */
  cacheBytes: number
}

export class ConfigError extends Error {
  constructor (name: string, value: string, problem: string) {
    super(`Bad configuration ${name}=${JSON.stringify(value)}: ${problem}`)
    this.name = 'ConfigError'
  }
}

/** Reads and validates the configuration; throws a ConfigError naming the variable and the problem. */
export function loadConfig (env: NodeJS.ProcessEnv): Config {
  const names = Object.keys(Environment.properties) as Array<keyof Environment>
  const given = Object.fromEntries(names.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]))
  const raw = Default(Environment, given) as Environment
  const first = Errors(Environment, raw).First()
  if (first !== undefined) {
    const name = first.path.slice(1) as keyof Environment
    const schema = Environment.properties[name] as TSchema
    // A choice of words (true/false, log levels): name them rather than TypeBox's "Expected union value".
    const choices = (schema.anyOf as TSchema[] | undefined)?.map((choice) => String(choice.const))
    const problem = choices === undefined ? first.message : `expected ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`
    throw new ConfigError(name, String(raw[name]), `${problem} (${schema.description})`)
  }

  const port = Number(raw.PORT)
  if (port > 65535) throw new ConfigError('PORT', raw.PORT, 'a TCP port is at most 65535')
  const paginateCount = positive('PAGINATE_COUNT', raw.PAGINATE_COUNT)
  const hosts = allowedHosts(raw.ALLOWED_HOSTS)
  // Tokens that protect nothing would give a false sense of safety.
  if (raw.API_TOKENS_FILE !== undefined && raw.LOGIN_REQUIRED !== 'true') {
    throw new ConfigError('API_TOKENS_FILE', raw.API_TOKENS_FILE, 'tokens are only checked with LOGIN_REQUIRED=true; set it, or unset this')
  }
  const headersTimeoutMs = duration('HEADERS_TIMEOUT_MS', raw.HEADERS_TIMEOUT_MS)
  const requestTimeoutMs = duration('REQUEST_TIMEOUT_MS', raw.REQUEST_TIMEOUT_MS)
  // Node refuses a headers timeout longer than the request timeout it is part of.
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError('REQUEST_TIMEOUT_MS', raw.REQUEST_TIMEOUT_MS, `expected at least HEADERS_TIMEOUT_MS (${headersTimeoutMs})`)
  }
  return {
    port,
    host: raw.HOST,
    profile: raw.PROFILE ?? DEFAULT_PROFILE_FILE,
    profileWatch: raw.PROFILE_WATCH === 'true',
    ...(raw.PUBLIC_URL !== undefined && { publicUrl: publicUrl(raw.PUBLIC_URL) }),
    ...(raw.TRUST_PROXY !== undefined && { trustProxy: trustProxy(raw.TRUST_PROXY) }),
    ...(hosts !== undefined && { allowedHosts: hosts }),
    paginateCount,
    // As in the reference, the maximum never undercuts the default page size.
    maxPageSize: Math.max(positive('MAX_PAGE_SIZE', raw.MAX_PAGE_SIZE), paginateCount),
    workers: raw.WORKERS === 'auto' ? availableParallelism() : positive('WORKERS', raw.WORKERS),
    keepAliveTimeoutMs: duration('KEEP_ALIVE_TIMEOUT_MS', raw.KEEP_ALIVE_TIMEOUT_MS),
    headersTimeoutMs,
    requestTimeoutMs,
    maxHeaderSize: positive('MAX_HEADER_SIZE', raw.MAX_HEADER_SIZE),
    drainDelayMs: duration('DRAIN_DELAY_MS', raw.DRAIN_DELAY_MS, 0),
    shutdownTimeoutMs: duration('SHUTDOWN_TIMEOUT_MS', raw.SHUTDOWN_TIMEOUT_MS),
    ...(raw.LOGIN_REQUIRED === 'true' && { apiTokensFile: apiTokensFile(raw.API_TOKENS_FILE) }),
    ...(raw.REDIS_URL !== undefined && { redisUrl: redisUrl(raw.REDIS_URL) }),
    rqPollIntervalMs: duration('RQ_POLL_INTERVAL_MS', raw.RQ_POLL_INTERVAL_MS),
    logLevel: raw.LOG_LEVEL as Config['logLevel'],
    accessLog: raw.ACCESS_LOG === 'true',
    metrics: raw.METRICS === 'true',
    cacheBytes: raw.CACHE_MAX_MB === undefined ? defaultCacheBytes() : positive('CACHE_MAX_MB', raw.CACHE_MAX_MB) * MiB,
  }
}

const MiB = 1024 * 1024

/**
 * A share of the heap V8 may grow to (which Node sizes from the container's memory limit, or
 * --max-old-space-size sets): the cache must leave room for the answers being made and their
 * garbage, or a small container runs out of heap under load. At most 16 MiB, some 2000 full
 * pages: past that, a larger cache buys hits only for a working set few deployments have, and
 * under a cache-busting load (which fills it) costs RSS one for one (docs/performance.md).
 */
function defaultCacheBytes (): number {
  return Math.min(16 * MiB, Math.floor(getHeapStatistics().heap_size_limit / 8))
}

function positive (name: string, value: string): number {
  const number = Number(value)
  if (number < 1 || !Number.isSafeInteger(number)) throw new ConfigError(name, value, 'expected a whole number from 1 up')
  return number
}

/**
 * A listen error that says the HOST is unusable (not an address of this machine, or a name that
 * does not resolve), as the configuration error it is; undefined for any other error.
 */
export function hostProblem (error: NodeJS.ErrnoException, host: string): ConfigError | undefined {
  if (!['ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL', 'EAI_NONAME'].includes(String(error.code))) return undefined
  return new ConfigError('HOST', host, `cannot listen there (${error.message})`)
}

/** Node's timers take at most 2^31 - 1 ms (about 24 days); a longer one would fire at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

function duration (name: string, value: string, min = 1): number {
  const ms = Number(value)
  if (ms < min || ms > LONGEST_TIMER_MS) throw new ConfigError(name, value, `expected ${min} to ${LONGEST_TIMER_MS} ms`)
  return ms
}

function apiTokensFile (value: string | undefined): string {
  if (value === undefined) throw new ConfigError('LOGIN_REQUIRED', 'true', 'needs API_TOKENS_FILE, the file of the tokens to accept')
  return value
}

function redisUrl (value: string): string {
  if (!/^rediss?:\/\/[^/]/.test(value) || !URL.canParse(value)) {
    // The message is logged: never with the password.
    const shown = value.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
    throw new ConfigError('REDIS_URL', shown, 'expected redis://[user:password@]host[:port][/db] or rediss://…')
  }
  return value
}

function publicUrl (value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError('PUBLIC_URL', value, 'not an absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('PUBLIC_URL', value, 'expected an http or https URL')
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ConfigError('PUBLIC_URL', value, 'expected scheme, host and an optional path only (no credentials, query or fragment)')
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
    const family = isIP(address)
    const maxBits = family === 6 ? 128 : 32
    const validBits = bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= maxBits)
    if (family === 0 || !validBits || rest.length > 0) {
      throw new ConfigError('TRUST_PROXY', value, `"${entry}" is not an IP address or CIDR range`)
    }
  }
  if (entries.length === 0) throw new ConfigError('TRUST_PROXY', value, 'expected at least one address or CIDR range')
  return entries
}

// A host name, or a domain with a leading dot for it and its subdomains, or a bracketed IPv6 address.
const HOST_PATTERN = /^(\.?[a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/

function allowedHosts (value: string): string[] | undefined {
  const entries = list(value).map((entry) => entry.toLowerCase())
  if (entries.length === 0) throw new ConfigError('ALLOWED_HOSTS', value, 'expected at least one host name or *')
  for (const entry of entries) {
    if (entry !== '*' && !HOST_PATTERN.test(entry)) {
      throw new ConfigError('ALLOWED_HOSTS', value, `"${entry}" is not a host name, .domain, [IPv6] or *`)
    }
  }
  return entries.includes('*') ? undefined : entries
}
