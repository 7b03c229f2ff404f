# Keygate's container image. Build: `docker build -t keygate .` (or `podman build --format docker
# -t keygate .`, so the HEALTHCHECK is kept). What it holds, how to run it and the fixed paths:
# docs/deployment.md#container-image.

# ---- build: every dependency, the compiled service, then only the production dependencies ----
FROM node:26-bookworm-slim AS build
# better-sqlite3 compiles from source when no prebuilt binary fits this Node.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
# Then only production dependencies. TypeScript outlives the prune as an optional peer of
# @nestjs/swagger, whose build plugin alone uses it; the compiled addon is all better-sqlite3 needs.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/typescript node_modules/.bin/tsc node_modules/.bin/tsserver \
 && cd node_modules/better-sqlite3 \
 && mv build/Release/better_sqlite3.node . && rm -rf build deps src \
 && mkdir -p build/Release && mv better_sqlite3.node build/Release/ \
 && cd /app \
 && find node_modules -name '*.map' -delete \
 && mkdir /data

# ---- run: Node, the production dependencies, dist/ and the mail templates; nothing else ----
FROM node:26-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    ConnectionStrings__DefaultConnection="Data Source=/data/keygate.db"
WORKDIR /app
# Owned by root, so the service (uid 1000) cannot change its own code even with a writable root.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY templates ./templates
# The SQLite default lives on this volume; the service creates keygate.db there on first start.
COPY --from=build --chown=1000:1000 /data /data
VOLUME ["/data"]
# The official image's `node` user, by number so that orchestrators can check it is not root.
USER 1000:1000
EXPOSE 3000
# Liveness (GET /health/live, 200): the image has no curl, so Node asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
# Node is PID 1 and handles SIGTERM itself (src/shutdown.ts): it drains requests for at most 9 s
# and exits 0, inside the engines' default 10 s grace period. Never `npm start`: npm would be PID 1.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
