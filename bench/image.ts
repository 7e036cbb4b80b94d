/**
 * The Node flags the image's ENTRYPOINT starts the service with (Dockerfile; test/bundle.test.ts
 * holds the two equal), so that the benchmarks measure the service as it ships. V8 reads them
 * only at start-up. See the README, Memory.
 */
export const IMAGE_NODE_FLAGS = ['--max-semi-space-size=8', '--initial-old-space-size=16']
