import cluster from 'node:cluster'
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Served } from './inventory/served.ts'
import type { Replays } from './replay/replays.ts'
import { templateOf } from './paths.ts'
import { version } from './version.ts'

/**
 * The statuses the service answers with by itself, each its own label value; any other (what an
 * Envoy header's abort asks for) is counted under its class, `2xx` to `5xx`, so that no client can
 * make more series than routes x methods x these.
 */
const OWN_STATUSES = new Set([200, 301, 304, 400, 403, 404, 405, 408, 417, 429, 431, 500, 502, 503])
const statusLabel = (status: number): number | string => OWN_STATUSES.has(status) ? status : `${Math.floor(status / 100)}xx`

/** The methods the API answers (every other is a 405 or a 404), each its own label; any other is `other`. */
const OWN_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const methodLabel = (method: string): string => OWN_METHODS.has(method) ? method : 'other'

/**
 * The series of http_requests_total that exist at 0 from the start, for each route's GET and HEAD:
 * the answer that counts as success, and the 5xx the server-error alert reads, so that the first
 * of each moves `increase()` and `rate()`.
 */
const FROM_START_METHODS = ['GET', 'HEAD']
const FROM_START_STATUSES = [200, 500, 502, 503, '5xx']

/** What a reload reloads. */
export type Reloaded = 'profile' | 'tokens' | 'faults'

/**
 * The Prometheus metrics of METRICS=true: requests by route (as the OpenAPI document and the
 * faults file write it, `/api/extras/object-types/{id}/`) and status, their latency, the faults
 * injected, the versions and readiness of the process, the profile being served and its reloads,
 * the response cache, Node's process metrics and, with REDIS_URL, the last Redis poll.
 */
