/**
 * Builds the WebDAV bridge: webdav-server v2 for request dispatch and authentication hooks,
 * with every verb handler replaced by ours (src/bridge/verbs/*), behind our own http(s)
 * server so that headers up to 512 KiB are accepted (davfs2 sends one If header listing every
 * lock token it holds: docs/client-quirks.md §4). Requests whose path cannot even be decoded are
 * answered here, before the library sees them (its Path throws on a malformed escape).
 *
 * Paths under `/remote.php/dav/<space>/<user>/` go to that space's handlers (remote-dav.ts,
 * remote-spaces.ts: the drive again, or Nextcloud chunked uploads), decided per request here.
 * `/status.php` and `/ocs/v{1,2}.php/` are the Nextcloud clients' discovery (nextcloud/ocs.ts),
 * `/index.php/core/preview[.png]` the apps' previews (nextcloud/preview.ts): answered beside DAV,
 * with the same authentication; `/push/ws` their push websocket (nextcloud/push.ts).
 * Callers are Basic credentials (sessions.ts) or a store session token as Bearer (token-sessions.ts,
 * the web app's); a CORS preflight is answered before either (cors.ts), never as DAV.
 *
 * What the library still gives us: the method table and dispatch (`server.method`), the
 * request context, the authentication hook (`httpAuthentication.getUser`), beforeRequest/
 * afterRequest hooks and the Allow header. Everything that reads or writes DAV semantics is ours.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import path from 'node:path';
import { v2 as webdav } from 'webdav-server';
import { AccessLog } from '../common/access-log.js';
import type { Metrics } from '../common/metrics.js';
import type { ChangeFeed, StoreChange } from '../common/change-feed.js';
import type { Config } from '../common/config.js';
import { systemClock, type Clock } from '../common/clock.js';
import { applyHttpLimits } from '../common/http-limits.js';
import { listenFailure } from '../common/startup-error.js';
import { createListenerServer, readTlsFiles, type TlsFiles } from '../common/tls.js';
import { clientIp } from '../common/client-ip.js';
import { redactUrl, type Logger } from '../common/logger.js';
import { livenessAnswer, Readiness, readinessAnswer, RETRY_AFTER_SEC, type HealthAnswer, type ReadinessCheck } from '../common/readiness.js';
import { drainWhile } from '../common/drain.js';
import { logFailedLogin } from '../common/login-log.js';
import { MemoryLoginLimiter, type LoginLimiter, type LoginLimiterOptions } from '../common/login-limiter.js';
import type { NodeId, StoreClient } from '../store-client/contract.js';
import { folderKeyOf } from './tree/paths.js';
import { davFailureOf } from './dav-errors.js';
import './library-patches.js';
import type { PropertyRepository } from './dead-properties.js';
import { FileIds } from './file-ids.js';
import { Previews } from './previews.js';
import type { BridgeState } from '../contracts/bridge-state.js';
import { decodeRequestPath, HrefError, wantsNfd, type DavPathParts } from './href.js';
import { LockStore } from './locks.js';
import { MetadataCache } from './metadata-cache.js';
import { forgetBodiesOf } from './verbs/propfind.js';
import { AuthenticationFailed, parseBasic, SESSION_CONFIRM_MS, SessionPool, withClientView, withoutMacSideFiles, withVersionsListed, type BridgeUser } from './sessions.js';
import { parseBearer, TokenSessions } from './token-sessions.js';
import { CorsPolicy } from './cors.js';
import { requestOrigin } from '../common/request-origin.js';
import { listsVersionsTo } from './versions-view.js';
import { isFinderAgent } from '../common/side-files.js';
import { StoreTree, type DavPath } from './store-tree.js';
import type { BridgeServices, DavContext, VerbHandler, WebAppLocation } from './request/context.js';
import { driveHandlers } from './handlers.js';
import { routeRemoteDav } from './remote-dav.js';
import { DAV_ROOT_HANDLERS, REMOTE_SPACE_NAMES, REMOTE_SPACES } from './remote-spaces.js';
import { LocalPartStore } from '../contracts/local-part-store.js';
import { UploadService } from './upload-service.js';
import { BulkGate } from './bulk-gate.js';
import type { PartStore } from '../contracts/upload-sessions.js';
import { DAV_METHODS } from './verbs/options.js';
import { writeFailure } from './request/respond.js';
import { answerNextcloud, nextcloudRouteOf, type NextcloudDoorOptions } from './nextcloud/ocs.js';
import { webAppPageUrl } from './verbs/index-page.js';
import { LoginFlows } from './nextcloud/login-flow.js';
import { PushDoor } from './nextcloud/push.js';
import { answerPreview, previewRouteOf } from './nextcloud/preview.js';

export type { WebAppLocation };

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
   */
  store:
    | {
        client: StoreClient;
        name: string;
        /** The store's change feed over PostgreSQL: writes made through other instances reach this bridge's caches at once instead of after their TTL. */
        changes?: ChangeFeed;
        /** run.ts: the store's database limiter over PostgreSQL, so Basic logins are counted where every instance counts them; without it, in memory. */
        limiter?: (options: LoginLimiterOptions) => LoginLimiter | undefined;
        /** Where chunked uploads' parts go beside this store (its S3 bucket); unset, the `parts` default. */
        parts?: PartStore;
      }
    | { url: string };
  /**
   * Where locks and dead properties live, chosen by whoever starts the bridge (run.ts, through
   * the storage layer's openDavState): the bridge holds no SQL and opens no database itself.
   * The bridge closes it when it closes.
   */
  state: BridgeState;
  clock?: Clock;
  /** Defaults to config.bridge.port; 0 picks a free port. */
  port?: number;
  /**
   * What /readyz probes besides the bridge's own state: the in-process store's checks (database,
   * blobs; run.ts passes them). Unset with a store at a URL: one cheap request to that store.
   */
  readinessChecks?: readonly ReadinessCheck[];
  /** metrics.enabled: requests, locks, sessions and cache counts go there (common/metrics.ts). */
  metrics?: Metrics;
  /**
   * Where chunked uploads keep their parts' bytes; default a folder `<dataDir>/uploads` (beside
   * the local blob backend's `blobs/`, or the bridge's own data when the store is foreign).
   */
  parts?: PartStore;
  /** Where the web app is (run.ts: `store.publicUrl`, or the store of this process): the index page links to it. */
  webApp?: WebAppLocation;
}

