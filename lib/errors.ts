import { toJson } from './reference/json.ts'

/**
 * The catalogue of error answers: every text the reference answers with, in one place.
 * Each error body is the reference's `{"detail":"…"}`, or `{"<filter>":["…"]}` for the filters
 * the reference's rules refuse (their texts are the rules', reference/filters.ts).
 */
export const MESSAGES = {
  notFound: 'Not found.',
  noObjectType: 'No ObjectType matches the given query.',
  methodNotAllowed: (method: string) => `Method "${method}" not allowed.`,
  invalidHost: 'Invalid Host header.',
  moved: 'Moved permanently.',
  serverError: 'A server error occurred.',
  // Token authentication (tokens.ts).
  noCredentials: 'Authentication credentials were not provided.',
  noTokenKey: 'Invalid token header. No credentials provided.',
  tokenWithSpaces: 'Invalid token header. Token string should not contain spaces.',
  tokenNotUtf8: 'Invalid token header. Token string should not contain invalid characters.',
  invalidToken: 'Invalid token',
  // Requests Node itself refuses, before Fastify.
  badRequest: 'Bad request.',
  headersTooLarge: 'Request header fields too large.',
  requestTimeout: 'Request timeout.',
  expectationFailed: 'Expectation failed.',
  // Injected faults (plugins/faults.ts): Django REST framework's texts, which the reference answers with.
  serviceUnavailable: 'Service temporarily unavailable, try again later.',
  throttled: (seconds: number) => `Request was throttled. Expected available in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`,
  /** The `error` of an injected 500, where the reference's names what stopped it. */
  injectedFault: (source: string) => `fault injected (${source})`,
} as const

/** The proxy in front of the reference (nginx) answers a 502 with this page when the service does not answer. */
export const BAD_GATEWAY_PAGE = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n' +
  '<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'

/** The reference's error body: `{"detail":"…"}`. */
export function detail (message: string): Buffer {
  return Buffer.from(toJson({ detail: message }))
}
