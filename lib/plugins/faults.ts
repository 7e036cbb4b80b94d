import type { Socket } from 'node:net'
import { Readable } from 'node:stream'
import type { FastifyPluginCallback, FastifyReply, FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify'
import fastifyPlugin from 'fastify-plugin'
import { http } from '../builtins.ts'
import type { Faults } from '../faults/faults.ts'
import type { Fault } from '../faults/rules.ts'
import type { Catalog, StatusKeys } from '../inventory/catalog.ts'
import type { Metrics } from '../metrics.ts'
import type { QueryParams } from '../reference/query.ts'
import { BAD_GATEWAY_PAGE, detail, MESSAGES } from '../errors.ts'
import { FAULT_PATHS, PROBE_PATHS, templateOf } from '../paths.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The fault drawn for the request; null for none. */
    fault: Fault | null
  }
}

/** The kinds of injected faults, as /metrics and the log name them. */
const FAULT_KINDS = ['delay', 'abort', 'reset', 'close', 'cut', 'slow_body'] as const
type FaultKind = typeof FAULT_KINDS[number]

/** Counts and logs one fault injected into a request to a route. */
type Injected = (request: FastifyRequest, url: string, kind: FaultKind, what: Record<string, unknown>) => void

/** A slow body goes out in this many pieces a second. */
const PIECES_PER_SECOND = 20

export interface FaultsPluginOptions {
  faults: Faults
  metrics: Metrics | undefined
  /** The 500's version keys follow the status's. */
  statusKeys: StatusKeys
}

/**
 * Injects the faults of FAULTS (faults/): each route a rule may name gets a first onRequest hook,
 * which draws the request's fault, waits out its delay, then aborts or breaks the connection; and a
 * last onSend hook, which dribbles or cuts the body. Other routes are untouched, and a request no
 * rule matches costs one lookup. Each fault is counted in /metrics and logged at debug.
 */
export function faultsPlugin ({ faults, metrics, statusKeys }: FaultsPluginOptions): FastifyPluginCallback {
  const injected: Injected = (request, url, kind, what) => {
    metrics?.faultInjected(url, kind)
    request.log.debug({ fault: kind, route: url, ...what, by: request.fault!.source }, 'fault injected')
  }
  return fastifyPlugin((app, _options, done) => {
    app.decorateRequest('fault', null)
    // Every route registered after this plugin (app.ts registers it before the routes).
    app.addHook('onRoute', (route) => {
      const path = templateOf(route.url)
      if (!FAULT_PATHS.includes(path)) return
      // Envoy's headers fault the API, never the probes.
      const headers = !(PROBE_PATHS as readonly string[]).includes(path)
      faults.route(route.url, path, headers)
      metrics?.faultable(route.url, FAULT_KINDS)
      route.onRequest = [drawHook(faults, route.url, path, headers, injected, statusKeys), ...[route.onRequest ?? []].flat()]
      route.onSend = [...[route.onSend ?? []].flat(), bodyHook(route.url, injected)]
    })
    done()
  }, { name: 'faults', decorators: { fastify: ['served'] } })
}

/** Draws the request's fault: waits out its delay, then aborts or breaks the connection, or lets the request go on. */
function drawHook (faults: Faults, url: string, path: string, headers: boolean, injected: Injected, statusKeys: StatusKeys): onRequestHookHandler {
  const act = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const { abort, connection } = request.fault!
    if (abort !== undefined) {
      injected(request, url, 'abort', { status: abort.status })
      return sendAbort(request, reply, abort, statusKeys)
    }
    if (connection === 'reset' || connection === 'close') {
      injected(request, url, connection, {})
      reply.hijack()
      const { socket } = request.raw
      if (!socket.destroyed) connection === 'reset' ? socket.resetAndDestroy() : socket.destroy()
      return
    }
    done()
  }
  return (request, reply, done) => {
    const fault = faults.rules.draw(path, request.headers, () => request.query as QueryParams, headers)
    if (fault === undefined) return done()
    request.fault = fault
    if (fault.delayMs === 0) return act(request, reply, done)
    injected(request, url, 'delay', { ms: Math.round(fault.delayMs) })
    const { socket } = request.raw
    const delayed = (): void => {
      untilGone(socket).delete(leave)
      act(request, reply, done)
    }
    const timer = setTimeout(delayed, fault.delayMs)
    // A client that leaves during the delay (a close, or its end of the connection: a FIN) is gone: nothing is held for it.
    const leave = (): void => {
      clearTimeout(timer)
      reply.hijack()
      socket.destroy()
    }
    untilGone(socket).add(leave)
  }
}

/** On a connection: what to release when its client leaves (its delayed requests). */
const ON_LEAVING = Symbol('released when the client leaves')
type Watched = Socket & { [ON_LEAVING]?: Set<() => void> }

