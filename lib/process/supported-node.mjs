// The first thing the entry point and the test command run: on a Node older than package.json's
// engines (22.12), stop at once with one line, before anything else fails less clearly. Plain
// JavaScript, so that an old Node, which cannot strip TypeScript's types, can read it.
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(`inventory-status-api needs Node.js 22.12 or later; this is Node.js ${process.versions.node}\n`)
  process.exit(1)
}
