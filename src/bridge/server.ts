/**
 * Builds the WebDAV bridge: webdav-server v2 for request dispatch and authentication hooks,
 * with every verb handler replaced by ours (src/bridge/verbs/*), behind our own http(s)
 * server so that headers up to 512 KiB are accepted (davfs2 sends one If header listing every
 * lock token it holds: docs/client-quirks.md §4). Requests whose path cannot even be decoded are
 * answered here, before the library sees them (its Path throws on a malformed escape).
 *
 * What the library still gives us: the method table and dispatch (`server.method`), the
 * request context, the authentication hook (`httpAuthentication.getUser`), beforeRequest/
 * afterRequest hooks and the Allow header. Everything that reads or writes DAV semantics is ours.
 */
import { mkdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { v2 as webdav } from 'webdav-server';
import type { ChangeFeed, StoreChange } from '../common/change-feed.js';
import type { Config } from '../common/config.js';
import { systemClock, type Clock } from '../common/clock.js';
import { applyHttpLimits } from '../common/http-limits.js';
import { listenFailure } from '../common/startup-error.js';
import { createListenerServer, readTlsFiles, type TlsFiles } from '../common/tls.js';
import { redactUrl, type Logger } from '../common/logger.js';
import { logFailedLogin } from '../common/login-log.js';
import { MemoryLoginLimiter } from '../common/login-limiter.js';
import type { StoreClient } from '../store-client/contract.js';
import type { Storage } from '../store/storage/sql.js';
import { davFailureOf } from './dav-errors.js';
import './library-patches.js';
import { moveStateFileInto, openBridgeStateFile, SqlPropertyRepository } from './dead-properties.js';
import { decodeRequestPath, HrefError, wantsNfd, type DavPathParts } from './href.js';
import { LockStore } from './locks.js';
import { SqlLockRepository } from './sql-lock-repository.js';
import { MetadataCache } from './metadata-cache.js';
import { forgetBodiesOf } from './verbs/propfind.js';
import { AuthenticationFailed, parseBasic, SessionPool, type BridgeUser } from './sessions.js';
import { StoreTree, type DavPath } from './store-tree.js';
import type { BridgeServices, DavContext, VerbHandler } from './verbs/context.js';
import { verbHandlers } from './verbs/index.js';
import { DAV_METHODS } from './verbs/options.js';
import { writeFailure } from './verbs/respond.js';

export const MAX_HEADER_BYTES = 512 * 1024;

/** Status lines for requests refused before any handler saw them; anything else is a 400. */
const CLIENT_ERROR_STATUS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

export interface BridgeOptions {
  config: Config;
  logger: Logger;
  /**
   * The store to serve: a StoreClient of any transport (the embedded store in-process under
   * `npm start`), or the URL of any server of the interface (the HTTP client is made here).
   * With `storage` (the embedded store's database: storeStorageOf), locks and dead properties
   * live there, shared by every instance over that database; without it locks stay in memory
   * and properties in `stateFile`. With `changes` (the store's change feed over PostgreSQL), writes
   * made through other instances reach this bridge's caches at once instead of after their TTL.
   */
  store: { client: StoreClient; name: string; storage?: Storage; changes?: ChangeFeed } | { url: string };
  clock?: Clock;
  /** Defaults to config.bridge.port; 0 picks a free port. */
  port?: number;
  /**
   * Where a bridge without shared storage keeps dead properties and client mtimes; defaults to
   * `<dataDir>/bridge.sqlite`. With shared storage, a file there from an earlier release is moved
   * into the storage once (then renamed `.moved`).
   */
  stateFile?: string;
}

export interface RunningBridge {
  url: string;
  services: BridgeServices;
  client: StoreClient;
  close(): Promise<void>;
}

interface AuthOutcome {
  user?: BridgeUser;
  failure?: unknown;
}

/** The request path, decoded once before dispatch and reused by the verb. */
const decodedPaths = new WeakMap<IncomingMessage, DavPathParts>();

/** The outcome of authentication per request, filled by the library's getUser hook. */
const authOutcomes = new WeakMap<IncomingMessage, AuthOutcome>();

/** The client's address as logged and limited: an IPv4 peer of a dual-stack socket without its `::ffff:`. */
function clientAddress(remote: string | undefined): string | undefined {
  return remote?.replace(/^::ffff:(?=\d{1,3}(?:\.\d{1,3}){3}$)/i, '');
}

/** webdav-server authentication hook: Basic credentials -> store session (sessions.ts). */
class StoreAuthentication implements webdav.HTTPAuthentication {
  private readonly anonymous: webdav.IUser = { uid: 'anonymous', username: 'anonymous', isDefaultUser: true };

  constructor(
    private readonly sessions: SessionPool,
    private readonly log: Logger,
  ) {}

  /** No challenge on every response; 401s carry WWW-Authenticate themselves. */
  askForAuthentication(): Record<string, string> {
    return {};
  }

  getUser(ctx: webdav.HTTPRequestContext, callback: (error: Error, user?: webdav.IUser) => void): void {
    const done = (outcome: AuthOutcome, user: webdav.IUser) => {
      authOutcomes.set(ctx.request, outcome);
      callback(null as unknown as Error, user);
    };
    const credentials = parseBasic(ctx.request.headers.authorization);
    if (!credentials) {
      done(ctx.request.headers.authorization ? { failure: new AuthenticationFailed('bad-credentials') } : {}, this.anonymous);
      return;
    }
    const ip = clientAddress(ctx.request.socket.remoteAddress);
    const client = { ip, userAgent: ctx.request.headers['user-agent'] };
    this.sessions.authenticate(credentials, client).then(
      (user) => done({ user }, { uid: user.userId, username: user.name }),
      (failure: unknown) => {
        // Logged here, once per refused request, never with a stack (a flood of guesses must
        // not flood the log); the verb then answers it without logging it again.
        if (failure instanceof AuthenticationFailed && failure.logAs) logFailedLogin(this.log, 'dav', credentials.username, ip ?? '', failure.logAs);
        else if (failure instanceof AuthenticationFailed && failure.reason === 'unavailable') {
          this.log.warn({ user: credentials.username, ip, cause: failure.cause instanceof Error ? failure.cause.message : undefined }, failure.message);
        }
        done({ failure }, this.anonymous);
      },
    );
  }
}

export async function createBridgeServices(
  options: BridgeOptions,
  client: StoreClient,
): Promise<{ services: BridgeServices; sessions: SessionPool; closeState: () => Promise<void> }> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const cache = new MetadataCache({
    ttlMs: config.bridge.cacheTtlMs,
    maxEntries: config.bridge.cacheMaxEntries,
    maxBytes: config.bridge.cacheMaxBytes,
    onStale: forgetBodiesOf,
  });
  const stateFile = options.stateFile ?? path.join(config.dataDir, 'bridge.sqlite');
  const shared = 'storage' in options.store ? options.store.storage : undefined;
  const propertyLimits = {
    maxBytesPerNode: config.bridge.deadPropsMaxBytesPerNode,
    maxBytesPerOwner: config.bridge.deadPropsMaxBytesPerOwner,
  };
  let state: { locks: LockStore; props: SqlPropertyRepository; close: () => Promise<void> };
  if (shared) {
    const moved = await moveStateFileInto(stateFile, shared.sql);
    if (moved) options.logger.info({ ...moved, from: stateFile }, 'moved dead properties and client mtimes from the bridge state file into the database');
    state = {
      // Over PostgreSQL, instances share the locks through the database. Over SQLite one process
      // serves the data directory (instance-lock.ts), so the locks stay in its memory as they
      // always were: a PROPFIND then reads them from a Map, not with a statement per request.
      locks: new LockStore({
        clock,
        maxTimeoutSec: config.bridge.lockMaxTimeoutSec,
        ...(shared.dialect === 'postgres' ? { repository: new SqlLockRepository(shared.sql) } : {}),
      }),
      props: new SqlPropertyRepository(shared.sql, propertyLimits),
      // The storage is the store's: it closes it.
      close: async () => undefined,
    };
  } else {
    mkdirSync(path.dirname(stateFile), { recursive: true, mode: 0o700 });
    const file = openBridgeStateFile(stateFile);
    state = {
      locks: new LockStore({ clock, maxTimeoutSec: config.bridge.lockMaxTimeoutSec }),
      props: new SqlPropertyRepository(file.sql, propertyLimits),
      close: () => file.close(),
    };
  }
  const tree = new StoreTree({ client, cache, log: options.logger, privilegesTtlMs: config.bridge.cacheTtlMs });
  const feed = 'changes' in options.store ? options.store.changes : undefined;
  const unsubscribe = feed?.subscribe((change) => applyStoreChange(change, cache, tree, state.props));
  const services: BridgeServices = {
    tree,
    cache,
    locks: state.locks,
    props: state.props,
    clock,
    log: options.logger,
    quotaForNewMacOS: config.bridge.quotaForNewMacOS,
    ...(feed ? { changesSettled: () => feed.settled() } : {}),
  };
  const limiter = new MemoryLoginLimiter({ clock, maxFailures: config.bridge.loginMaxFailures, windowSec: config.bridge.loginWindowSec });
  const closeState = async (): Promise<void> => {
    unsubscribe?.();
    await state.close();
  };
  return { services, sessions: new SessionPool(client, { clock, limiter }), closeState };
}

