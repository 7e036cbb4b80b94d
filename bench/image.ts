/**
 * How the service ships: `npm start` (package.json) and the image's ENTRYPOINT (Dockerfile) run
 * `node` with these arguments, its flags and the start-up snapshot (relative to the project's
 * folder), and test/bundle.test.ts holds all three equal, so that the benchmarks measure the
 * service as it ships. V8 reads the flags only at start-up.
 */
export const IMAGE_NODE_FLAGS = ['--max-semi-space-size=8']
export const SHIPPED_NODE_ARGS = [...IMAGE_NODE_FLAGS, '--snapshot-blob', 'dist/snapshot/snapshot.blob']