export class Metrics {
  readonly registry = new Registry()
  readonly #requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by route template (never the raw URL), method and status (a status the service does not answer by itself, as its class: 2xx to 5xx).',
    labelNames: ['route', 'method', 'status'],
    registers: [this.registry],
  })

  readonly #duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to its answer handed to the socket, by route template.',
    labelNames: ['route'],
    buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1],
    registers: [this.registry],
  })

  readonly #faults = new Counter({
    name: 'inventory_faults_injected_total',
    help: 'Faults injected (FAULTS), by route template and kind: delay, abort, reset, close, cut or slow_body.',
    labelNames: ['route', 'kind'],
    registers: [this.registry],
  })

  readonly #reloads = new Counter({
    name: 'inventory_reloads_total',
    help: 'Reloads of the profile, the tokens file or the faults file (SIGHUP, or a change to the file), by what was reloaded and whether it was taken (ok) or refused and the one in use kept (failed).',
    labelNames: ['file', 'result'],
    registers: [this.registry],
  })

  readonly #refused = new Gauge({
    name: 'inventory_reload_refused',
    aggregator: 'max',
    help: 'Whether the last reload of the profile, the tokens file or the faults file was refused (1: the file on disk is not the one in use) or taken (0).',
    labelNames: ['file'],
    registers: [this.registry],
  })

  /** Each route's label, made when the route is first counted. */
  readonly #routeLabels = new Map<string, string>()

  readonly #profileLoad = new Gauge({
    name: 'inventory_profile_load_seconds',
    aggregator: 'max',
    help: 'How long reading, validating and precomputing the served profile took.',
    registers: [this.registry],
  })

  /**
   * `replays`: the answers kept to be replayed, whose cache is reported; undefined when nothing is
   * (ACCESS_LOG). `readiness`: whether the process takes traffic, false from the shutdown signal on.
   */
  constructor (served: Served, replays: Replays | undefined, readiness: { readonly ready: boolean }) {
    let reported = ''
    this.registry.registerMetric(new Gauge({
      name: 'inventory_build_info',
      aggregator: 'max',
      help: 'Always 1: the service\'s version, the version of the inventory service its profile stands in for, and Node\'s.',
      labelNames: ['version', 'service_version', 'node_version'],
      registers: [],
      collect () {
        const labels = { version: version(), service_version: served.current.catalog.profile.status['service-version'], node_version: process.version }
        // A reload may bring another profile version: only the one served is reported.
        if (labels.service_version !== reported) this.reset()
        reported = labels.service_version
        this.set(labels, 1)
      },
    }))
    this.registry.registerMetric(new Gauge({
      name: 'inventory_ready',
      aggregator: 'min',
      help: 'Whether the process takes traffic (1), or drains on its way out (0), as /readyz answers.',
      registers: [],
      collect () { this.set(readiness.ready ? 1 : 0) },
    }))
    this.registry.registerMetric(new Gauge({
      name: 'inventory_profile_generation',
      aggregator: 'max',
      help: 'The profile generation served: 1 at start-up, one more per reload.',
      registers: [],
      // Read when scraped: nothing to do on the request path or on a reload.
      collect () { this.set(served.current.number) },
    }))
    if (replays !== undefined) this.#reportCache(replays)
    collectDefaultMetrics({ register: this.registry })
    if (cluster.isWorker) {
      // Answer the primary's requests for this worker's figures (see serveClusterMetrics).
      AggregatorRegistry.setRegistries(this.registry)
      new AggregatorRegistry() // eslint-disable-line no-new
    }
  }

  /** The response cache's own tallies, read when scraped: a replay costs nothing more for being counted. */
  #reportCache (replays: Replays): void {
    for (const [name, help, read] of [
      ['inventory_cache_hits_total', 'Answers replayed from the response cache.', () => replays.stats.hits],
      ['inventory_cache_misses_total', 'Answers Fastify made for a key the response cache did not hold.', () => replays.stats.misses],
      ['inventory_cache_admissions_total', 'Answers the response cache kept (asked for before; once full, at its eighth miss and up to its size a minute).', () => replays.stats.admissions],
      ['inventory_cache_evictions_total', 'Answers the response cache let go to make room.', () => replays.stats.evictions],
    ] as const) {
      let reported = 0
      this.registry.registerMetric(new Counter({
        name,
        help,
        registers: [],
        collect () {
          this.inc(read() - reported)
          reported = read()
        },
      }))
    }
    this.registry.registerMetric(new Gauge({
      name: 'inventory_cache_bytes',
      help: 'Memory the response cache holds: keys, bodies and the overhead of each entry.',
      registers: [],
      collect () { this.set(replays.bytes) },
    }))
    this.registry.registerMetric(new Gauge({
      name: 'inventory_cache_max_bytes',
      help: 'What the response cache may hold (CACHE_MAX_MB, or a share of the V8 heap limit).',
      registers: [],
      collect () { this.set(replays.maxBytes) },
    }))
  }

  /** A route of Fastify's, with its methods: its series that alerts and the dashboard read start at 0. */
  routed (route: string, methods: readonly string[]): void {
    const label = this.#routeLabel(route)
    for (const method of FROM_START_METHODS.filter((method) => methods.includes(method))) {
      for (const status of FROM_START_STATUSES) this.#requests.inc({ route: label, method, status }, 0)
    }
    this.#duration.zero({ route: label })
  }

  /** One answer: `route` is Fastify's route (`/api/extras/object-types/:id/`), or `unmatched`. */
  answered (route: string, method: string, status: number, seconds: number): void {
    const label = this.#routeLabel(route)
    this.#requests.inc({ route: label, method: methodLabel(method), status: statusLabel(status) })
    this.#duration.observe({ route: label }, seconds)
  }

  /** The files that can be reloaded: their series start at 0, so that the first refusal moves `increase()`. */
  reloadable (files: readonly Reloaded[]): void {
    for (const file of files) {
      this.#reloads.inc({ file, result: 'ok' }, 0)
      this.#reloads.inc({ file, result: 'failed' }, 0)
      this.#refused.set({ file }, 0)
    }
  }

  /** One reload of a file, taken or refused. */
  reloaded (file: Reloaded, ok: boolean): void {
    this.#reloads.inc({ file, result: ok ? 'ok' : 'failed' })
    this.#refused.set({ file }, ok ? 0 : 1)
  }

  /** A route (Fastify's) that faults may be injected into: each kind's series starts at 0. */
  faultable (route: string, kinds: readonly string[]): void {
    for (const kind of kinds) this.#faults.inc({ route: this.#routeLabel(route), kind }, 0)
  }

  /** One fault injected into an answer of a route (Fastify's). */
  faultInjected (route: string, kind: string): void {
    this.#faults.inc({ route: this.#routeLabel(route), kind })
  }

  /** A route (Fastify's `:id`) as its label writes it (`{id}`): made once per route. */
  #routeLabel (route: string): string {
    let label = this.#routeLabels.get(route)
    if (label === undefined) this.#routeLabels.set(route, label = templateOf(route))
    return label
  }

  /** The text of a scrape: this process's figures, or under WORKERS > 1 the whole service's (a scrape reaches one worker). */
  scrape (): Promise<string> {
    return cluster.isWorker ? askPrimary() : this.registry.metrics()
  }

  profileLoaded (seconds: number): void {
    this.#profileLoad.set(seconds)
  }

  /**
   * The gauges of the RQ worker poll, registered only with REDIS_URL (a Redis never configured is
   * no outage); what to call with each poll's count, undefined when Redis was not reached.
   */
  redisPoll (): (count: number | undefined) => void {
    const up = new Gauge({
      name: 'inventory_redis_up',
      aggregator: 'min',
      help: 'Whether the last poll of the RQ worker count reached Redis (1) or not (0).',
      registers: [this.registry],
    })
    const workers = new Gauge({
      name: 'inventory_rq_workers',
      aggregator: 'max',
      help: 'The RQ worker count the last successful poll read.',
      registers: [this.registry],
    })
    const lastPoll = new Gauge({
      name: 'inventory_redis_last_poll_timestamp_seconds',
      aggregator: 'max',
      help: 'When Redis was last polled.',
      registers: [this.registry],
    })
    return (count) => {
      up.set(count === undefined ? 0 : 1)
      if (count !== undefined) workers.set(count)
      lastPoll.set(Date.now() / 1000)
    }
  }
}

