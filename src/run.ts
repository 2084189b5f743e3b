/**
 * What `driveway` runs once main.ts found the Node.js fitting: its subcommands (src/cli/program.ts
 * parses the command line; each command is one file of src/cli/) and `serve`, the default, which
 * lives here: it reads the configuration, starts the embedded store and/or the WebDAV bridge,
 * prints their URLs, and on SIGINT/SIGTERM drains both (requests under way finish within
 * http.shutdownGraceSec, new ones get 503, /readyz 503) before it exits 0; a second signal stops
 * at once.
 *
 *   driveway [serve] [--config FILE] [--only store|bridge]
 *   driveway migrate | user | check ...     (driveway --help)
 */
import path from 'node:path';
import type { BridgeOptions, WebAppLocation } from './bridge/server.js';
import type { ServeOptions } from './cli/context.js';
import { runCli } from './cli/program.js';
import { ConfigError, loadConfig, type Config } from './common/config.js';
import { DataDirInUseError, lockDataDir, type InstanceLock, type LockedPart } from './store/storage/instance-lock.js';
import { createLogger } from './common/logger.js';
import { restrictUmask } from './common/private-files.js';
import { StartupError } from './common/startup-error.js';
import type { RunningStore } from './store/server.js';
import type { RunningBridge } from './bridge/server.js';