export interface RunningBridge {
  url: string;
  services: BridgeServices;
  client: StoreClient;
  readiness: Readiness;
  /**
   * Drains and closes: /readyz and every new request answer 503 at once (new requests with
   * Connection: close), no connection is accepted, requests under way may finish for `graceMs`
   * (default 0: cut at once; run.ts passes http.shutdownGraceSec), then the rest are cut and
   * the bridge's state is released.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * The health paths (docs/bridge-design.md "Health"): only a GET or HEAD of exactly /healthz or
 * /readyz without credentials. The drive's root is made up (namespace.ts) and holds no file of
 * that name, and a request with credentials is DAV as always.
 */
function healthPathOf(req: IncomingMessage): '/healthz' | '/readyz' | undefined {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || req.headers.authorization !== undefined) return undefined;
  return req.url === '/healthz' || req.url === '/readyz' ? req.url : undefined;
}

function sendHealth(req: IncomingMessage, res: ServerResponse, answer: HealthAnswer): void {
  res.writeHead(answer.statusCode, { ...answer.headers, 'Content-Length': String(Buffer.byteLength(answer.body)) });
  res.end(req.method === 'HEAD' ? undefined : answer.body);
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

/**
 * The line of a refused login (common/login-log.ts): once per refusal, never with a stack (a
 * flood of guesses must not flood the log). A store that could not be reached is a warn line.
 * Nothing for a refusal not worth a line (a repeat from the negative cache).
 */
function logRefusedLogin(log: Logger, failure: AuthenticationFailed, username: string, ip: string | undefined): void {
  if (failure.logAs) logFailedLogin(log, 'dav', username, ip ?? '', failure.logAs);
  else if (failure.reason === 'unavailable') {
    log.warn({ user: username, ip, cause: failure.cause instanceof Error ? failure.cause.message : undefined }, failure.message);
  }
}

/**
 * webdav-server authentication hook: Basic credentials -> store session (sessions.ts), or a
 * store session token as `Bearer` (token-sessions.ts: the web app's).
 */
class StoreAuthentication implements webdav.HTTPAuthentication {
  private readonly anonymous: webdav.IUser = { uid: 'anonymous', username: 'anonymous', isDefaultUser: true };

  constructor(
    private readonly sessions: SessionPool,
    private readonly tokens: TokenSessions,
    private readonly log: Logger,
  ) {}

  /** No challenge on every response; 401s carry WWW-Authenticate themselves. */
  askForAuthentication(): Record<string, string> {
    return {};
  }

  getUser(ctx: webdav.HTTPRequestContext, callback: (error: Error, user?: webdav.IUser) => void): void {
    void this.authenticate(ctx.request).then((outcome) => {
      callback(null as unknown as Error, outcome.user ? { uid: outcome.user.userId, username: outcome.user.name } : this.anonymous);
    });
  }

  /**
   * The caller of a request, remembered for the access log and the verb (authOutcomes). Never
   * rejects: a refusal is the outcome's `failure`, logged here once.
   */
  authenticate(req: IncomingMessage): Promise<AuthOutcome> {
    const done = (outcome: AuthOutcome): AuthOutcome => {
      authOutcomes.set(req, outcome);
      return outcome;
    };
    const ip = clientAddress(req.socket.remoteAddress);
    const token = parseBearer(req.headers.authorization);
    if (token !== undefined) {
      return this.tokens.authenticate(token).then(
        (user) => done({ user }),
        (failure: unknown) => {
          if (failure instanceof AuthenticationFailed) logRefusedLogin(this.log, failure, '', ip);
          return done({ failure });
        },
      );
    }
    const credentials = parseBasic(req.headers.authorization);
    if (!credentials) return Promise.resolve(done(req.headers.authorization ? { failure: new AuthenticationFailed('bad-credentials') } : {}));
    const client = { ip, userAgent: req.headers['user-agent'] };
    return this.sessions.authenticate(credentials, client).then(
      (user) => done({ user }),
      (failure: unknown) => {
        // Logged here; the verb then answers it without logging it again.
        if (failure instanceof AuthenticationFailed) logRefusedLogin(this.log, failure, credentials.username, ip);
        return done({ failure });
      },
    );
  }
}

export async function createBridgeServices(
  options: BridgeOptions,
  client: StoreClient,
): Promise<{ services: BridgeServices; sessions: SessionPool; tokens: TokenSessions; feed?: ChangeFeed; closeState: () => Promise<void>; stateCheck?: ReadinessCheck }> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const cache = new MetadataCache({
    ttlMs: config.bridge.cacheTtlMs,
    maxEntries: config.bridge.cacheMaxEntries,
    maxBytes: config.bridge.cacheMaxBytes,
    onStale: forgetBodiesOf,
    keyOf: (userId, id) => folderKeyOf({ userId }, id as NodeId),
  });
  const { state } = options;
  const locks = new LockStore({
    clock,
    maxTimeoutSec: config.bridge.lockMaxTimeoutSec,
    ...(state.locks ? { repository: state.locks } : {}),
  });
  const uploads = new UploadService({
    repository: state.uploads,
    parts: options.parts ?? ('parts' in options.store ? options.store.parts : undefined) ?? new LocalPartStore(path.join(config.dataDir, 'uploads')),
    clock,
    log: options.logger,
    expirySec: config.bridge.uploadExpirySec,
    maxOpenPerUser: config.bridge.uploadMaxOpenPerUser,
    maxParts: config.bridge.uploadMaxParts,
  });
  const limits = { clock, maxFailures: config.bridge.loginMaxFailures, windowSec: config.bridge.loginWindowSec };
  const limiter = ('limiter' in options.store ? options.store.limiter?.(limits) : undefined) ?? new MemoryLoginLimiter(limits);
  const feed = 'changes' in options.store ? options.store.changes : undefined;
  // A session no store call confirmed for the listing cache's TTL (a second at least) is confirmed
  // before a request (sessions.ts): a revoked app password is refused as soon as a cached answer would be stale.
  const sessions = new SessionPool(client, { clock, limiter, confirmEveryMs: Math.max(SESSION_CONFIRM_MS, config.bridge.cacheTtlMs), ...(feed ? { settled: () => feed.settled() } : {}) });
  const tree = new StoreTree({ client: sessions.confirming(client), cache, log: options.logger, privilegesTtlMs: config.bridge.cacheTtlMs, followsAppleDouble: config.bridge.hideMacSideFiles });
  const unsubscribe = feed?.subscribe((change) => applyStoreChange(change, cache, tree, state.properties));
  const scheme = bridgeTlsFiles(config) ? 'https' : 'http';
  const services: BridgeServices = {
    tree,
    cache,
    locks,
    props: state.properties,
    renamedAway: state.renamedAway,
    fileIds: new FileIds(state.fileIds, client),
    previews: new Previews(client, options.logger),
    clock,
    log: options.logger,
    quotaForNewMacOS: config.bridge.quotaForNewMacOS,
    hideMacSideFiles: config.bridge.hideMacSideFiles,
    // Behind a TLS proxy the scheme comes from it (trusted proxies only), else the client would be
    // sent to plain http with its credentials; a malformed Host (`x@elsewhere`) names no origin.
    absoluteBase: (req) => config.bridge.publicUrl?.replace(/\/+$/, '') ?? requestOrigin(config.store.trustedProxies, req) ?? `${scheme}://127.0.0.1:${config.bridge.port}`,
    uploads,
    // Beside the parts of chunked uploads, in the private data folder (never the system /tmp).
    bulk: { stagingDir: path.join(config.dataDir, 'bulk'), gate: new BulkGate() },
    ...(options.webApp ? { webApp: options.webApp } : {}),
    ...(feed ? { changesSettled: () => feed.settled() } : {}),
  };
  const closeState = async (): Promise<void> => {
    unsubscribe?.();
    uploads.close();
    await state.close();
  };
  const probe = state.probe?.bind(state);
  return { services, sessions, tokens: new TokenSessions(client, { clock }), ...(feed ? { feed } : {}), closeState, ...(probe ? { stateCheck: { name: 'state', probe: () => probe() } } : {}) };
}

