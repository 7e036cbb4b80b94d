import t from 'tap'
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { getHeapStatistics } from 'node:v8'
import { ConfigError, listenProblem, loadConfig } from '../lib/config.ts'
import { help } from '../lib/process/help.ts'
import { setting, VARIABLES, type Environment } from '../schemas/config.ts'
import { DEFAULT_PROFILE_FILE } from '../lib/inventory/profile.ts'

t.test('defaults', async (t) => {
  t.same(loadConfig({}), {
    port: 8080,
    host: '0.0.0.0',
    profile: DEFAULT_PROFILE_FILE,
    profileWatch: false,
    paginateCount: 50,
    maxPageSize: 1000,
    workers: 1,
    keepAliveTimeoutMs: 72000,
    headersTimeoutMs: 10000,
    requestTimeoutMs: 30000,
    sendTimeoutMs: 30000,
    maxHeaderSize: 16384,
    maxConnections: Math.max(64, Math.floor((getHeapStatistics().heap_size_limit - 24 * 1024 * 1024) / 10240)),
    drainDelayMs: 5000,
    shutdownTimeoutMs: 10000,
    loginRequired: false,
    rqPollIntervalMs: 2000,
    logLevel: 'info',
    accessLog: false,
    metrics: false,
    statusKeys: 'neutral',
    cacheBytes: 4 * 1024 * 1024,
    warnings: [],
  })
})

t.test('every variable, set', async (t) => {
  t.same(loadConfig({
    PORT: '9000',
    HOST: '127.0.0.1',
    PROFILE: '/etc/inventory/profile.json',
    PROFILE_WATCH: 'true',
    PUBLIC_URL: 'HTTPS://Inventory.Example.com:443/netbox//',
    TRUST_PROXY: '10.0.0.0/8, ::1 ,192.168.1.1',
    ALLOWED_HOSTS: 'Inventory.example.com,.corp.test',
    PAGINATE_COUNT: '20',
    MAX_PAGE_SIZE: '10',
    WORKERS: '3',
    KEEP_ALIVE_TIMEOUT_MS: '65000',
    HEADERS_TIMEOUT_MS: '5000',
    REQUEST_TIMEOUT_MS: '5000',
    SEND_TIMEOUT_MS: '45000',
    MAX_HEADER_SIZE: '8192',
    MAX_CONNECTIONS: '2000',
    DRAIN_DELAY_MS: '0',
    SHUTDOWN_TIMEOUT_MS: '20000',
    REDIS_URL: 'rediss://redis.internal:6380/1',
    RQ_POLL_INTERVAL_MS: '500',
    LOG_LEVEL: 'debug',
    ACCESS_LOG: 'true',
    METRICS: 'true',
    STATUS_KEYS: 'reference',
    CACHE_MAX_MB: '12',
    UNRELATED: 'ignored',
  }), {
    port: 9000,
    host: '127.0.0.1',
    profile: '/etc/inventory/profile.json',
    profileWatch: true,
    publicUrl: 'https://inventory.example.com/netbox',
    trustProxy: ['10.0.0.0/8', '::1', '192.168.1.1'],
    allowedHosts: ['inventory.example.com', '.corp.test'],
    paginateCount: 20,
    maxPageSize: 20,
    workers: 3,
    keepAliveTimeoutMs: 65000,
    headersTimeoutMs: 5000,
    requestTimeoutMs: 5000,
    sendTimeoutMs: 45000,
    maxHeaderSize: 8192,
    maxConnections: 2000,
    drainDelayMs: 0,
    shutdownTimeoutMs: 20000,
    loginRequired: false,
    redisUrl: 'rediss://redis.internal:6380/1',
    rqPollIntervalMs: 500,
    logLevel: 'debug',
    accessLog: true,
    metrics: true,
    statusKeys: 'reference',
    cacheBytes: 12 * 1024 * 1024,
    warnings: ['MAX_PAGE_SIZE=10 is below PAGINATE_COUNT=20: pages of up to 20 items are served, as the reference does'],
  })
  t.equal(loadConfig({ WORKERS: 'auto' }).workers, availableParallelism(), 'auto: one per available CPU')
  t.notOk('allowedHosts' in loadConfig({ ALLOWED_HOSTS: 'a.test,*' }), '* anywhere allows every host')
})

