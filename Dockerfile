# The API, the worker and the demo's provider emulator share one image; docker-compose.yml picks the
# entry point. The image runs compiled JavaScript and a workflow bundle built ahead of time: nothing is
# compiled or bundled at start.

# Build: every dependency, tsc into dist/, the workflow bundle into dist/workflow-bundle.js.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY scripts/build-workflow-bundle.ts ./scripts/
RUN npm run build

# Runtime: production dependencies and dist/ only (no TypeScript sources).
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends espeak-ng ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The worker loads this bundle instead of bundling workflows/ with webpack at start.
ENV WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
# Two malloc arenas instead of one per allocating thread: less memory held (src/local/node-process-env.ts).
ENV MALLOC_ARENA_MAX=2
USER node
EXPOSE 3000
CMD ["node", "dist/src/main/api.js"]
