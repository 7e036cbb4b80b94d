'use strict'
/**
 * type-is as @fastify/sensible gets it in the bundle (package.json's `bundle` aliases it here):
 * loaded on first use, by request.is(), which this service never calls. Its media-type database
 * is most of what registering @fastify/sensible costs a replica's start-up and memory.
 */
let typeIs
module.exports = function deferredTypeIs (...args) {
  typeIs ??= require('../../node_modules/type-is/index.js')
  return typeIs(...args)
}