t.test('a bad value of each variable: its name, the value and what is accepted, in words', async (t) => {
  const WHOLE_MS = 'must be a whole number of milliseconds from 1 to 2147483647'
  const URL_MUST = 'must be an absolute http or https URL with an optional path (no credentials, query or fragment)'
  const PROXIES_MUST = 'must be a comma-separated list of IP addresses and CIDR ranges'
  const HOSTS_MUST = 'must be a comma-separated list of host names, .domains (a domain and its subdomains), [IPv6] addresses, or *'
  const cases: Array<[NodeJS.ProcessEnv, string]> = [
    [{ PORT: 'abc' }, 'PORT must be a whole number from 0 to 65535; got "abc"'],
    [{ PORT: '70000' }, 'PORT must be a whole number from 0 to 65535; got "70000"'],
    [{ HOST: '' }, 'HOST must be an address or host name of this machine; got ""'],
    [{ PROFILE: '' }, 'PROFILE must be the path of a profile JSON file; got ""'],
    [{ PROFILE_WATCH: 'on' }, 'PROFILE_WATCH must be true or false; got "on"'],
    [{ PUBLIC_URL: 'inventory.example.com' }, `PUBLIC_URL ${URL_MUST}; got "inventory.example.com"`],
    [{ PUBLIC_URL: 'ftp://inventory.example.com' }, `PUBLIC_URL ${URL_MUST}; got "ftp://inventory.example.com"`],
    [{ PUBLIC_URL: 'https://inventory.example.com/?a=1' }, `PUBLIC_URL ${URL_MUST}; got "https://inventory.example.com/?a=1"`],
    [{ TRUST_PROXY: '10.0.0.0/33' }, `TRUST_PROXY ${PROXIES_MUST}; got "10.0.0.0/33" ("10.0.0.0/33" is neither)`],
    [{ TRUST_PROXY: 'proxy.local' }, `TRUST_PROXY ${PROXIES_MUST}; got "proxy.local" ("proxy.local" is neither)`],
    [{ TRUST_PROXY: ' , ' }, `TRUST_PROXY ${PROXIES_MUST}; got " , " (none is given)`],
    [{ ALLOWED_HOSTS: 'good.test,bad host' }, `ALLOWED_HOSTS ${HOSTS_MUST}; got "good.test,bad host" ("bad host" is none of these)`],
    [{ ALLOWED_HOSTS: ',' }, `ALLOWED_HOSTS ${HOSTS_MUST}; got "," (none is given)`],
    [{ PAGINATE_COUNT: '0' }, 'PAGINATE_COUNT must be a whole number from 1 up; got "0"'],
    [{ PAGINATE_COUNT: 'many' }, 'PAGINATE_COUNT must be a whole number from 1 up; got "many"'],
    [{ MAX_PAGE_SIZE: '-1' }, 'MAX_PAGE_SIZE must be a whole number from 1 up; got "-1"'],
    [{ WORKERS: '0' }, 'WORKERS must be a whole number from 1 up, or auto for one per available CPU; got "0"'],
    [{ WORKERS: 'all' }, 'WORKERS must be a whole number from 1 up, or auto for one per available CPU; got "all"'],
    [{ KEEP_ALIVE_TIMEOUT_MS: '0' }, `KEEP_ALIVE_TIMEOUT_MS ${WHOLE_MS}; got "0"`],
    [{ HEADERS_TIMEOUT_MS: '1.5' }, `HEADERS_TIMEOUT_MS ${WHOLE_MS}; got "1.5"`],
    [{ SEND_TIMEOUT_MS: '0' }, `SEND_TIMEOUT_MS ${WHOLE_MS}; got "0"`],
    [{ REQUEST_TIMEOUT_MS: '' }, `REQUEST_TIMEOUT_MS ${WHOLE_MS}; got ""`],
    [{ HEADERS_TIMEOUT_MS: '60000' }, 'REQUEST_TIMEOUT_MS must be at least HEADERS_TIMEOUT_MS (60000); got "30000"'],
    [{ MAX_HEADER_SIZE: '0' }, 'MAX_HEADER_SIZE must be a whole number from 1 up; got "0"'],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS must be a whole number from 1 up; got "0"'],
    [{ DRAIN_DELAY_MS: '5s' }, 'DRAIN_DELAY_MS must be a whole number of milliseconds from 0 to 2147483647; got "5s"'],
    [{ SHUTDOWN_TIMEOUT_MS: '2147483648' }, `SHUTDOWN_TIMEOUT_MS ${WHOLE_MS}; got "2147483648"`],
    [{ LOGIN_REQUIRED: 'yes' }, 'LOGIN_REQUIRED must be true or false; got "yes"'],
    [{ LOGIN_REQUIRED: 'true' }, 'LOGIN_REQUIRED=true needs API_TOKENS_FILE, the path of the file of the tokens to accept'],
    [{ LOGIN_REQUIRED: 'true', API_TOKENS_FILE: '' }, 'API_TOKENS_FILE must be the path of a file of tokens, one a line or a JSON list; got ""'],
    [{ REDIS_URL: 'http://user:secret@redis.internal' }, 'REDIS_URL must be redis://[user:password@]host[:port][/db] or rediss://…; got "http://user:***@redis.internal"'],
    [{ REDIS_URL: '' }, 'REDIS_URL must be redis://[user:password@]host[:port][/db] or rediss://…; got ""'],
    [{ RQ_POLL_INTERVAL_MS: '0' }, `RQ_POLL_INTERVAL_MS ${WHOLE_MS}; got "0"`],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace or silent; got "verbose"'],
    [{ ACCESS_LOG: 'yes' }, 'ACCESS_LOG must be true or false; got "yes"'],
    [{ METRICS: '1' }, 'METRICS must be true or false; got "1"'],
    [{ STATUS_KEYS: 'netbox' }, 'STATUS_KEYS must be neutral or reference; got "netbox"'],
    [{ CACHE_MAX_MB: '0' }, 'CACHE_MAX_MB must be a whole number from 1 up; got "0"'],
    [{ CACHE_MAX_MB: '32M' }, 'CACHE_MAX_MB must be a whole number from 1 up; got "32M"'],
    [{ FAULTS: '' }, 'FAULTS must be the path of a faults JSON file; got ""'],
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message, exitCode: 2 }, message)
  }
  const tried = new Set(cases.flatMap(([env]) => Object.keys(env)))
  t.same(VARIABLES.filter((name) => !tried.has(name)), [], 'every variable has its case')
})

