import type { Static, TSchema } from '@sinclair/typebox'
import * as Type from '@sinclair/typebox'

/**
 * Beyond JSON Schema, every variable says in words what it accepts and, where it has no
 * literal default, what happens when it is unset: the error messages and `--help` are made
 * from these, so that they cannot disagree with the checks.
 */
export interface Words {
  description: string
  accepts: string
  /** What an unset variable means, when it has no `default`. */
  unset?: string
  /** The bounds of a whole number, which a pattern cannot state. */
  range?: readonly [number, number]
}

/** Node's timers take at most 2^31 - 1 ms (about 24 days); a longer one would fire at once. */
export const LONGEST_TIMER_MS = 2 ** 31 - 1

const words = (from: number, to: number, unit = '') =>
  `a whole number${unit} from ${from} ${to === Number.MAX_SAFE_INTEGER ? 'up' : `to ${to}`}`

const whole = (fallback: string | undefined, description: string, from = 1, to = Number.MAX_SAFE_INTEGER, unit = '') =>
  Type.String({ pattern: '^[0-9]+$', ...(fallback !== undefined && { default: fallback }), description, accepts: words(from, to, unit), range: [from, to] })
/** A whole number from 1 up, or unset for what `unset` says. */
const countOrUnset = (description: string, unset: string) => Type.Optional(Type.String({
  pattern: '^[0-9]+$', description, accepts: words(1, Number.MAX_SAFE_INTEGER), range: [1, Number.MAX_SAFE_INTEGER], unset,
}))
const milliseconds = (fallback: string, description: string, from = 1) =>
  whole(fallback, description, from, LONGEST_TIMER_MS, ' of milliseconds')
const flag = (description: string) =>
  Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false', description, accepts: 'true or false' })
const text = (fallback: string | undefined, description: string, accepts: string, unset?: string) =>
  Type.String({ minLength: 1, ...(fallback !== undefined && { default: fallback }), description, accepts, ...(unset !== undefined && { unset }) })

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** The environment variables the service reads, as the strings they arrive as. */
export const Environment = Type.Object({
  PORT: whole('8080', 'TCP port to listen on; 0 picks a free one', 0, 65535),
  HOST: text('0.0.0.0', 'address to listen on (:: for IPv6)', 'an address or host name of this machine'),
  PROFILE: Type.Optional(text(undefined, 'the inventory profile to serve', 'the path of a profile JSON file', 'the embedded profile')),
  PROFILE_WATCH: flag('true reloads the profile when its file changes (SIGHUP always does)'),
  PUBLIC_URL: Type.Optional(text(undefined, 'replaces the request-derived base of every link',
    'an absolute http or https URL with an optional path (no credentials, query or fragment)', 'from each request')),
  TRUST_PROXY: Type.Optional(text(undefined, 'proxies whose X-Forwarded-Proto and X-Forwarded-Host count',
    'a comma-separated list of IP addresses and CIDR ranges', 'none')),
  ALLOWED_HOSTS: text('*', 'the Host names answered; any other gets a 400',
    'a comma-separated list of host names, .domains (a domain and its subdomains), [IPv6] addresses, or *'),
  PAGINATE_COUNT: whole('50', 'page size when limit is absent or invalid'),
  MAX_PAGE_SIZE: whole('1000', 'page size for limit=0 and the cap for larger ones; raised to PAGINATE_COUNT if below it'),
  WORKERS: Type.String({
    pattern: '^([0-9]+|auto)$',
    default: '1',
    description: 'processes serving the port',
    accepts: `${words(1, Number.MAX_SAFE_INTEGER)}, or auto for one per available CPU`,
    range: [1, Number.MAX_SAFE_INTEGER],
  }),
  KEEP_ALIVE_TIMEOUT_MS: milliseconds('72000', 'how long an idle keep-alive connection stays open; keep it above the load balancer\'s idle timeout'),
  HEADERS_TIMEOUT_MS: milliseconds('10000', 'time a client has to send the request headers'),
  REQUEST_TIMEOUT_MS: milliseconds('30000', 'time a client has to send the whole request; at least HEADERS_TIMEOUT_MS'),
  SEND_TIMEOUT_MS: milliseconds('30000', 'how long a client may read nothing of an answer written to it before its connection is closed'),
  MAX_HEADER_SIZE: whole('16384', 'largest request line plus headers, in bytes'),
  MAX_CONNECTIONS: countOrUnset('open connections each process keeps; a connection beyond them gets a 503 and is closed',
    'what the heap limit holds: one per 10 KiB of it beyond 24 MiB, at least 64'),
  DRAIN_DELAY_MS: milliseconds('5000', 'after SIGTERM, how long /readyz answers 503 while the API keeps serving', 0),
  SHUTDOWN_TIMEOUT_MS: milliseconds('10000', 'after the drain delay, how long requests get to finish before they are cut'),
  LOGIN_REQUIRED: flag('true requires an API token (Authorization: Token <key>) on every API path'),
  API_TOKENS_FILE: Type.Optional(text(undefined, 'the API tokens known (an unknown one is refused, login required or not); re-read on SIGHUP',
    'the path of a file of tokens, one a line or a JSON list', 'no token is known')),
  REDIS_URL: Type.Optional(text(undefined, 'the inventory service\'s Redis, for the live count of RQ workers',
    'redis://[user:password@]host[:port][/db] or rediss://…', 'the profile\'s count is served')),
  RQ_POLL_INTERVAL_MS: milliseconds('2000', 'how often the RQ worker count is read from Redis'),
  LOG_LEVEL: Type.Union(LEVELS.map((level) => Type.Literal(level)), {
    default: 'info',
    description: 'the least severe level logged',
    accepts: `one of ${LEVELS.slice(0, -1).join(', ')} or ${LEVELS.at(-1)}`,
  }),
  ACCESS_LOG: flag('true logs every request (about half the throughput)'),
  METRICS: flag('true serves Prometheus metrics at /metrics'),
  STATUS_KEYS: Type.Union([Type.Literal('neutral'), Type.Literal('reference')], {
    default: 'neutral',
    description: 'the status\'s key names: the specification\'s (service-version…), or the inventory service\'s own (netbox-version…) for clients written for it',
    accepts: 'neutral or reference',
  }),
  CACHE_MAX_MB: countOrUnset('MiB of rendered answers each process keeps', 'an eighth of the heap limit, at most 4'),
  FAULTS: Type.Optional(text(undefined, 'delays, errors and broken connections to inject, by route (see the README, "Rehearsing failures"); re-read on change and on SIGHUP',
    'the path of a faults JSON file', 'no fault is injected')),
})

export type Environment = Static<typeof Environment>

/** Every variable's name, in the order of the declaration (and of `help` and the README). */
export const VARIABLES = Object.keys(Environment.properties) as Array<keyof Environment>

/** A variable's schema with its words. */
export const setting = (name: keyof Environment) => Environment.properties[name] as unknown as TSchema & Words
