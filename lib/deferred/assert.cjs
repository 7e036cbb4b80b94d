'use strict'
/**
 * node:assert as the bundle's packages get it (package.json's `bundle` aliases it here): Fastify,
 * find-my-way and pino's streams require it as they load, to check their arguments. Loading
 * node:assert loads its diff and colour modules, and the colours open process.stderr: the
 * stand-in loads it only for an assertion that fails, or for any other function of it.
 */
let assert
const load = () => (assert ??= process.getBuiltinModule('node:assert'))

function ok (value, ...message) {
  if (!value) load()(value, ...message)
}

// Called as it is (@fastify/sensible asserts on every Cache-Control it sets); what it does not have, node:assert gives.
module.exports = Object.setPrototypeOf(ok, new Proxy({}, { get: (_target, name) => load()[name] }))