/**
 * A change another instance (or this store's REST API) committed: the listings it outdated go,
 * and with them the PROPFIND answers made of them (the cache's onStale). Folders changed by this
 * process's own connections are skipped: when the write came through this bridge, it already
 * forgot or patched them (re-listing a folder after each of its own uploads would make filling
 * it quadratic); a write through this instance's REST API shows here after the TTL, as it always
 * did. "Everything" also comes after the feed reconnected, since notifications may have been lost.
 */
export function applyStoreChange(change: StoreChange, cache: MetadataCache, tree: StoreTree, props: PropertyRepository): void {
  if (change.everything) {
    cache.forgetAll();
    tree.forgetPrivileges();
    props.noteOutsideChange();
    return;
  }
  if (change.properties && !change.local) props.noteOutsideChange();
  // A folder another writer changed is listed again; one this bridge changed (`local`) was
  // patched already. Tree versions above a changed folder are outdated whoever changed it. The
  // store names those folders itself (`trees`): this bridge may never have listed the levels between.
  for (const folder of change.folders) {
    if (change.local) cache.forgetTreeAbove(folder);
    else cache.forget(folder);
  }
  for (const folder of change.trees ?? []) cache.forgetTree(folder);
}

export async function startBridge(options: BridgeOptions): Promise<RunningBridge> {
  const { config } = options;
  const log = options.logger.child({ part: 'bridge' });
  // Before anything is opened: a wrong certificate path is found at once.
  const tls = bridgeTlsFiles(config);
  // The HTTP client (and undici) is loaded only to serve a store at a URL: in-process, the
  // bridge never needs it.
  let client: StoreClient;
  let storeChecks: readonly ReadinessCheck[] = options.readinessChecks ?? [];
  if ('client' in options.store) client = options.store.client;
  else {
    const http = (await import('../store-client/index.js')).createStoreClient(options.store.url, { timeoutMs: config.bridge.storeTimeoutMs, logger: log });
    client = http;
    storeChecks = options.readinessChecks ?? [
      {
        name: 'store',
        // Any answer below 500 means the store is there (a foreign server may have no /readyz).
        probe: async (signal) => {
          const answer = await http.http.requestRaw({ method: 'GET', path: '/readyz', signal }, 'health.readyz');
          if (answer.status >= 500) throw new Error(`the store answered ${answer.status}`);
        },
      },
    ];
  }
  const storeName = 'client' in options.store ? options.store.name : options.store.url;
  const { services, sessions, tokens, feed, closeState, stateCheck } = await createBridgeServices({ ...options, logger: log }, client);
  const cors = new CorsPolicy(config.bridge.corsOrigins, options.webApp);
  const readiness = new Readiness([...storeChecks, ...(stateCheck ? [stateCheck] : [])], { log });

  const authentication = new StoreAuthentication(sessions, tokens, log);
  const dav = new webdav.WebDAVServer({
    httpAuthentication: authentication,
    requireAuthentification: false,
    respondWithPaths: true,
    enableLocationTag: false,
  });
  for (const [method, handler] of Object.entries(driveHandlers)) dav.method(method, wrapVerb(handler, services, log, cors));
  // The library keeps its own handlers for other methods (POST writes into its in-memory
  // file system, even for anonymous callers): every method we do not serve answers 405.
  const notAllowed = wrapVerb(methodNotAllowed, services, log, cors);
  for (const method of Object.keys((dav as unknown as { methods: Record<string, unknown> }).methods)) {
    if (!(method.toUpperCase() in driveHandlers)) dav.method(method, notAllowed);
  }
  dav.onUnknownMethod(notAllowed);

  const authenticateRequest = async (req: IncomingMessage): Promise<BridgeUser | undefined> => {
    const outcome = await authentication.authenticate(req);
    if (outcome.failure !== undefined) throw outcome.failure;
    return outcome.user;
  };
  const addressOf = (req: IncomingMessage): string => clientIp(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], config.store.trustedProxies);
  // Push (nextcloud/push.ts) needs the store's change feed: without one (a foreign store) it is neither served nor advertised.
  const push = feed
    ? new PushDoor({
        client,
        feed,
        tokens: options.state.pushTokens,
        fileIds: options.state.fileIds,
        clock: services.clock,
        log,
        limits: {
          maxSocketsPerUser: config.bridge.pushMaxSocketsPerUser,
          maxSocketsPerAddress: config.bridge.pushMaxSocketsPerAddress,
          pingMs: config.bridge.pushPingSec * 1000,
          maxDebounceSec: config.bridge.pushMaxDebounceSec,
          sessionCheckMs: config.bridge.pushSessionCheckSec * 1000,
        },
        // As a DAV request's Basic credentials: the same pool and limiter, a refusal logged once.
        login: (credentials, ip, userAgent) =>
          sessions.authenticate(credentials, { ip, userAgent }).catch((failure: unknown) => {
            if (failure instanceof AuthenticationFailed) logRefusedLogin(log, failure, credentials.username, ip);
            throw failure;
          }),
        authenticate: authenticateRequest,
        addressOf,
      })
    : undefined;
  const nextcloudDoor: NextcloudDoorOptions = {
    client,
    log,
    absoluteBase: (req) => services.absoluteBase(req),
    bulkUploadClients: config.bridge.bulkUploadClients,
    ...(push ? { push: (req: IncomingMessage) => push.capability(services.absoluteBase(req)) } : {}),
    tree: services.tree,
    fileIds: services.fileIds,
    webAppPage: (req, page) => webAppPageUrl(options.webApp, req.headers.host, page),
    authenticate: authenticateRequest,
  };
  // Every request gets its line (common/access-log.ts): refused, health and DAV alike.
  const accessLog = new AccessLog<IncomingMessage>({ log, enabled: config.log.accessLog, userOf: (req) => authOutcomes.get(req)?.user?.name, metrics: options.metrics, part: 'bridge' });
  if (options.metrics) {
    const { locks, cache } = services;
    options.metrics.gauge('driveway_dav_locks_active', 'WebDAV locks held and not expired', () => locks.count());
    options.metrics.gauge('driveway_bridge_sessions', "Store sessions the bridge holds for Basic credentials (this process's pool)", () => sessions.size);
    options.metrics.counter('driveway_bridge_cache_hits_total', 'Folder listings answered from the metadata cache', () => cache.hits);
    options.metrics.counter('driveway_bridge_cache_misses_total', 'Folder listings fetched from the store', () => cache.misses);
  }
  const loginFlows = new LoginFlows({ repository: options.state.loginFlows, client, clock: services.clock, log, serverUrl: services.absoluteBase, webAppPage: (req, page) => webAppPageUrl(options.webApp, req.headers.host, page) });
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const health = healthPathOf(req);
    accessLog.watch(req, res, req, health !== undefined);
    if (health === '/healthz') {
      sendHealth(req, res, livenessAnswer());
      return;
    }
    if (health === '/readyz') {
      readiness.report().then(
        (report) => sendHealth(req, res, readinessAnswer(report)),
        () => sendHealth(req, res, readinessAnswer({ ready: false, draining: readiness.draining, checks: {}, degraded: [] })),
      );
      return;
    }
    // The web app's browser asking whether it may send a request: answered here, never as DAV.
    if (cors.isPreflight(req)) {
      cors.answerPreflight(req, res);
      return;
    }
    cors.decorate(req, res);
    if (readiness.draining) {
      // Stopping: a request arriving on a kept-alive connection is refused before any work.
      res.writeHead(503, { 'Retry-After': String(RETRY_AFTER_SEC), Connection: 'close', 'Content-Length': '0' }).end();
      req.resume();
      return;
    }
    // status.php and the OCS API (nextcloud/): not DAV, answered beside it.
    const nextcloud = nextcloudRouteOf(req);
    if (nextcloud) {
      answerNextcloud(req, res, nextcloud, nextcloudDoor).catch((err: unknown) => {
        log.error({ err, url: redactUrl(req.url ?? '') }, 'OCS answer failed');
        if (!res.headersSent) res.writeHead(500, { 'Content-Length': '0' });
        res.end();
      });
      return;
    }
    // notify_push's pre-auth token (nextcloud/push.ts): never DAV.
    if (push?.servesRequest(req)) {
      push.preAuth(req, res).catch((err: unknown) => {
        log.error({ err }, 'push pre-auth failed');
        if (!res.headersSent) res.writeHead(500, { 'Content-Length': '0' });
        res.end();
      });
      return;
    }
    // The apps' previews (nextcloud/preview.ts): authenticated as DAV is, never DAV.
    const preview = previewRouteOf(req);
    if (preview) {
      void answerPreview(req, res, preview, { services, authenticate: nextcloudDoor.authenticate, log });
      return;
    }
    // The Nextcloud clients' login flows (nextcloud/login-flow.ts): unauthenticated, never DAV.
    if (loginFlows.serves(req)) {
      // Counted and shown per client: behind a trusted proxy, the address it forwards (else one
      // proxy's address would hold every client's flows, and ten of them would lock all out).
      void loginFlows.serve(req, res, addressOf(req));
      return;
    }
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
  // store.trustedProxies: a proxy in front of both listeners speaks for many clients on either.
  applyHttpLimits(server, config.http, { log, uncappedAddresses: config.store.trustedProxies });
  // Websockets: push's alone (nextcloud/push.ts); any other upgrade is refused.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (push?.servesUpgrade(req) && !readiness.draining) push.upgrade(req, socket, head);
    else socket.end(`HTTP/1.1 ${readiness.draining ? '503 Service Unavailable' : '404 Not Found'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });
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

  let closing: Promise<void> | undefined;
  return {
    url,
    services,
    client,
    readiness,
    close(graceMs = 0) {
      closing ??= (async () => {
        readiness.startDraining();
        // Sockets never end by themselves: closed at once, the clients reconnect elsewhere.
        push?.close();
        await drainWhile(server, graceMs, () => new Promise<void>((resolve) => server.close(() => resolve())));
        sessions.clear();
        tokens.clear();
        await closeState();
        services.cache.close();
        await client.close();
      })();
      return closing;
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

/** Under /remote.php/dav/ but no space of the caller's (remote-dav.ts): nothing said about why. */
const notFound: VerbHandler = async (ctx) => {
  ctx.req.resume();
  ctx.res.writeHead(404, { 'Content-Length': '0' });
  ctx.res.end();
};

/** Adapts one of our async handlers to webdav-server's callback method interface. */
function wrapVerb(handler: VerbHandler, services: BridgeServices, log: Logger, cors: CorsPolicy): webdav.HTTPMethod {
  return {
    chunked(wctx: webdav.HTTPRequestContext, _input, done: () => void) {
      const { request: req, response: res } = wctx;
      // The library adds permissive CORS headers to every answer; a file server must not: ours
      // (cors.ts) name the web app's origin alone, without credentials mode.
      for (const name of ['Access-Control-Allow-Origin', 'Access-Control-Allow-Credentials', 'Access-Control-Expose-Headers']) res.removeHeader(name);
      cors.decorate(req, res);
      res.setHeader('DAV', '1, 2');
      res.removeHeader('Server');
      const abort = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) abort.abort();
      });
      const outcome = authOutcomes.get(req) ?? {};
      const requested = decodedPaths.get(req) ?? decodeRequestPath(req.url ?? '/');
      const method = (req.method ?? 'GET').toUpperCase();
      // /remote.php/dav/<space>/<user>/...: the space's handler, on the path below it.
      const remote = routeRemoteDav(requested, outcome.user?.name, REMOTE_SPACE_NAMES);
      const route = remote.kind === 'space' ? remote.route : undefined;
      const target = route ? route.rest : requested;
      let verb = handler;
      if (remote.kind === 'not-found') verb = notFound;
      else if (remote.kind === 'dav-root') verb = DAV_ROOT_HANDLERS[method] ?? notFound;
      else if (route) verb = REMOTE_SPACES[route.space]?.[method] ?? methodNotAllowed;
      // Made on first use: a pino child (with its redaction set-up) cost ~15 µs a request, and
      // most requests log nothing at the default level.
      let requestLog: Logger | undefined;
      const logOf = (): Logger => (requestLog ??= log.child({ method, url: redactUrl(req.url ?? ''), user: outcome.user?.name }));
      // One view per request: clients other than Finder never meet its side files (common/side-files.ts).
      const hidingUser = outcome.user && services.hideMacSideFiles && !isFinderAgent(req.headers['user-agent']) ? withoutMacSideFiles(outcome.user) : outcome.user;
      // Finder and Explorer see `/versions/` in the root; sync tools do not (versions-view.ts).
      const listingUser = hidingUser && listsVersionsTo(req.headers['user-agent']) ? withVersionsListed(hidingUser) : hidingUser;
      // Through /remote.php/dav/files/<user>/, /remote.php/webdav/ and a bulk upload's paths: the client's view (tree/client-view.ts).
      const requestUser = listingUser && (route?.space === 'files' || route?.space === 'bulk') ? withClientView(listingUser) : listingUser;
      const ctx: DavContext = {
        req,
        res,
        method,
        target,
        path: target.path as DavPath,
        hrefBase: route?.hrefBase ?? (remote.kind === 'dav-root' ? remote.hrefBase : ''),
        ...(route ? { route } : {}),
        nfd: wantsNfd(req.headers['user-agent']),
        hosts: [req.headers.host ?? ''].filter(Boolean),
        services,
        get log() {
          return logOf();
        },
        signal: abort.signal,
        maybeUser: requestUser,
        user() {
          if (requestUser) return requestUser;
          throw outcome.failure ?? new AuthenticationFailed('bad-credentials');
        },
      };
      // Several instances: first let every change committed elsewhere reach the caches.
      (services.changesSettled ? services.changesSettled().then(() => verb(ctx)) : verb(ctx))
        .catch((err: unknown) => {
          const failure = davFailureOf(err);
          if (err instanceof AuthenticationFailed) {
            // Refused before the verb: logged by StoreAuthentication. Refused mid-request (the
            // store answered 401 and logging in again failed: password changed or revoked,
            // account deactivated): logged here, as any refused login is.
            if (err !== outcome.failure) logRefusedLogin(log, err, outcome.user?.name ?? '', clientAddress(req.socket.remoteAddress));
          } else if (failure.transient || failure.clientCaused) {
            // The store or its database out of reach for now (what the store logs for it too), or
            // a 507/502 the client caused: no stack.
            logOf().warn({ status: failure.status, cause: err instanceof Error ? err.message : String(err) }, failure.reason);
          } else if (failure.status >= 500) logOf().error({ err, status: failure.status }, failure.reason);
          else if (log.isLevelEnabled('debug')) logOf().debug({ status: failure.status }, failure.reason);
          writeFailure(ctx, failure, err);
        })
        .finally(() => {
          if (!req.complete) req.resume();
          if (!res.writableEnded) res.end();
          done();
        });
    },
  };
}
