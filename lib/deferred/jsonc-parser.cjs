'use strict'
/**
 * jsonc-parser as lib/json-file.ts gets it in the bundle (package.json's `bundle` aliases it
 * here): loaded on first use, when a file read is not valid JSON, from a file of its own beside the
 * commands' file (the bundle's ON_DEMAND). Loading it builds some 1,200 strings of indentation for
 * its formatter, which the service never calls.
 */
let jsoncParser
exports.parse = function deferredParse (...args) {
  // Its ES module build: the UMD one requires its modules by path at run time.
  jsoncParser ??= require('../../node_modules/jsonc-parser/lib/esm/main.js')
  return jsoncParser.parse(...args)
}
