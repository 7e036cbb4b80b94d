import { Type, type Static } from '@sinclair/typebox'

const whole = (description: string, fallback: string) =>
  Type.String({ pattern: '^[0-9]+$', default: fallback, description })
const flag = (description: string) =>
  Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false', description })

/** The environment variables the service reads, as the strings they arrive as. */
export const Environment = Type.Object({
  PORT: whole('TCP port to listen on, 0-65535', '8080'),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'address to listen on' }),
  PROFILE: Type.Optional(Type.String({ minLength: 1, description: 'path of an inventory profile JSON file' })),
  PROFILE_WATCH: flag('true reloads the profile when its file changes (SIGHUP always does)'),
  PUBLIC_URL: Type.Optional(Type.String({ minLength: 1, description: 'absolute http(s) URL that replaces the request-derived base of links' })),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1, description: 'comma-separated proxy addresses or CIDRs whose X-Forwarded-Proto/Host count' })),
  ALLOWED_HOSTS: Type.String({ minLength: 1, default: '*', description: 'comma-separated host names; `*` allows any, `.example.com` a domain and its subdomains' }),
  PAGINATE_COUNT: whole('default page size, at least 1', '50'),
  MAX_PAGE_SIZE: whole('largest page size, at least 1', '1000'),
  WORKERS: Type.String({ pattern: '^([0-9]+|auto)$', default: '1', description: 'processes serving the port: a number from 1 up, or auto for one per available CPU' }),
  KEEP_ALIVE_TIMEOUT_MS: whole('how long an idle keep-alive connection stays open, in ms, at least 1; above the load balancer\'s idle timeout', '72000'),
  HEADERS_TIMEOUT_MS: whole('time a client has to send the request headers, in ms, at least 1', '10000'),
  REQUEST_TIMEOUT_MS: whole('time a client has to send the whole request, in ms, at least HEADERS_TIMEOUT_MS', '30000'),
  MAX_HEADER_SIZE: whole('largest request line plus headers, in bytes, at least 1', '16384'),
  DRAIN_DELAY_MS: whole('after SIGTERM, how long /readyz answers 503 while the API keeps serving, in ms', '5000'),
  SHUTDOWN_TIMEOUT_MS: whole('after the drain delay, how long requests get to finish before they are cut, in ms, at least 1', '10000'),
  LOGIN_REQUIRED: flag('true requires an API token (Authorization: Token <key>) on every API path'),
  API_TOKENS_FILE: Type.Optional(Type.String({ minLength: 1, description: 'path of the API tokens: one a line, or a JSON list' })),
  REDIS_URL: Type.Optional(Type.String({ minLength: 1, description: 'redis:// or rediss:// URL of the inventory service\'s Redis, for the live count of RQ workers' })),
  RQ_POLL_INTERVAL_MS: whole('how often the RQ worker count is read from Redis, in ms, at least 1', '2000'),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info', description: 'the least severe level logged' }
  ),
  ACCESS_LOG: flag('true logs every request'),
  METRICS: flag('true serves Prometheus metrics at /metrics'),
  CACHE_MAX_MB: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: 'MiB of rendered answers to keep per process, at least 1; by default an eighth of the V8 heap limit, at most 16' })),
})

export type Environment = Static<typeof Environment>
