# The API and the worker share one image; docker-compose.yml picks the entry point.
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends espeak-ng ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities

ENV NODE_ENV=production
USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "src/main/api.ts"]