/** The message a worker sends for the whole service's metrics, and the primary's answer. */
const CLUSTER_METRICS = 'inventory:cluster-metrics'
interface ClusterMetricsMessage { type: typeof CLUSTER_METRICS, id: number }
interface ClusterMetricsAnswer extends ClusterMetricsMessage { text: string }
const isClusterMetrics = (message: unknown): message is ClusterMetricsMessage =>
  (message as ClusterMetricsMessage | null)?.type === CLUSTER_METRICS

const waiting = new Map<number, (text: string) => void>()
let nextRequest = 0

/** In a worker: every worker's figures, added up by the primary. */
function askPrimary (): Promise<string> {
  if (nextRequest === 0) {
    process.on('message', (message) => {
      // prom-client's own requests come this way too.
      if (!isClusterMetrics(message)) return
      waiting.get(message.id)!((message as ClusterMetricsAnswer).text)
      waiting.delete(message.id)
    })
  }
  const id = nextRequest++
  return new Promise((resolve) => {
    waiting.set(id, resolve)
    process.send!({ type: CLUSTER_METRICS, id } satisfies ClusterMetricsMessage)
  })
}

/**
 * In the primary of WORKERS > 1 with METRICS: answers a worker's request for the whole service's
 * metrics with prom-client's AggregatorRegistry, which asks every worker for its figures and adds
 * them up (counters and histograms summed; gauges as each declares: the profile generation the
 * highest, Redis up only if every worker reaches it).
 */
export function serveClusterMetrics (): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker, message) => {
    if (!isClusterMetrics(message)) return
    aggregator.clusterMetrics()
      // prom-client gives up on a worker after 5 s: say so in the scrape rather than hang it.
      .catch((error: Error) => `# the workers' metrics could not be gathered: ${error.message}\n`)
      .then((text) => worker.send({ type: CLUSTER_METRICS, id: message.id, text } satisfies ClusterMetricsAnswer))
  })
}
