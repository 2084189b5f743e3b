/**
 * A real store and a real bridge in front of it, both on 127.0.0.1 with OS-chosen ports, each
 * with its own temp state. The bridge reaches the store through the transport a suite asks for,
 * else DRIVEWAY_TEST_TRANSPORT: `local` (in-process, as `npm start` runs it; the default) or
 * `http` (as `--only bridge` runs it against any server of the interface). vitest.config.ts runs
 * the bridge suites once with each. As run.ts wires it (storage/dav-state.ts), an in-process
 * bridge keeps its locks and dead properties in the store's database; over HTTP, in memory and its
 * own bridge.sqlite.
 */
import path from 'node:path';
import type { Clock } from '../../src/common/clock.js';
import { createLogger, type Logger } from '../../src/common/logger.js';
import type { BridgeState } from '../../src/contracts/bridge-state.js';
import { startBridge, type BridgeOptions, type RunningBridge } from '../../src/bridge/server.js';
import type { Config } from '../../src/common/config.js';
import { inProcessStore } from '../../src/store/bridge-store.js';
import { openDavState, propertyLimitsOf } from '../../src/store/storage/dav-state.js';
import type { NodeId, StoreSession } from '../../src/store-client/index.js';
import { startCountingProxy, type CountingProxy } from './counting-proxy.js';
import { createFolder } from './seed.js';
import { storeFixture, type StoreFixture, type StoreFixtureOptions, type TestUser } from './store-fixture.js';
import type { TestStore } from './start-store.js';

/** A user and their Basic Authorization header value, as the bridge suites act. */
export type DavUser = TestUser & { auth: string };

export interface BridgeFixture extends StoreFixture {
  bridge: RunningBridge;
  /** Bridge base URL without a trailing slash. */
  davUrl: string;
  /** A user and their Basic Authorization header value. */
  newDavUser(options?: { quotaBytes?: number }): Promise<DavUser>;
  /** With `viaProxy`: the counting proxy every bridge -> store request goes through. */
  proxy?: CountingProxy;
}

export type Transport = 'local' | 'http';

/** The transport of this test run: DRIVEWAY_TEST_TRANSPORT, `local` unless it says `http`. */
export const TEST_TRANSPORT: Transport = process.env.DRIVEWAY_TEST_TRANSPORT === 'http' ? 'http' : 'local';

/** How the bridge of a test reaches `store`: in-process, or over HTTP at `url`. */
export function bridgeStoreFor(store: TestStore, transport: Transport = TEST_TRANSPORT, url = store.url): BridgeOptions['store'] {
  return transport === 'local' ? inProcessStore(store.ctx, 'in-process') : { url };
}

/**
 * Where the bridge of a test keeps locks and dead properties, as run.ts chooses: in-process, the
 * store's database (a `stateFile` there from an earlier release is moved in); over HTTP, its own
 * `stateFile` (default `<dataDir>/bridge.sqlite`). The bridge closes it.
 */
export function bridgeStateFor(
  store: TestStore,
  transport: Transport = TEST_TRANSPORT,
  options: { stateFile?: string; config?: Config } = {},
): Promise<BridgeState> {
  const config = options.config ?? store.config;
  return openDavState({
    storage: transport === 'local' ? store.ctx.storage : undefined,
    stateFile: options.stateFile ?? path.join(config.dataDir, 'bridge.sqlite'),
    properties: propertyLimitsOf(config.bridge),
  });
}

export interface BridgeFixtureOptions extends StoreFixtureOptions {
  bridgeFlags?: {
    cacheTtlMs?: number;
    deadPropsMaxBytesPerOwner?: number;
    uploadExpirySec?: number;
    uploadMaxOpenPerUser?: number;
    uploadMaxParts?: number;
    loginMaxFailures?: number;
    bulkUploadClients?: 'fixed' | 'all' | 'none';
    pushMaxSocketsPerUser?: number;
    pushMaxSocketsPerAddress?: number;
    pushSessionCheckSec?: number;
    pushPingSec?: number;
  };
  /** The bridge's transport to the store; DRIVEWAY_TEST_TRANSPORT by default (`viaProxy` means HTTP). */
  transport?: Transport;
  /** The bridge's clock (lock expiry, session renewal); a ManualClock lets a test move time. Default: system time. */
  clock?: Clock;
  /** Put a counting proxy (counting-proxy.ts) between bridge and store: `fixture.proxy`. */
  viaProxy?: boolean;
  /** The bridge's logger (e.g. one writing to a captured stream); default: level DRIVEWAY_TEST_LOG or silent. */
  bridgeLogger?: Logger;
  /** The bridge's port (default 0: any free one); give the store the same `bridge.port` for the WebDrive URLs it hands out. */
  bridgePort?: number;
}

export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export async function bridgeFixture(options: BridgeFixtureOptions = {}): Promise<BridgeFixture> {
  const fixture = await storeFixture(options);
  const config = structuredClone(fixture.store.config);
  Object.assign(config.bridge, options.bridgeFlags ?? {});
  const proxy = options.viaProxy ? await startCountingProxy(fixture.store.url) : undefined;
  const transport = proxy ? 'http' : (options.transport ?? TEST_TRANSPORT);
  const bridge = await startBridge({
    config,
    logger: options.bridgeLogger ?? createLogger(process.env.DRIVEWAY_TEST_LOG ?? 'silent'),
    store: bridgeStoreFor(fixture.store, transport, proxy?.url),
    state: await bridgeStateFor(fixture.store, transport, { config }),
    port: options.bridgePort ?? 0,
    // As run.ts does with the store in the same process: the index page links to its web app.
    webApp: { port: Number(new URL(fixture.store.url).port), https: fixture.store.url.startsWith('https:') },
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  return {
    ...fixture,
    bridge,
    davUrl: bridge.url,
    ...(proxy ? { proxy } : {}),
    async newDavUser(opts = {}) {
      const user = await fixture.newUser({ quotaBytes: opts.quotaBytes });
      return { ...user, auth: basicAuth(user.email, user.password) };
    },
    async close() {
      await bridge.close();
      await proxy?.close();
      await fixture.close();
    },
  };
}

/**
 * The setup most verb suites share: a bridge fixture, one user, and a folder `home/dir` of
 * theirs made through the store.
 */
export async function bridgeWithUserFolder(): Promise<{ f: BridgeFixture; auth: string; session: StoreSession; dirId: NodeId }> {
  const f = await bridgeFixture();
  const user = await f.newDavUser();
  const dirId = await createFolder(f.client, user.session, 'home', 'dir');
  return { f, auth: user.auth, session: user.session, dirId };
}
