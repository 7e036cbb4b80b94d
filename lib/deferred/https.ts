import type * as https from 'node:https'

/**
 * node:https as Fastify's server module gets it in the bundle (package.json's `bundle` aliases
 * it here): loaded on first use. Loading node:https loads node:tls and reads the system's
 * certificates, memory a replica would hold for nothing: service.ts gives Fastify node:http's server.
 */
export const createServer = ((...args: unknown[]) => (process.getBuiltinModule('node:https').createServer as (...args: unknown[]) => https.Server)(...args)) as typeof https.createServer
