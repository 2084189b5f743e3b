# driveway: the store (port 8080) and, from issue 3 on, the WebDAV bridge (port 8081).
#   docker build -t driveway .
#   docker run -p 8080:8080 -p 8081:8081 -v driveway-data:/data driveway
# The generated admin password is then in /data/initial-admin-password, or set
# DRIVEWAY_ADMIN_PASSWORD (and DRIVEWAY_JWT_SECRET) with -e at first start.

# better-sqlite3 ships N-API builds for common platforms inside its package; elsewhere it
# compiles, which needs python3, make and g++. Both stages that install it start from this one, and the runtime
# stage uses the same base image, so the compiled module matches the runtime exactly.
FROM node:24-bookworm-slim AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./

# Production dependencies only: what the runtime image ships.
FROM toolchain AS prod-deps
RUN npm ci --omit=dev

# Every dependency plus TypeScript, to compile src/ into dist/.
FROM toolchain AS build
RUN npm ci
COPY tsconfig.json tsconfig.build.json vite.web.config.ts ./
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DRIVEWAY_HOST=0.0.0.0 \
    DRIVEWAY_DATA_DIR=/data
WORKDIR /app
COPY --from=prod-deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY package.json ./
COPY config/example.yaml ./config/example.yaml
# The data folder belongs to the unprivileged `node` user of the base image; the code does not.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME ["/data"]
EXPOSE 8080 8081
# No curl in the slim image: node asks the store's /healthz, or (bridge-only container,
# `--only bridge`) the bridge's anonymous OPTIONS.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const ok = (r) => r.ok; fetch('http://127.0.0.1:' + (process.env.DRIVEWAY_STORE_PORT || 8080) + '/healthz').then(ok, () => false).then((up) => up || fetch('http://127.0.0.1:' + (process.env.DRIVEWAY_DAV_PORT || 8081) + '/', { method: 'OPTIONS' }).then(ok, () => false)).then((up) => process.exit(up ? 0 : 1))"]
ENTRYPOINT ["node", "dist/main.js"]
