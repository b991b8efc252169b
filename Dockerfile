# Build stage: compile TypeScript with the dev dependencies, then keep only what runs.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# tini as PID 1: it reaps the processes command tools leave behind (a CLI's own children) and passes
# SIGTERM to node, which then finishes running turns before it exits. Without -g: a tool already
# approved and running is not killed by `docker stop` before the bot has let it finish, within the
# stop's grace period (10 s unless --stop-timeout: README, Deploy with Docker, Stopping).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
# /metrics on a port of its own: publish 3000 to Slack, scrape 9464 inside the network (README: Metrics).
ENV NODE_ENV=production PORT=3000 METRICS_PORT=9464
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json countersign.example.yml ./
# Command tools run as this user: give it only the credentials (kubeconfig, ...) the tools need.
USER node
EXPOSE 3000 9464
# PORT read as the bot reads it (trimmed, blank = unset): `docker run --env-file` keeps a value's trailing spaces.
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+((process.env.PORT||'').trim()||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
