import type { IncomingHttpHeaders } from 'node:http'

/** Envoy's fault filter headers, as its header-controlled faults read them. */
const DELAY = 'x-envoy-fault-delay-request'
const ABORT = 'x-envoy-fault-abort-request'
const THROUGHPUT = 'x-envoy-fault-throughput-response'

/** The faults a request asks for by Envoy's headers, each with the share of requests it applies to. */
export interface HeaderFaults {
  delay?: { ms: number, percent: number }
  abort?: { status: number, percent: number }
  slowBody?: { bytesPerSecond: number, percent: number }
}

/**
 * The longest delay a header asks for that is served. Envoy takes the header's value as it comes and
 * leaves the bound to the route's timeout (15 s by default) and the filter's `max_active_faults`;
 * a stand-in whose clients set the header cannot leave it unbounded.
 */
export const MAX_HEADER_DELAY_MS = 60_000

/** Whether a request carries any of the headers (a replay must not answer it). */
export function asksForFaults (headers: IncomingHttpHeaders): boolean {
  return headers[DELAY] !== undefined || headers[ABORT] !== undefined || headers[THROUGHPUT] !== undefined
}

/**
 * The faults the headers ask for, as Envoy reads them: a delay in milliseconds above 0 (at most
 * MAX_HEADER_DELAY_MS), an abort's status from 200 to 599, a response rate in KiB per second
 * above 0; each `-percentage` companion is the share of requests, capped at 100, and 100 when
 * absent or not a whole number. A value Envoy would not take asks for nothing. Undefined when
 * nothing is asked for.
 */
export function headerFaults (headers: IncomingHttpHeaders): HeaderFaults | undefined {
  const delay = whole(headers[DELAY])
  const abort = whole(headers[ABORT])
  const throughput = whole(headers[THROUGHPUT])
  const faults: HeaderFaults = {}
  if (delay !== undefined && delay > 0) faults.delay = { ms: Math.min(delay, MAX_HEADER_DELAY_MS), percent: percent(headers, DELAY) }
  if (abort !== undefined && abort >= 200 && abort < 600) faults.abort = { status: abort, percent: percent(headers, ABORT) }
  if (throughput !== undefined && throughput > 0) faults.slowBody = { bytesPerSecond: throughput * 1024, percent: percent(headers, THROUGHPUT) }
  return faults.delay === undefined && faults.abort === undefined && faults.slowBody === undefined ? undefined : faults
}

function percent (headers: IncomingHttpHeaders, name: string): number {
  return Math.min(whole(headers[`${name}-percentage`]) ?? 100, 100)
}

function whole (value: string | string[] | undefined): number | undefined {
  return typeof value === 'string' && /^[0-9]{1,10}$/.test(value.trim()) ? Number(value.trim()) : undefined
}
