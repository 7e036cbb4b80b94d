# syntax=docker/dockerfile:1
# Build: bundle the service with the dev dependencies (esbuild): one file to load, no node_modules.
FROM node:26.10-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY .ci/bundle.mjs .ci/bundle.mjs
COPY lib lib
COPY schemas schemas
RUN npm run bundle

# Run: the bundle (with the licences of what it holds), the default profile, package.json (the
# version, and "type": "module" for the entry point) and the licence.
FROM node:26.10-slim
# The version is package.json's (test/process/bundle.test.ts holds them equal).
LABEL org.opencontainers.image.title="inventory-status-api" \
      org.opencontainers.image.description="Fast read-only implementation of the inventory service status and object-type API" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="MIT"
ENV NODE_ENV=production PORT=8080 MALLOC_ARENA_MAX=2 NODE_COMPILE_CACHE=/app/compile-cache
WORKDIR /app
COPY package.json LICENSE ./
COPY --from=build /app/dist/service dist/service
COPY data data
# V8's code of the service, made here by serving once and asking it for the status (the code is
# kept once it has answered), with the flags it runs with (V8 refuses code made under other flags):
# every container starts from it, also on a read-only root file system. The build fails if none was
# kept within a minute.
RUN mkdir compile-cache && chown node compile-cache
USER node
RUN PORT=0 HOST=127.0.0.1 DRAIN_DELAY_MS=0 node --max-semi-space-size=4 --min-semi-space-size=1 --no-memory-reducer dist/service/main.js > /tmp/serving.log & \
    for tenth in $(seq 600); do \
      ls compile-cache/*.code > /dev/null 2>&1 && break; \
      port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' /tmp/serving.log); \
      [ -z "$port" ] || node -e "fetch('http://127.0.0.1:$port/api/status/').then((answer) => answer.text())"; \
      sleep 0.1; \
    done; \
    kill $! && wait $! && rm /tmp/serving.log && ls compile-cache/*.code
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "dist/service/healthcheck.js"]
# `serve` by default; `docker run --rm IMAGE capture <base-url> > profile.json`, `… validate <file>`.
# The Node flags and MALLOC_ARENA_MAX are npm start's (a test holds them equal): they bound V8's young
# generation (from the start: no scavenge in a start) and glibc's arenas, which keeps RSS under 1000
# connections near 120 MiB instead of 170, and keep V8's memory reducer from slowing every request
# after an idle spell (docs/performance.md).
ENTRYPOINT ["node", "--max-semi-space-size=4", "--min-semi-space-size=1", "--no-memory-reducer", "dist/service/main.js"]
CMD ["serve"]
