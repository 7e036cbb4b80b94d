import { http } from '../builtins.ts'

/** Every method Node parses except CONNECT, which never reaches a request handler: each is routed, bodyless (app.ts). */
export const ROUTED_METHODS = http.METHODS.filter((method) => method !== 'CONNECT')
/** The methods a route answers with a 405: all but GET, HEAD and OPTIONS. */
export const OTHER_METHODS = ROUTED_METHODS.filter((method) => !['GET', 'HEAD', 'OPTIONS'].includes(method))
