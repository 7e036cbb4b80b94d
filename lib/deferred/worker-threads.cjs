'use strict'
/**
 * node:worker_threads as pino and thread-stream get it in the bundle (package.json's `bundle`
 * aliases it here): loaded when a Worker is made (a pino transport, which the service does not
 * use), or any other of its exports is read. The commands run on a process's main thread only:
 * main.js is the entry point of a process, a cluster's workers included, never of a thread.
 */
let workerThreads
const load = () => (workerThreads ??= process.getBuiltinModule('node:worker_threads'))

function Worker (...args) {
  return new (load().Worker)(...args)
}

// What it does not have, node:worker_threads gives.
module.exports = Object.setPrototypeOf({ isMainThread: true, Worker }, new Proxy({}, { get: (_target, name) => load()[name] }))
