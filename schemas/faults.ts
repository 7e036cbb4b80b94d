import type { Static } from '@sinclair/typebox'
import * as Type from '@sinclair/typebox'
import { LONGEST_TIMER_MS } from './config.ts'

// `accepts`: what a value must be, in words, for the messages that refuse a faults file.
const Milliseconds = Type.Number({ minimum: 0, maximum: LONGEST_TIMER_MS, accepts: `a number of milliseconds from 0 to ${LONGEST_TIMER_MS}` })
const Seconds = Type.Number({ minimum: 0, accepts: 'a number of seconds from 0 up' })
const Percent = Type.Optional(Type.Number({ minimum: 0, maximum: 100, accepts: 'a number from 0 to 100 (the share of matching requests; 100 when absent)' }))

/** The statuses an abort answers with, each with the body the inventory service (or the proxy in front of it) sends. */
const ABORT_STATUSES = [429, 500, 502, 503] as const

const DELAY_WORDS = 'a delay: {"ms"} fixed, {"min", "max"} uniform or {"median", "p99"} lognormal, each with an optional "percent"'
const Delay = Type.Union([
  Type.Object({ ms: Milliseconds, percent: Percent }, { additionalProperties: false, accepts: DELAY_WORDS }),
  Type.Object({ min: Milliseconds, max: Milliseconds, percent: Percent }, { additionalProperties: false, accepts: DELAY_WORDS }),
  Type.Object({ median: Milliseconds, p99: Milliseconds, percent: Percent }, { additionalProperties: false, accepts: DELAY_WORDS }),
], { accepts: DELAY_WORDS })

const Abort = Type.Object({
  status: Type.Union(ABORT_STATUSES.map((status) => Type.Literal(status)), { accepts: `one of ${ABORT_STATUSES.join(', ')}` }),
  percent: Percent,
  /** The Retry-After of a 503 or 429. */
  retryAfter: Type.Optional(Type.Integer({ minimum: 0, maximum: 86400, accepts: 'a whole number of seconds from 0 to 86400' })),
}, { additionalProperties: false, accepts: 'an abort: an object of status and optionally percent and retryAfter' })

/** What happens to the connection instead of (or in the middle of) the answer. */
const CONNECTION_FAULTS = ['reset', 'close', 'cut'] as const

const Connection = Type.Object({
  fault: Type.Union(CONNECTION_FAULTS.map((fault) => Type.Literal(fault)), {
    accepts: 'reset (a TCP reset, no answer), close (closed with no answer) or cut (the body cut short)',
  }),
  percent: Percent,
}, { additionalProperties: false, accepts: 'a connection fault: an object of fault and optionally percent' })

const SlowBody = Type.Object({
  bytesPerSecond: Type.Integer({ minimum: 1, maximum: 2 ** 30, accepts: 'a whole number of bytes per second from 1 to 1073741824' }),
  percent: Percent,
}, { additionalProperties: false, accepts: 'a slow body: an object of bytesPerSecond and optionally percent' })

/** When a rule applies, in seconds since the faults file was loaded: from `from` to `to`, and within that the first `for` of every `every`. */
const Schedule = Type.Object({
  from: Type.Optional(Seconds),
  to: Type.Optional(Seconds),
  every: Type.Optional(Type.Number({ exclusiveMinimum: 0, accepts: 'a number of seconds above 0' })),
  for: Type.Optional(Seconds),
}, { additionalProperties: false, accepts: 'a schedule: an object of from, to, every and for (seconds), each optional' })

const Matches = (what: string) => Type.Record(Type.String({ minLength: 1 }), Type.String({ accepts: `the text the ${what} must be` }), { accepts: `an object of ${what} names and the texts they must be` })

const Rule = Type.Object({
  /** A route's path template, as the OpenAPI document writes it: `/api/extras/object-types/{id}/`. */
  path: Type.String({ accepts: 'a path template of the service' }),
  query: Type.Optional(Matches('query parameter')),
  header: Type.Optional(Matches('header')),
  delay: Type.Optional(Delay),
  abort: Type.Optional(Abort),
  connection: Type.Optional(Connection),
  slowBody: Type.Optional(SlowBody),
  schedule: Type.Optional(Schedule),
}, { additionalProperties: false, accepts: 'a rule: an object of path, optionally query and header, one or more of delay, abort, connection and slowBody, and optionally schedule' })

/** A faults file (FAULTS): rules tried in order, the first that matches a request applies. */
export const FaultsFile = Type.Object({
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1, accepts: 'a whole number from 0 to 4294967295' })),
  /** Honour Envoy's x-envoy-fault-* request headers. */
  headers: Type.Optional(Type.Boolean({ accepts: 'true or false' })),
  rules: Type.Optional(Type.Array(Rule, { accepts: 'a list of rules' })),
}, { additionalProperties: false, accepts: 'an object of seed, headers and rules, each optional' })

export type FaultsFile = Static<typeof FaultsFile>
export type Rule = Static<typeof Rule>
export type Delay = Static<typeof Delay>
export type ConnectionFault = (typeof CONNECTION_FAULTS)[number]
export type Schedule = Static<typeof Schedule>
