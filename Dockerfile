# syntax=docker/dockerfile:1
# Build: compile TypeScript with the dev dependencies.
FROM node:26.10-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY lib lib
COPY schemas schemas
RUN npm run build

# Run: production dependencies, the compiled service and the default profile only.
FROM node:26.10-slim
ENV NODE_ENV=production PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist dist
COPY data data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["node", "dist/lib/process/healthcheck.js"]
CMD ["node", "dist/lib/process/server.js"]
