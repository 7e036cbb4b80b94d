# syntax=docker/dockerfile:1
# Build: bundle the service with the dev dependencies (esbuild), no node_modules to ship, and make
# its start-up snapshot with the Node that runs it (a snapshot runs only on the Node that built it).
FROM node:26.10-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY lib lib
COPY schemas schemas
RUN npm run bundle && npm run snapshot

# Run: the snapshot, the bundle (the health check), the default profile and package.json.
FROM node:26.10-slim
ENV NODE_ENV=production PORT=8080
WORKDIR /app
COPY package.json ./
COPY --from=build /app/dist/service dist/service
COPY --from=build /app/dist/snapshot/snapshot.blob dist/snapshot/
COPY data data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "dist/service/healthcheck.js"]
# `serve` by default; `docker run --rm IMAGE capture <base-url> > profile.json`, `… validate <file>`.
# Node's arguments are npm start's (a test holds them equal): the flag bounds V8's young generation,
# which keeps RSS under 1000 connections near 130 MiB instead of 170 (docs/performance.md).
ENTRYPOINT ["node", "--max-semi-space-size=8", "--snapshot-blob", "dist/snapshot/snapshot.blob"]
CMD ["serve"]
