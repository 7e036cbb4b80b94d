/**
 * The Node flags the service ships with: `npm start` (package.json) and the image's ENTRYPOINT
 * (Dockerfile) start it with these (test/bundle.test.ts holds all three equal), so that the
 * benchmarks measure the service as it ships. V8 reads them only at start-up.
 */
export const IMAGE_NODE_FLAGS = ['--max-semi-space-size=8']