/**
 * A change another instance (or this store's REST API) committed: the listings it outdated go,
 * and with them the PROPFIND answers made of them (the cache's onStale). Folders changed by this
 * process's own connections are skipped: when the write came through this bridge, it already
 * forgot or patched them (re-listing a folder after each of its own uploads would make filling
 * it quadratic); a write through this instance's REST API shows here after the TTL, as it always
 * did. "Everything" also comes after the feed reconnected, since notifications may have been lost.
 */
export function applyStoreChange(change: StoreChange, cache: MetadataCache, tree: StoreTree, props: SqlPropertyRepository): void {
  if (change.everything) {
    cache.forgetAll();
    tree.forgetPrivileges();
    props.noteOutsideChange();
    return;
  }
  if (change.properties && !change.local) props.noteOutsideChange();
  if (!change.local) for (const folder of change.folders) cache.forget(folder);
}

export async function startBridge(options: BridgeOptions): Promise<RunningBridge> {
  const { config } = options;
  const log = options.logger.child({ part: 'bridge' });
  // Before anything is opened: a wrong certificate path is found at once.
  const tls = bridgeTlsFiles(config);
  // The HTTP client (and undici) is loaded only to serve a store at a URL: in-process, the
  // bridge never needs it.
  const client =
    'client' in options.store
      ? options.store.client
      : (await import('../store-client/index.js')).createStoreClient(options.store.url, { timeoutMs: config.bridge.storeTimeoutMs, logger: log });
  const storeName = 'client' in options.store ? options.store.name : options.store.url;
  const { services, sessions, closeState } = await createBridgeServices({ ...options, logger: log }, client);

  const dav = new webdav.WebDAVServer({
    httpAuthentication: new StoreAuthentication(sessions, log),
    requireAuthentification: false,
    respondWithPaths: true,
    enableLocationTag: false,
  });
  for (const [method, handler] of Object.entries(verbHandlers)) dav.method(method, wrapVerb(handler, services, log));
  // The library keeps its own handlers for other methods (POST writes into its in-memory
  // file system, even for anonymous callers): every method we do not serve answers 405.
  const notAllowed = wrapVerb(methodNotAllowed, services, log);
  for (const method of Object.keys((dav as unknown as { methods: Record<string, unknown> }).methods)) {
    if (!(method.toUpperCase() in verbHandlers)) dav.method(method, notAllowed);
  }
  dav.onUnknownMethod(notAllowed);

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // Decode the path ourselves first: the library's Path throws on a malformed escape.
    try {
      decodedPaths.set(req, decodeRequestPath(req.url ?? '/'));
    } catch (err) {
      const status = err instanceof HrefError && (err.kind === 'path-too-long' || err.kind === 'too-deep') ? 414 : 400;
      res.writeHead(status, { 'Content-Length': '0' }).end();
      req.resume();
      return;
    }
    try {
      dav.executeRequest(req, res);
    } catch (err) {
      log.error({ err, url: redactUrl(req.url ?? '') }, 'request dispatch failed');
      if (!res.headersSent) res.writeHead(500, { 'Content-Length': '0' });
      res.end();
    }
  };

  const serverOptions = { maxHeaderSize: MAX_HEADER_BYTES, keepAliveTimeout: 65_000 };
  const server = createListenerServer(tls, serverOptions, onRequest);
  applyHttpLimits(server, config.http);
  server.on('clientError', (err, socket) => {
    const code = (err as { code?: string }).code;
    // As Node itself does: no status line into a response already under way (a request timeout
    // can strike while an answer is being written).
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    const answer = `HTTP/1.1 ${CLIENT_ERROR_STATUS[code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;
    // A client that was too slow may keep trickling: it is cut, not left half-open.
    if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      if (socket.writable && !inFlight) socket.write(answer);
      socket.destroy();
    } else if (socket.writable && !inFlight) socket.end(answer);
    else socket.destroy();
  });

  const port = options.port ?? config.bridge.port;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenFailure(err, { host: config.host, port, setting: 'bridge.port / DRIVEWAY_DAV_PORT' })));
    server.listen(port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  log.info({ url, store: storeName }, 'bridge listening');

  return {
    url,
    services,
    client,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      sessions.clear();
      await closeState();
      services.cache.close();
      await client.close();
    },
  };
}

/** The bridge's certificate and key when it serves HTTPS (read and checked once, at start). */
function bridgeTlsFiles(config: Config): TlsFiles | undefined {
  const { tlsCert, tlsKey } = config.bridge;
  if (!tlsCert || !tlsKey) return undefined;
  return readTlsFiles({ certPath: tlsCert, keyPath: tlsKey, certSetting: 'bridge.tlsCert / DRIVEWAY_TLS_CERT', keySetting: 'bridge.tlsKey / DRIVEWAY_TLS_KEY' });
}

/** Any method the bridge does not serve (POST, PATCH, SEARCH, ...): 405 with our Allow list. */
const methodNotAllowed: VerbHandler = async (ctx) => {
  ctx.res.writeHead(405, { Allow: DAV_METHODS.join(', '), 'Content-Length': '0' });
  ctx.res.end();
};

/** Adapts one of our async handlers to webdav-server's callback method interface. */
function wrapVerb(handler: VerbHandler, services: BridgeServices, log: Logger): webdav.HTTPMethod {
  return {
    chunked(wctx: webdav.HTTPRequestContext, _input, done: () => void) {
      const { request: req, response: res } = wctx;
      // The library adds permissive CORS headers to every answer; a file server must not.
      for (const name of ['Access-Control-Allow-Origin', 'Access-Control-Allow-Credentials', 'Access-Control-Expose-Headers']) res.removeHeader(name);
      res.setHeader('DAV', '1, 2');
      res.removeHeader('Server');
      const abort = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) abort.abort();
      });
      const outcome = authOutcomes.get(req) ?? {};
      const target = decodedPaths.get(req) ?? decodeRequestPath(req.url ?? '/');
      const method = (req.method ?? 'GET').toUpperCase();
      // Made on first use: a pino child (with its redaction set-up) cost ~15 µs a request, and
      // most requests log nothing at the default level.
      let requestLog: Logger | undefined;
      const logOf = (): Logger => (requestLog ??= log.child({ method, url: redactUrl(req.url ?? ''), user: outcome.user?.name }));
      const ctx: DavContext = {
        req,
        res,
        method,
        target,
        path: target.path as DavPath,
        nfd: wantsNfd(req.headers['user-agent']),
        hosts: [req.headers.host ?? ''].filter(Boolean),
        services,
        get log() {
          return logOf();
        },
        signal: abort.signal,
        maybeUser: outcome.user,
        user() {
          if (outcome.user) return outcome.user;
          throw outcome.failure ?? new AuthenticationFailed('bad-credentials');
        },
      };
      const started = performance.now();
      // Several instances: first let every change committed elsewhere reach the caches.
      (services.changesSettled ? services.changesSettled().then(() => handler(ctx)) : handler(ctx))
        .catch((err: unknown) => {
          const failure = davFailureOf(err);
          // A refused login was logged when it was refused (StoreAuthentication).
          if (failure.status >= 500 && !(err instanceof AuthenticationFailed)) logOf().error({ err, status: failure.status }, failure.reason);
          else if (log.isLevelEnabled('debug')) logOf().debug({ status: failure.status }, failure.reason);
          writeFailure(ctx, failure, err);
        })
        .finally(() => {
          if (log.isLevelEnabled('debug')) logOf().debug({ status: res.statusCode, ms: Math.round(performance.now() - started) }, 'dav request');
          if (!req.complete) req.resume();
          if (!res.writableEnded) res.end();
          done();
        });
    },
  };
}