t.test('a maximum page size below the default page size is raised to it, and said so', async (t) => {
  const config = loadConfig({ MAX_PAGE_SIZE: '10', PAGINATE_COUNT: '50' })
  t.equal(config.maxPageSize, 50)
  t.same(config.warnings, ['MAX_PAGE_SIZE=10 is below PAGINATE_COUNT=50: pages of up to 50 items are served, as the reference does'])
  t.same(loadConfig({}).warnings, [], 'nothing adjusted by default')
})

t.test('a variable that looks like one of the service\'s but is not gets a warning naming the one it resembles', async (t) => {
  t.same(loadConfig({ PORTT: '9000', ALLOWED_HOST: 'a.test', LOGIN_REQUIERD: 'true', WORKER: '2', METRIC: 'true' }).warnings, [
    'PORTT is not a setting of this service and is ignored: did you mean PORT?',
    'ALLOWED_HOST is not a setting of this service and is ignored: did you mean ALLOWED_HOSTS?',
    'LOGIN_REQUIERD is not a setting of this service and is ignored: did you mean LOGIN_REQUIRED?',
    'WORKER is not a setting of this service and is ignored: did you mean WORKERS?',
    'METRIC is not a setting of this service and is ignored: did you mean METRICS?',
  ])
  t.same(loadConfig({ HOME: '/root', HOSTNAME: 'pod-1', PATH: '/bin', LANG: 'C', TERM: 'xterm', NODE_ENV: 'production', KUBERNETES_PORT: 'tcp://10.0.0.1:443' }).warnings, [],
    'the usual variables of a shell, a container or a pod say nothing')
})

t.test('help lists every variable with its default and what it accepts; the README\'s table agrees', async (t) => {
  const text = help()
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const table = readme.slice(readme.indexOf('| Variable | Default | Meaning |')).split('\n\n')[0]!.split('\n').slice(2)
  const rows = table.map((row) => /^\| `([A-Z_]+)` \| ([^|]+) \|/.exec(row)!.slice(1, 3) as [string, string])
  t.same(rows.map(([name]) => name), VARIABLES, 'the same variables, in the same order')
  for (const [name, cell] of rows) {
    const { default: fallback, unset } = setting(name as keyof Environment)
    t.equal(cell, fallback === undefined ? `unset: ${unset}` : `\`${fallback}\``, `${name}: the README's default`)
    t.match(text, `\n  ${name.padEnd(22)}${cell.replaceAll('`', '').replace(/^(?!unset)/, 'default: ')}\n`, `${name}: help says the same`)
  }
  // Two entries whole, as a person reads them.
  t.match(text, '\n  PORT                  default: 8080\n      TCP port to listen on; 0 picks a free one\n      accepts a whole number from 0 to 65535\n')
  t.match(text, '\n  CACHE_MAX_MB          unset: an eighth of the heap limit, at most 4\n      MiB of rendered answers each process keeps\n      accepts a whole number from 1 up\n')
  t.match(text, '\n  capture <base-url> [--token <key>] [--out <file>] [--timeout <seconds>] [--faults-out <file> [--samples <n>]]\n')
})

t.test('what stops the service from listening is said in the words of its settings', async (t) => {
  const failure = (code: string, message: string) => Object.assign(new Error(message), { code, address: '0.0.0.0', port: 80 })
  t.equal(listenProblem(failure('EADDRINUSE', 'listen EADDRINUSE'), 80, '0.0.0.0').message,
    'PORT=80 HOST=0.0.0.0: 0.0.0.0:80 is already in use; set PORT to a free port, or stop what listens there')
  t.equal(listenProblem(failure('EACCES', 'listen EACCES'), 80, '0.0.0.0').message,
    'PORT=80 HOST=0.0.0.0: listening on 0.0.0.0:80 is not permitted (a port below 1024 needs privileges); set PORT to 1024 or above')
  const host = listenProblem(failure('EADDRNOTAVAIL', 'listen EADDRNOTAVAIL: address not available 10.9.9.9:80'), 80, '10.9.9.9')
  t.same([host.message, (host as ConfigError).exitCode], ['HOST must be an address or host name of this machine; got "10.9.9.9" (listen EADDRNOTAVAIL: address not available 10.9.9.9:80)', 2])
  const other = failure('EMFILE', 'listen EMFILE: too many open files')
  t.equal(listenProblem(other, 80, '0.0.0.0'), other, 'any other, the system\'s own')
})
