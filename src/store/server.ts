/** Listens with the store app and closes it; the only store file that binds a port. */
import { drainWhile } from '../common/drain.js';
import { applyHttpLimits } from '../common/http-limits.js';
import type { Logger } from '../common/logger.js';
import { listenFailure } from '../common/startup-error.js';
import { buildStoreApp, type StoreAppOptions, type StoreApp } from './app.js';

export interface RunningStore extends StoreApp {
  url: string;
  /**
   * Drains and closes: /readyz answers 503 and new requests on kept-alive connections 503 with
   * Connection: close at once, no connection is accepted any more, requests under way may finish
   * for `graceMs` (default: http.shutdownGraceSec), then every connection is cut and the
   * database and blob backend are closed (after holdClose's work settled).
   */
  close(graceMs?: number): Promise<void>;
}

export async function startStore(options: StoreAppOptions & { port?: number }): Promise<RunningStore> {
  const built = await buildStoreApp(options);
  const { config } = options;
  const port = options.port ?? config.store.port;
  // Slow and stalled clients are cut (fastify's own defaults leave every timeout off).
  applyHttpLimits(built.app.server, config.http, { log: built.app.log as Logger, uncappedAddresses: config.store.trustedProxies });
  try {
    await built.app.listen({ host: config.host, port });
  } catch (err) {
    await built.app.close();
    throw listenFailure(err, { host: config.host, port, setting: 'store.port / DRIVEWAY_STORE_PORT' });
  }
  const address = built.app.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let closing: Promise<void> | undefined;
  return {
    ...built,
    url: `${config.store.tlsCert ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${boundPort}`,
    close: (graceMs = config.http.shutdownGraceSec * 1000) => {
      closing ??= (async () => {
        built.readiness.startDraining();
        await drainWhile(built.app.server, graceMs, () => built.app.close());
      })();
      return closing;
    },
  };
}