/** The releases of a connection's delayed requests, run once when its client closes or ends its side. */
function untilGone (connection: Socket): Set<() => void> {
  const socket = connection as Watched
  let releases = socket[ON_LEAVING]
  if (releases === undefined) {
    const pending = releases = socket[ON_LEAVING] = new Set()
    const gone = () => {
      for (const release of pending) release()
      pending.clear()
    }
    socket.once('end', gone)
    socket.once('close', gone)
  }
  return releases
}

/** An abort's answer: its status, a Retry-After for a 503 or 429, and its body (abortBody). */
function sendAbort (request: FastifyRequest, reply: FastifyReply, { status, retryAfter }: NonNullable<Fault['abort']>, statusKeys: StatusKeys): void {
  reply.code(status)
  if (status === 503 || status === 429) reply.header('retry-after', String(retryAfter))
  reply.send(abortBody(status, retryAfter, request, statusKeys))
}

/**
 * The body the reference sends with an abort's status: Django REST framework's 503 and 429, the
 * reference's own 500, the 502 page of the proxy in front of it; any other status Envoy's header
 * asks for, its reason in the reference's error shape.
 */
function abortBody (status: number, retryAfter: number, request: FastifyRequest, statusKeys: StatusKeys): Buffer | string {
  if (status === 503) return detail(MESSAGES.serviceUnavailable)
  if (status === 429) return detail(MESSAGES.throttled(retryAfter))
  if (status === 502) return BAD_GATEWAY_PAGE
  if (status === 500) return serverError(request.server.served.current.catalog, statusKeys, request.fault!.source)
  return detail(`${http.STATUS_CODES[status] ?? 'Error'}.`)
}

/** The reference's 500 to an API request: what failed and the versions, as Django's JsonResponse writes it. */
function serverError ({ profile: { status } }: Catalog, statusKeys: StatusKeys, source: string): string {
  const fields = statusKeys === 'reference'
    ? { netbox_version: status['service-full-version'] ?? status['service-version'], python_version: status['runtime-version'] }
    : { service_version: status['service-version'], runtime_version: status['runtime-version'] }
  const body = { error: MESSAGES.injectedFault(source), exception: 'InjectedFault', ...fields }
  return `{${Object.entries(body).map(([name, value]) => `${JSON.stringify(name)}: ${JSON.stringify(value)}`).join(', ')}}`
}

/** The 502 page is HTML; a slow body is dribbled out, a cut one stops halfway and its connection ends. */
function bodyHook (url: string, injected: Injected): onSendHookHandler {
  return (request, reply, payload, done) => {
    const { fault } = request
    if (fault === null) return done(null, payload)
    if (fault.abort?.status === 502) reply.header('content-type', 'text/html')
    const { bytesPerSecond, connection } = fault
    const cut = connection === 'cut'
    if ((!cut && bytesPerSecond === undefined) || request.method === 'HEAD' || !(typeof payload === 'string' || Buffer.isBuffer(payload)) || payload.length === 0) {
      return done(null, payload)
    }
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload
    if (bytesPerSecond !== undefined) injected(request, url, 'slow_body', { bytesPerSecond })
    if (cut) injected(request, url, 'cut', { of: body.length })
    reply.header('content-length', String(body.length))
    done(null, paced(body, bytesPerSecond, cut ? Math.floor(body.length / 2) : body.length, () => request.raw.socket.destroySoon()))
  }
}

/**
 * A body's first `end` bytes, at `bytesPerSecond` (at once when undefined), in pieces on a clock
 * that catches up after a late timer; then `cut` when that is not the whole body, which ends the
 * connection once what was written has gone.
 */
function paced (body: Buffer, bytesPerSecond: number | undefined, end: number, cut: () => void): Readable {
  const piece = bytesPerSecond === undefined ? end : Math.max(1, Math.round(bytesPerSecond / PIECES_PER_SECOND))
  const started = performance.now()
  let sent = 0
  let timer: NodeJS.Timeout | undefined
  return new Readable({
    read () {
      if (sent === end) {
        // The last piece is on its way through the response: end the connection after it.
        if (end < body.length) setImmediate(cut)
        else this.push(null)
        return
      }
      const push = () => {
        const next = body.subarray(sent, Math.min(sent + piece, end))
        sent += next.length
        this.push(next)
      }
      const wait = bytesPerSecond === undefined ? 0 : started + (sent / bytesPerSecond) * 1000 - performance.now()
      if (wait <= 0) push()
      else timer = setTimeout(push, wait)
    },
    destroy (error, callback) {
      clearTimeout(timer)
      callback(error)
    },
  })
}
