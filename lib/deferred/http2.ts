import type * as http2 from 'node:http2'

/** node:http2 as Fastify's server module gets it in the bundle: loaded on first use, as https.ts says. */
export const createServer = ((...args: unknown[]) => (process.getBuiltinModule('node:http2').createServer as (...args: unknown[]) => http2.Http2Server)(...args)) as typeof http2.createServer

export const createSecureServer = ((...args: unknown[]) => (process.getBuiltinModule('node:http2').createSecureServer as (...args: unknown[]) => http2.Http2SecureServer)(...args)) as typeof http2.createSecureServer
