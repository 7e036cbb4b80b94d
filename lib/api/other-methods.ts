import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify'
import FindMyWay from 'find-my-way'

declare module 'fastify' {
  interface FastifyInstance {
    /** The known paths' answers to the methods they have no route for. */
    otherMethods: OtherMethods
  }
}

/** The path's params and the query, read as Fastify's router reads them for a route. */
export interface Lookup {
  readonly params: Record<string, string | undefined>
  readonly query: unknown
}

/** Refuses a method a path has no route for: throws its 405, or the error a check of the path's routes finds first. */
export type OtherMethodHandler = (request: FastifyRequest, reply: FastifyReply, lookup: Lookup) => void

/** What a route is to the hooks: its template and its config. */
export interface RouteOf {
  readonly url: string | undefined
  readonly config: FastifyContextConfig
}

interface Entry extends RouteOf {
  readonly handle: OtherMethodHandler
}

const NO_ROUTE: RouteOf = { url: undefined, config: {} }

/**
 * The answer of each known path to the methods it has no route for: a 405, after the
 * checks its routes make. Fastify routes one method at a time, and find-my-way compiles two
 * functions for each method of each path: the 30-odd methods Node parses, routed at every
 * path, were 4-5 MiB of idle RSS (docs/performance.md). So GET, HEAD and OPTIONS are routes and
 * the rest reach the not-found handler, which finds the path here: in one find-my-way tree
 * with the app's router options, so that a path and its query read here as a route's do.
 */
export class OtherMethods {
  readonly #router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>

  constructor (routerOptions: FindMyWay.Config<FindMyWay.HTTPVersion.V1>) {
    this.#router = FindMyWay(routerOptions)
  }

  add (url: string, config: FastifyContextConfig, handle: OtherMethodHandler): void {
    const entry: Entry = { url, config, handle }
    // One tree, filed under one method: what is looked up here is the path. The entry is the
    // route's store; find-my-way's handler, which lookup() would call, is never used.
    this.#router.on('GET', url, () => {}, entry)
  }

  /** Throws the answer to a request whose path is known here (see OtherMethodHandler); returns for any other. */
  refuse (request: FastifyRequest, reply: FastifyReply): void {
    const found = this.#router.find('GET', request.url)
    if (found !== null) (found.store as Entry).handle(request, reply, { params: found.params, query: found.searchParams })
  }

  /**
   * The route a request's answer belongs to: the one it was routed to, or, for a method its
   * path has no route for, the path's entry here. The hooks read the config and the template
   * (Host check, headers, metrics) here, so that a 405 is answered as its routes' answers are.
   */
  routeOf (request: FastifyRequest): RouteOf {
    if (!request.is404) return request.routeOptions
    return (this.#router.find('GET', request.url)?.store as Entry | undefined) ?? NO_ROUTE
  }
}