/** `driveway serve`: runs until SIGINT/SIGTERM, then exits the process itself. */
async function serve(values: ServeOptions): Promise<void> {
  let config: Config;
  try {
    config = loadConfig({ configFile: values.configFile, flags: values.only ? { run: values.only } : {} });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel, undefined, config.log.format);
  // Last line of defence: a bug in one request must not take every mounted drive down.
  // (Stock webdav-server 2.6.3 could be crashed by a single header: docs/client-quirks.md §0.)
  process.on('uncaughtException', (err) => log.error({ err }, 'uncaught exception (request dropped, process kept running)'));
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection (process kept running)'));
  const locks: InstanceLock[] = [];
  // One process per data directory and part (instance-lock.ts), taken before anything is opened.
  const lockPart = (part: LockedPart): void => {
    try {
      locks.push(lockDataDir(config.dataDir, part, log));
    } catch (err) {
      if (!(err instanceof DataDirInUseError)) throw err;
      log.error({ dataDir: err.dataDir, part, holderPid: err.holderPid }, 'data directory in use');
      process.stderr.write(`driveway: ${err.message}\n`);
      process.exit(3);
    }
  };
  if (config.run !== 'bridge') lockPart('store');
  if (config.run !== 'store') lockPart('bridge');

  // Each part is loaded only when it runs: a bridge alone does not carry fastify, SQLite and
  // the store's modules in its memory, nor a store alone webdav-server.
  // Metrics (off by default): prom-client is loaded only then, on a listener of its own.
  const metricsModule = config.metrics.enabled ? await import('./common/metrics.js') : undefined;
  const metrics = metricsModule ? new metricsModule.Metrics() : undefined;

  let running: RunningStore | undefined;
  if (config.run !== 'bridge') {
    const { startStore } = await import('./store/server.js');
    const store = await startStore({ config, logger: log, ...(metrics ? { metrics } : {}) });
    running = store;
    log.info({ url: store.url, edition: config.store.edition, dataDir: config.dataDir }, 'store listening');
    process.stdout.write(`driveway store:  ${store.url}  (edition ${config.store.edition}, data in ${config.dataDir})\n`);
  }
  const embedded = running?.ctx;
  let bridge: RunningBridge | undefined;
  if (config.run !== 'store') {
    // With the store in this process the bridge calls it directly (no loopback HTTP hop); a
    // configured DRIVEWAY_STORE_URL, or --only bridge, keeps the HTTP client, so the bridge can
    // serve any server of the interface.
    let store: BridgeOptions['store'];
    if (config.bridge.storeUrl) store = { url: config.bridge.storeUrl };
    else if (embedded) {
      // Over PostgreSQL, the Basic-login limiter in the store's database (every instance counts
      // together) and its change feed (what other instances changed): store/bridge-store.ts.
      const { inProcessStore } = await import('./store/bridge-store.js');
      store = inProcessStore(embedded);
    } else {
      process.stderr.write('the bridge alone needs DRIVEWAY_STORE_URL (the store it talks to)\n');
      process.exit(2);
    }
    // Locks and dead properties: in the store's database when the bridge serves it in-process
    // (every instance over it agrees), else in the bridge's own bridge.sqlite (storage/dav-state.ts).
    const { openDavState, propertyLimitsOf } = await import('./store/storage/dav-state.js');
    const stateStorage = 'client' in store && embedded ? embedded.storage : undefined;
    const state = await openDavState({
      storage: stateStorage,
      stateFile: path.join(config.dataDir, 'bridge.sqlite'),
      properties: propertyLimitsOf(config.bridge),
      log,
    });
    // Over SQLite (the store's database or bridge.sqlite) this process holds the data directory's
    // lock: an assembly lease left there is a killed process's. Freed, a client's retried MOVE
    // assembles at once instead of waiting out the lease (60 s). Over PostgreSQL another instance
    // may be assembling: its lease stands.
    if (!stateStorage || stateStorage.dialect === 'sqlite') {
      const freed = await state.uploads.releaseAll();
      if (freed > 0) log.info({ uploads: freed }, 'freed the assembly leases a previous process left');
    }
    const { startBridge } = await import('./bridge/server.js');
    // In-process, the bridge is as ready as the store it calls: the same database and blob probes.
    // The index page links to the web app: at store.publicUrl, else at the store of this process.
    const webApp: WebAppLocation | undefined = config.store.publicUrl
      ? { url: config.store.publicUrl }
      : running
        ? { port: Number(new URL(running.url).port), https: running.url.startsWith('https:') }
        : undefined;
    bridge = await startBridge({ config, logger: log, store, state, ...(running ? { readinessChecks: running.readiness.checks } : {}), ...(metrics ? { metrics } : {}), ...(webApp ? { webApp } : {}) });
    process.stdout.write(`driveway WebDAV: ${bridge.url}/  (store ${'url' in store ? store.url : store.name})\n`);
  }
  const metricsServer = metricsModule && metrics ? await metricsModule.startMetricsServer(metrics, config.host, config.metrics.port, log) : undefined;
  if (metricsServer) process.stdout.write(`driveway metrics: ${metricsServer.url}\n`);

  let closing = false;
  const graceMs = config.http.shutdownGraceSec * 1000;
  const shutdown = (signal: string): void => {
    if (closing) {
      log.warn({ signal }, 'second signal: stopping at once');
      for (const lock of locks) lock.release();
      process.exit(1);
    }
    closing = true;
    log.info({ signal, graceSec: config.http.shutdownGraceSec }, 'draining: no new requests, those under way may finish');
    // Both listeners stop accepting at once. The store keeps its database and blob backend open
    // until the bridge's requests, which call it in-process, are done.
    const bridgeClosed = bridge?.close(graceMs) ?? Promise.resolve();
    running?.holdClose(bridgeClosed);
    Promise.allSettled([bridgeClosed, running?.close(graceMs), metricsServer?.close()]).then((results) => {
      for (const result of results) if (result.status === 'rejected') log.error({ err: result.reason }, 'error while stopping');
      for (const lock of locks) lock.release();
      log.info({ signal }, 'stopped');
      process.exit(0);
    });
    // Cut connections still need their handlers to notice; past this, nothing is worth waiting for.
    setTimeout(() => {
      log.error('did not stop within the grace period and 10 s more; exiting');
      process.exit(1);
    }, graceMs + 10_000).unref();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

// Before any command creates anything: what is made without an explicit mode (by a library) is
// the service user's only too. Files at rest: common/private-files.ts.
restrictUmask();

runCli(process.argv.slice(2), { serve }).then(
  (code) => {
    // serve keeps running (its listeners hold the process); every other command ends here.
    if (code !== undefined) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof StartupError) {
      // One line naming the path or setting and what to do (startup-error.ts); no stack.
      process.stderr.write(`driveway: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`driveway failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
