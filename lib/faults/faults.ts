import type { IncomingMessage } from 'node:http'
import { queryOf } from '../http/target.ts'
import type { QueryParams } from '../reference/query.ts'
import { asksForFaults } from './envoy-headers.ts'
import { readRules, type Rules } from './rules.ts'

/** A route faults may apply to: its path template, and whether Envoy's headers may fault it (not the probes). */
interface FaultedRoute {
  path: string
  headers: boolean
}

/**
 * The faults of FAULTS: the rules read from the file (again on reload), and the routes they
 * may apply to, by the template Fastify routes them with (`/api/status.:format` is
 * `/api/status/`). Faults are drawn in Fastify (plugins/faults.ts); a replay asks `mayApply` first.
 */
export class Faults {
  readonly file: string
  readonly #paths: readonly string[]
  readonly #routes = new Map<string, FaultedRoute>()
  #rules: Rules

  /** `paths`: the templates a rule may name. */
  constructor (file: string, paths: readonly string[]) {
    this.file = file
    this.#paths = paths
    this.#rules = readRules(file, paths)
  }

  get rules (): Rules {
    return this.#rules
  }

  /** What the log says of the rules in use: the seed repeats their draws. */
  get summary () {
    return { faults: this.file, rules: this.#rules.count, seed: this.#rules.seed, headers: this.#rules.headers }
  }

  /** Reads the file again; what is in use stays if it is refused (the FaultsError is thrown). */
  reload (): void {
    this.#rules = readRules(this.file, this.#paths)
  }

  /** A Fastify route that faults may apply to. */
  route (url: string, path: string, headers: boolean): void {
    this.#routes.set(url, { path, headers })
  }

  /** Whether a request to a route (one that keeps its answers: an endpoint's) might get a fault: then its kept answer must not be replayed. */
  mayApply (url: string, request: IncomingMessage): boolean {
    const route = this.#routes.get(url)!
    const rules = this.#rules
    if (route.headers && rules.headers && asksForFaults(request.headers)) return true
    let query: QueryParams | undefined
    return rules.matches(route.path, request.headers, () => (query ??= queryOf(request.url!)))
  }
}
