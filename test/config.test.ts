import t from 'tap'
import { availableParallelism } from 'node:os'
import { loadConfig } from '../lib/config.ts'
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
    maxHeaderSize: 16384,
    drainDelayMs: 5000,
    shutdownTimeoutMs: 10000,
    rqPollIntervalMs: 2000,
    logLevel: 'info',
    accessLog: false,
    metrics: false,
    cacheBytes: 16 * 1024 * 1024,
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
    MAX_HEADER_SIZE: '8192',
    DRAIN_DELAY_MS: '0',
    SHUTDOWN_TIMEOUT_MS: '20000',
    REDIS_URL: 'rediss://redis.internal:6380/1',
    RQ_POLL_INTERVAL_MS: '500',
    LOG_LEVEL: 'debug',
    ACCESS_LOG: 'true',
    METRICS: 'true',
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
    maxHeaderSize: 8192,
    drainDelayMs: 0,
    shutdownTimeoutMs: 20000,
    redisUrl: 'rediss://redis.internal:6380/1',
    rqPollIntervalMs: 500,
    logLevel: 'debug',
    accessLog: true,
    metrics: true,
    cacheBytes: 12 * 1024 * 1024,
  })
  t.equal(loadConfig({ WORKERS: 'auto' }).workers, availableParallelism(), 'auto: one per available CPU')
  t.notOk('allowedHosts' in loadConfig({ ALLOWED_HOSTS: 'a.test,*' }), '* anywhere allows every host')
})

t.test('a bad value names the variable and the problem', async (t) => {
  const cases: Array<[NodeJS.ProcessEnv, string]> = [
    [{ PORT: '80a' }, 'PORT="80a": Expected string to match \'^[0-9]+$\' (TCP port to listen on, 0-65535)'],
    [{ PORT: '70000' }, 'PORT="70000": a TCP port is at most 65535'],
    [{ PAGINATE_COUNT: '0' }, 'PAGINATE_COUNT="0": expected a whole number from 1 up'],
    [{ MAX_PAGE_SIZE: '-1' }, 'MAX_PAGE_SIZE="-1": Expected string to match \'^[0-9]+$\' (largest page size, at least 1)'],
    [{ WORKERS: '0' }, 'WORKERS="0": expected a whole number from 1 up'],
    [{ WORKERS: 'all' }, 'WORKERS="all": Expected string to match \'^([0-9]+|auto)$\' (processes serving the port: a number from 1 up, or auto for one per available CPU)'],
    [{ KEEP_ALIVE_TIMEOUT_MS: '0' }, 'KEEP_ALIVE_TIMEOUT_MS="0": expected 1 to 2147483647 ms'],
    [{ SHUTDOWN_TIMEOUT_MS: '2147483648' }, 'SHUTDOWN_TIMEOUT_MS="2147483648": expected 1 to 2147483647 ms'],
    [{ DRAIN_DELAY_MS: '5s' }, 'DRAIN_DELAY_MS="5s": Expected string to match \'^[0-9]+$\' (after SIGTERM, how long /readyz answers 503 while the API keeps serving, in ms)'],
    [{ HEADERS_TIMEOUT_MS: '60000' }, 'REQUEST_TIMEOUT_MS="30000": expected at least HEADERS_TIMEOUT_MS (60000)'],
    [{ MAX_HEADER_SIZE: '0' }, 'MAX_HEADER_SIZE="0": expected a whole number from 1 up'],
    [{ CACHE_MAX_MB: '0' }, 'CACHE_MAX_MB="0": expected a whole number from 1 up'],
    [{ CACHE_MAX_MB: '32M' }, 'CACHE_MAX_MB="32M": Expected string to match \'^[0-9]+$\' (MiB of rendered answers to keep per process, at least 1; by default an eighth of the V8 heap limit, at most 16)'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL="verbose": expected fatal, error, warn, info, debug, trace or silent (the least severe level logged)'],
    [{ ACCESS_LOG: 'yes' }, 'ACCESS_LOG="yes": expected true or false (true logs every request)'],
    [{ METRICS: '1' }, 'METRICS="1": expected true or false (true serves Prometheus metrics at /metrics)'],
    [{ HOST: '' }, 'HOST="": Expected string length greater or equal to 1 (address to listen on)'],
    [{ PUBLIC_URL: 'inventory.example.com' }, 'PUBLIC_URL="inventory.example.com": not an absolute URL'],
    [{ PUBLIC_URL: 'ftp://inventory.example.com' }, 'PUBLIC_URL="ftp://inventory.example.com": expected an http or https URL'],
    [{ PUBLIC_URL: 'https://inventory.example.com/?a=1' },
      'PUBLIC_URL="https://inventory.example.com/?a=1": expected scheme, host and an optional path only (no credentials, query or fragment)'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY="10.0.0.0/33": "10.0.0.0/33" is not an IP address or CIDR range'],
    [{ TRUST_PROXY: 'proxy.local' }, 'TRUST_PROXY="proxy.local": "proxy.local" is not an IP address or CIDR range'],
    [{ TRUST_PROXY: ' , ' }, 'TRUST_PROXY=" , ": expected at least one address or CIDR range'],
    [{ ALLOWED_HOSTS: 'good.test,bad host' }, 'ALLOWED_HOSTS="good.test,bad host": "bad host" is not a host name, .domain, [IPv6] or *'],
    [{ ALLOWED_HOSTS: ',' }, 'ALLOWED_HOSTS=",": expected at least one host name or *'],
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message: `Bad configuration ${message}` }, message)
  }
})
