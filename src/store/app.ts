/**
 * Builds the store's fastify instance: opens the database and blob folder, bootstraps the
 * built-in admin, registers every route group and the one error handler that writes the
 * envelope (docs/api.md "Envelope"). Never listens (server.ts does; tests use inject or their own listen).
 */
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from '../common/config.js';
import { systemClock, type Clock } from '../common/clock.js';
import { AccessLog } from '../common/access-log.js';
import type { Metrics } from '../common/metrics.js';
import { createLogger, redactUrl, type Logger } from '../common/logger.js';
import { ensureDataDir, PRIVATE_FILE_MODE } from '../common/private-files.js';
import { reasonOf, StartupError } from '../common/startup-error.js';
import { createListenerServer, readTlsFiles, type TlsFiles } from '../common/tls.js';
import { createBlobBackend, gcIntervalMs } from './blobs/create-blob-backend.js';
import type { BlobBackend } from './blobs/blob-backend.js';
import { USER_CONTENT_CSP } from '../common/content-security.js';
import type { StoreContext } from './context.js';
import { openDatabase, type Db } from './storage/dialects/sqlite-open.js';
import { SqliteStorage } from './storage/dialects/sqlite.js';
import { migrate, SchemaTooNewError } from './storage/migrations.js';
import { loginLimiterFor } from './storage/limits.js';
import { ping, type Storage } from './storage/sql.js';
import { redactDatabaseUrl } from './storage/database-url.js';
import { hasBuiltinAdmin, insertBuiltinAdmin } from './storage/users.js';
import { storageBlobLedger } from './storage/revisions.js';
import { createTopLevelFolders } from './storage/nodes.js';
import { collectBlobGarbage } from './ops/blob-files.js';
import { applyRetention } from './ops/retention.js';
import { backfillChecksums, blobsWithoutChecksums } from './ops/checksum-backfill.js';
import { Md5AfterCommit } from './ops/md5-later.js';
import { errorEnvelope, StoreHttpError, unauthenticated, unavailable, unavailableOf, type ErrorCode } from './envelope.js';
import { livenessAnswer, Readiness, readinessAnswer, type HealthAnswer } from '../common/readiness.js';
import { refuseExpiredPassword } from './ops/password-age.js';
import { generatePassword, hashPassword } from './passwords.js';
import { createMailer } from './ops/mail.js';
import { Durability } from './durability.js';
import { authenticateToken, openSessionKeys, rotateSessionKeys } from './sessions.js';
import { admitCaller, requirePolicy } from './policy.js';
import { authRoutes } from './routes/auth.js';
import { webSessionRoutes } from './routes/web-session.js';
import { clearSessionCookie, refuseCrossSite, sessionCookieOf } from './web-session.js';
import { nodeRoutes } from './routes/nodes.js';
import { uploadRoutes } from './routes/upload.js';
import { resourceRoutes } from './routes/resources.js';
import { thumbnailRoutes } from './routes/thumbnails.js';
import { userRoutes } from './routes/user.js';
import { adminUserRoutes } from './routes/admin-users.js';
import { adminGroupRoutes } from './routes/admin-groups.js';
import { organizationRoutes } from './routes/organizations.js';
import { aboutRoutes } from './routes/about.js';
import { groupRoutes } from './routes/groups.js';
import { webdriveRoutes } from './routes/webdrive.js';
import { avatarRoutes } from './routes/avatars.js';
import { userDirectoryRoutes } from './routes/users.js';
import { twofaRoutes } from './routes/twofa.js';
import { appPasswordRoutes } from './routes/app-passwords.js';
import { publicRoutes } from './routes/public.js';
import { shareRoutes } from './routes/shares.js';
import { approvalRoutes } from './routes/approvals.js';
import { notificationInboxRoutes } from './routes/notification-inbox.js';
import { sweepExpiringLinks } from './ops/notification-inbox.js';
import { incomingRoutes } from './routes/incoming.js';
import { registerWebApp } from './web-app.js';
import { compactTreeChanges } from './storage/tree-changes.js';

export interface StoreAppOptions {
  config: Config;
  clock?: Clock;
  logger?: Logger;
  /**
   * Refuse at once a query on the storage layer's root handle made inside a transaction (the
   * SQLite dialect's checkRootUse). Tests turn it on; it costs a small upload about a tenth of
   * its CPU, so a running store leaves it off (such a query then fails after a wait instead).
   */
  checkStorageUse?: boolean;
  /** metrics.enabled: every request is counted there (common/metrics.ts). */
  metrics?: Metrics;
}

export interface StoreApp {
  app: FastifyInstance;
  ctx: StoreContext;
  /** What /readyz answers from: the database and the blob backend, and whether the store drains. */
  readiness: Readiness;
  /**
   * Keeps the database and blob backend open on close() until `work` settled: the in-process
   * bridge's requests under way when the instance stops still reach them (run.ts).
   */
  holdClose(work: Promise<unknown>): void;
  /** Every route registered, as `METHOD /url` (what the access table must name: policy.ts). */
  routes: readonly string[];
}

const FASTIFY_CODES: Record<number, ErrorCode> = { 401: 'unauthenticated', 404: 'not_found', 413: 'invalid_request', 415: 'invalid_request' };

export async function buildStoreApp(options: StoreAppOptions): Promise<StoreApp> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const log = options.logger ?? createLogger(config.logLevel, undefined, config.log.format);
  // Read and checked before anything is opened: a wrong path is reported at once.
  const tls = storeTlsFiles(config);
  ensureDataDir(config.dataDir, log);

  const dbFile = path.join(config.dataDir, 'driveway.sqlite');
  const { storage, db } = await openStorage(config, dbFile, options.checkStorageUse ?? false, log);
  // PostgreSQL's COMMIT is durable by itself: without a SQLite connection mark and settle do nothing.
  const durability = new Durability(db, dbFile);
  // Blob bytes go only once the commit that released them is on disk (blob-backend.ts).
  const blobs = await createBlobBackend(config, storageBlobLedger(storage.sql, () => durability.durable()), () => clock.now(), log.child({ part: 'blobs' }));
  try {
    await blobs.init();
  } catch (err) {
    await storage.close();
    const where = (err as { path?: unknown }).path;
    throw typeof where === 'string'
      ? new StartupError(`cannot prepare the blob folder ${where}: ${reasonOf(err)}; check dataDir / DRIVEWAY_DATA_DIR and that the folder is writable by this user`, { cause: err })
      : err;
  }
  const swept = await blobs.sweepAtStart();
  if (swept > 0) log.warn({ swept, backend: blobs.kind }, 'removed blobs no row referred to (left by an interrupted write)');
  await sweepStaging(blobs, log);

  const keys = await openSessionKeys(storage.sql, clock, config.dataDir, config.store.jwtSecret);
  // Counted in the database over PostgreSQL (every instance together), in memory over SQLite.
  const limits = { clock, maxFailures: config.store.loginMaxFailures, windowSec: config.store.loginWindowSec };
  const loginLimiter = loginLimiterFor(storage, { ...limits, scope: 'login' });
  const linkLimiter = loginLimiterFor(storage, { ...limits, scope: 'link' });
  // Made once here, so that not even the first unknown username pays for its creation.
  const unknownUserHash = await hashPassword(generatePassword(), config.store.scryptCost);
  const mailer = createMailer(config.mail, log);
  // The checksum backfill's loop (below) sleeps a minute between rounds; a blob the background
  // MD5 leaves to it wakes it.
  const backfillWake = new BackfillWake();
  const md5Later = new Md5AfterCommit({
    sql: storage.sql,
    log,
    now: () => clock.now(),
    fromBytes: config.store.checksumMd5LaterBytes > 0 ? config.store.checksumMd5LaterBytes : Number.POSITIVE_INFINITY,
    max: config.store.checksumMd5LaterMax,
    wakeBackfill: () => backfillWake.wake(),
  });
  const ctx: StoreContext = { storage, db, blobs, config, clock, log, keys, loginLimiter, linkLimiter, unknownUserHash, mailer, durability, md5Later };
  await bootstrapAdmin(ctx);

  // Set once the web app is registered (below): a malformed address outside the API still gets its page.
  let sendAppPage: ((request: FastifyRequest, reply: FastifyReply) => boolean) | undefined;
  const app: FastifyInstance = Fastify({
    // A path whose %-escapes do not decode (or a parameter too long) is refused by the router
    // before any route: SPEC's envelope, or the web app's page for a browser (which then says
    // "not found"), instead of fastify's own JSON, which the browser showed raw.
    frameworkErrors: (error, request, frameworkReply) => {
      const reply = frameworkReply as FastifyReply;
      if (sendAppPage?.(request, reply)) return;
      void reply.code(error.statusCode === 414 ? 414 : 400).send(errorEnvelope('malformed address: its path does not decode as UTF-8 or a part of it is too long', 'invalid_request'));
    },
    loggerInstance: log.child({ part: 'store' }) as FastifyBaseLogger,
    // Our own access log (common/access-log.ts) has a line for every request, its URL redacted.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 16 * 1024 * 1024,
    genReqId: () => randomUUID(),
    trustProxy: false,
    // During a drain our own hook answers (SPEC envelope, Retry-After); fastify adds Connection: close.
    return503OnClosing: false,
    // HTTPS when store.tlsCert is set; the plain default keeps fastify's own http server.
    ...(tls ? { serverFactory: (handler: Parameters<typeof createListenerServer>[2]) => createListenerServer(tls, {}, handler) } : {}),
  });
  app.decorateRequest('caller', null);
  app.decorateRequest('viaCookie', false);
  const routes: string[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push(`${method} ${route.url}`);
  });
  app.decorateRequest('changesMark', 0);
  const readiness = new Readiness(
    [
      { name: 'database', probe: () => ping(storage.sql) },
      // Without S3, listings, moves, deletes and files small enough for their row still work, on
      // every instance alike (docs/scale-out.md "Instances come and go"); a local blob folder gone is a broken disk.
      { name: 'blobs', probe: (signal) => blobs.probe(signal), whenDown: blobs.kind === 's3' ? 'degraded' : 'down' },
    ],
    { log: log.child({ part: 'store' }) },
  );
  // Health answers before any other hook: no token, no database, no durability wait.
  const sendHealth = (reply: FastifyReply, answer: HealthAnswer) => reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
  app.get('/healthz', async (_request, reply) => sendHealth(reply, livenessAnswer()));
  app.get('/readyz', async (_request, reply) => sendHealth(reply, readinessAnswer(await readiness.report())));
  const isHealthRoute = (request: FastifyRequest) => request.routeOptions.url === '/healthz' || request.routeOptions.url === '/readyz';
  // First hook: every request gets its line (common/access-log.ts), refused ones included.
  const accessLog = new AccessLog<FastifyRequest>({
    log: app.log as Logger,
    enabled: config.log.accessLog,
    userOf: (request) => request.caller?.userUuid,
    idOf: (request) => request.id,
    metrics: options.metrics,
    part: 'store',
  });
  app.addHook('onRequest', (request, reply, done) => {
    accessLog.watch(request.raw, reply.raw, request, isHealthRoute(request));
    done();
  });
  // Stopping (server.ts close): a request arriving on a kept-alive connection is refused, not
  // started; fastify closes the connection after the answer. Those under way finish.
  app.addHook('onRequest', async (request) => {
    if (readiness.draining && !isHealthRoute(request)) throw unavailable('the store is shutting down; try again');
  });
  // Many HTTP clients send `Content-Type: application/json` on a DELETE or GET without a body;
  // fastify's own parser refuses that (FST_ERR_CTP_EMPTY_JSON_BODY). An empty body is no body.
  // Non-empty bodies still go through fastify's parser, which refuses __proto__ and constructor keys.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    const body = typeof text === 'string' ? text : text.toString('utf8');
    if (body.trim() === '') done(null, undefined);
    else parseJson(request, body, done);
  });

  // Answered means durable: a request that saw the database change waits for the shared fsync
  // of the WAL before its answer goes out (durability.ts). Errors included: a failed operation
  // may have committed a part it reports.
  app.addHook('onRequest', async (request, reply) => {
    if (isHealthRoute(request)) return;
    request.changesMark = durability.mark();
    // Every answer, errors included, is data and never a page of ours: no sniffing, a sandbox
    // (docs/content-security.md). File answers set the same headers again with their disposition.
    void reply.header('x-content-type-options', 'nosniff').header('content-security-policy', USER_CONTENT_CSP);
  });
  app.addHook('onSend', async (request, _reply, payload) => {
    if (isHealthRoute(request)) return payload;
    await durability.settle(request.changesMark);
    return payload;
  });

  // Who may call what is the table's (policy.ts); bearer routes are admitted here, the routes
  // with another credential (file access key, upload token, link) admit theirs themselves. The
  // web app's session cookie counts as the bearer token of its session (web-session.ts).
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (isHealthRoute(request)) return;
    // An unknown /api endpoint still wants a token first (401 before 404), as before the table.
    if (route === undefined && !request.url.startsWith('/api/')) return;
    const policy = route === undefined ? undefined : requirePolicy(request.method, route);
    if (policy && policy.credential !== 'bearer') return;
    // The web app's calls carry its session cookie instead, under the CSRF rule (web-session.ts).
    const cookie = sessionCookieOf(request);
    if (cookie !== undefined) refuseCrossSite(ctx, request);
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match && cookie === undefined) throw unauthenticated('missing bearer token');
    const caller = await authenticateToken(storage.sql, keys, clock, match ? (match[1] as string) : (cookie as string));
    if (!caller) {
      // A cookie of a session that ended is of no more use: the browser drops it.
      if (!match) clearSessionCookie(ctx, request, reply);
      throw unauthenticated('invalid, expired or revoked token');
    }
    request.caller = caller;
    request.viaCookie = !match;
    if (policy) admitCaller(ctx, caller, policy);
    else refuseExpiredPassword(ctx, caller);
  });

  app.setErrorHandler((error, request, reply) => {
    const down = unavailableOf(error);
    if (down) {
      // The cause (host, driver text) goes to the log; the client learns only what to do.
      request.log.warn({ url: redactUrl(request.url), cause: error instanceof Error ? error.message : String(error) }, down.message);
      void reply.code(down.statusCode).headers(down.headers).send(errorEnvelope(down.message, down.code));
      return;
    }
    if (error instanceof StoreHttpError) {
      void reply.code(error.statusCode).headers(error.headers).send(errorEnvelope(error.message, error.code));
      return;
    }
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 400 && status < 500) {
      void reply.code(status).send(errorEnvelope(redactUrl((error as Error).message), FASTIFY_CODES[status] ?? 'invalid_request'));
      return;
    }
    request.log.error({ err: error, url: redactUrl(request.url) }, 'unhandled store error');
    void reply.code(500).send(errorEnvelope('internal error', 'internal'));
  });

  // The web app: its assets, and its page for a browser's GET outside the API (web-app.ts).
  const webApp = registerWebApp(app, config, routes, log);
  sendAppPage = webApp.outsideApi;
  app.setNotFoundHandler((request, reply) => {
    if (sendAppPage?.(request, reply)) return;
    void reply.code(404).send(errorEnvelope(`no such endpoint: ${request.method} ${redactUrl(request.url.split('?')[0] ?? '')}`, 'not_implemented'));
  });

  await authRoutes(app, ctx);
  await webSessionRoutes(app, ctx);
  await nodeRoutes(app, ctx);
  await uploadRoutes(app, ctx);
  await resourceRoutes(app, ctx);
  await thumbnailRoutes(app, ctx);
  await userRoutes(app, ctx);
  await adminUserRoutes(app, ctx);
  await adminGroupRoutes(app, ctx);
  await organizationRoutes(app, ctx);
  await aboutRoutes(app, ctx);
  await groupRoutes(app, ctx);
  await webdriveRoutes(app, ctx);
  await avatarRoutes(app, ctx);
  await userDirectoryRoutes(app, ctx);
  await twofaRoutes(app, ctx);
  await appPasswordRoutes(app, ctx);
  await publicRoutes(app, ctx, webApp.page);
  await shareRoutes(app, ctx);
  await approvalRoutes(app, ctx);
  await incomingRoutes(app, ctx);
  await notificationInboxRoutes(app, ctx);

  // Rotation of the session key ring (sessions.ts): checked at start and every hour, by every
  // instance; one transaction, so instances rotating at once add one key.
  const rotateEveryMs = config.store.jwtRotateDays * 86_400_000;
  const rotate = async (): Promise<void> => {
    try {
      const { added, retired } = await rotateSessionKeys(storage.sql, clock, { everyMs: rotateEveryMs, ttlSec: config.store.sessionTtlSec });
      if (added || retired > 0) log.info({ added: added !== undefined, retired }, 'rotated the session signing keys');
    } catch (err) {
      log.warn({ err }, 'session key rotation failed; retried within the hour');
    }
  };
  let rotating: Promise<void> | undefined;
  let rotator: NodeJS.Timeout | undefined;
  if (rotateEveryMs > 0 && !config.store.jwtSecret) {
    await rotate();
    rotator = setInterval(() => {
      rotating ??= rotate().finally(() => (rotating = undefined));
    }, 3_600_000).unref();
  }

  // The blob collector runs while serving (blobs/blob-backend.ts says why that is safe).
  let collecting: Promise<void> | undefined;
  const interval = gcIntervalMs(config);
  const collector =
    interval > 0
      ? setInterval(() => {
          collecting ??= collectBlobGarbage(ctx).finally(() => (collecting = undefined));
        }, interval).unref()
      : undefined;

  // Staged parts: those of processes that ended, and this one's left untouched (blobs/staging.ts).
  let sweepingStaging: Promise<void> | undefined;
  const stagingMaxAgeMs = config.store.blobs.stagingMaxAgeSec * 1000;
  const stagingSweeper =
    stagingMaxAgeMs > 0
      ? setInterval(() => {
          sweepingStaging ??= sweepStaging(blobs, log, stagingMaxAgeMs).finally(() => (sweepingStaging = undefined));
        }, Math.min(stagingMaxAgeMs, 3_600_000)).unref()
      : undefined;

  // Retention (ops/retention.ts) every store.retention.intervalSec, beside the collector; it
  // runs even when the global settings keep everything, since an organization may set its own.
  const retention = config.store.retention;
  const stopPruning = new AbortController();
  let pruning: Promise<void> | undefined;
  const prune = async (): Promise<void> => {
    try {
      const report = await applyRetention(
        { sql: storage.sql, blobs, log, settings: retention },
        { now: clock.now(), signal: stopPruning.signal },
      );
      const { revisions, trashItems, bytesFreed, ownersChecked } = report;
      if (revisions > 0 || trashItems > 0) log.info({ revisions, trashItems, bytesFreed, ownersChecked }, 'retention pruned old revisions and trash');
      else log.debug({ ownersChecked }, 'retention found nothing to prune');
    } catch (err) {
      log.warn({ err }, 'retention run failed; the next run tries again');
    }
  };
  const pruner =
    retention.intervalSec > 0
      ? setInterval(() => {
          pruning ??= prune().finally(() => (pruning = undefined));
        }, retention.intervalSec * 1000).unref()
      : undefined;

  // Tree versions' compaction (storage/tree-changes.ts): each minute, the folders with many
  // rows get theirs merged into one; what a folder's version and size read stays short.
  let compacting: Promise<void> | undefined;
  const compactor = setInterval(() => {
    compacting ??= compactTreeChanges(storage.sql)
      .then((merged) => void (merged > 0 && log.debug({ merged }, 'tree versions compacted')))
      .catch((err: unknown) => log.warn({ err }, 'tree version compaction failed; the next run tries again'))
      .finally(() => (compacting = undefined));
  }, 60_000).unref();

  // Links about to expire (ops/notification-inbox.ts): every five minutes, their creators hear of
  // each one once, a day ahead.
  let sweepingLinks: Promise<void> | undefined;
  const linkSweeper = setInterval(() => {
    sweepingLinks ??= sweepExpiringLinks(ctx)
      .then((links) => void (links > 0 && log.debug({ links }, 'links about to expire announced')))
      .catch((err: unknown) => log.warn({ err }, 'the sweep of links about to expire failed; the next run tries again'))
      .finally(() => (sweepingLinks = undefined));
  }, 300_000).unref();

  // The checksum backfill (ops/checksum-backfill.ts): in the background at its bounded rate
  // until every blob has SHA-1 and MD5, then a look each minute for claims a crashed instance left.
  const stopBackfill = new AbortController();
  const backfilling = runChecksumBackfill(ctx, config.store.checksumBackfillPerSec, stopBackfill.signal, backfillWake);

  const holds: Promise<unknown>[] = [];
  app.addHook('onClose', async () => {
    stopBackfill.abort();
    await backfilling;
    await Promise.allSettled(holds);
    await md5Later.close();
    clearInterval(collector);
    clearInterval(stagingSweeper);
    clearInterval(rotator);
    clearInterval(pruner);
    clearInterval(compactor);
    await compacting;
    clearInterval(linkSweeper);
    await sweepingLinks;
    stopPruning.abort();
    await pruning;
    await collecting;
    await sweepingStaging;
    await rotating;
    mailer?.close();
    await blobs.close();
    await durability.close();
    await storage.close();
  });
  return { app, ctx, routes, readiness, holdClose: (work) => void holds.push(work) };
}

/** Ends the backfill loop's wait between rounds early (a blob the background MD5 left to it). */
class BackfillWake {
  private waiting: (() => void) | undefined;
  private woken = false;
  wake(): void {
    if (this.waiting) this.waiting();
    else this.woken = true;
  }
  /** Resolves after `ms`, at a wake, or at once when woken since the last wait began. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiting = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      signal.addEventListener('abort', done, { once: true });
      if (this.woken) done();
      else this.waiting = done;
      this.woken = false;
    });
  }
}

/** The backfill loop of createStoreApp; never rejects (a failed round is logged and retried). */
async function runChecksumBackfill(ctx: StoreContext, perSec: number, signal: AbortSignal, wake: BackfillWake): Promise<void> {
  if (!(perSec > 0)) return;
  const { storage, blobs, log, clock } = ctx;
  while (!signal.aborted) {
    try {
      const report = await backfillChecksums({ sql: storage.sql, blobs, log, perSec, now: () => clock.now(), signal });
      if (report.hashed.length > 0) log.info({ hashed: report.hashed.length, failed: report.failed, left: await blobsWithoutChecksums(storage.sql) }, 'checksum backfill round ended');
    } catch (err) {
      if (signal.aborted) break;
      log.warn({ err }, 'checksum backfill failed; retried in a minute');
    }
    // A stop that came while the round ran has already fired its event: look before waiting.
    if (signal.aborted) break;
    await wake.wait(60_000, signal);
  }
}

/**
 * One staging sweep (BlobBackend.sweepStaging): at start the parts of processes that ended, later
 * also this process's own older than `ownOlderThanMs`. Never throws: the next sweep tries again.
 */
async function sweepStaging(blobs: BlobBackend, log: Logger, ownOlderThanMs?: number): Promise<void> {
  try {
    const { parts, bytes } = await blobs.sweepStaging(ownOlderThanMs);
    if (parts > 0) log.warn({ parts, bytes, backend: blobs.kind }, 'removed staged upload parts no live upload was writing (left by a process that ended, or untouched past store.blobs.stagingMaxAgeSec)');
  } catch (err) {
    log.warn({ err }, 'could not sweep the staging folder; the next sweep tries again');
  }
}

/**
 * The database of `database.url`: PostgreSQL for a postgres:// URL (migrated here, a newer schema
 * refused), else the SQLite file in the data dir (openDatabase migrates it).
 */
async function openStorage(config: Config, dbFile: string, checkRootUse: boolean, log: Logger): Promise<{ storage: Storage; db: Db | undefined }> {
  const url = config.database.url;
  if (url === undefined) {
    let db: Db;
    try {
      db = openDatabase(dbFile);
    } catch (err) {
      if (err instanceof SchemaTooNewError) throw new StartupError(err.message, { cause: err });
      if (err instanceof StartupError) throw err;
      throw new StartupError(`cannot open the database ${dbFile}: ${reasonOf(err)}; check dataDir / DRIVEWAY_DATA_DIR (or database.url / DRIVEWAY_DATABASE_URL) and that the folder is writable by this user`, { cause: err });
    }
    return { storage: new SqliteStorage(db, { checkRootUse }), db };
  }
  // Loaded only when named: the embedded default never pays for pg.
  const { PostgresStorage } = await import('./storage/dialects/postgres.js');
  const { connectTimeoutMs, queryTimeoutMs } = config.database;
  const where = `the database ${redactDatabaseUrl(url)}`;
  // Migrations on a connection of their own without the statement bound: on a large database
  // one may take minutes, which requests may not.
  const migrating = new PostgresStorage(url, { maxConnections: 1, connectTimeoutMs, queryTimeoutMs: 0 });
  try {
    const applied = await migrate(migrating, where);
    if (applied.length > 0) log.info({ database: redactDatabaseUrl(url), applied }, 'applied database migrations');
  } finally {
    await migrating.close();
  }
  return { storage: new PostgresStorage(url, { maxConnections: config.database.maxConnections, connectTimeoutMs, queryTimeoutMs, log: log.child({ part: 'store' }) }), db: undefined };
}

/** The store's certificate and key when it serves HTTPS. */
function storeTlsFiles(config: Config): TlsFiles | undefined {
  const { tlsCert, tlsKey } = config.store;
  if (!tlsCert || !tlsKey) return undefined;
  return readTlsFiles({ certPath: tlsCert, keyPath: tlsKey, certSetting: 'store.tlsCert / DRIVEWAY_STORE_TLS_CERT', keySetting: 'store.tlsKey / DRIVEWAY_STORE_TLS_KEY' });
}

/**
 * Creates the built-in `admin` on first start. Its password is DRIVEWAY_ADMIN_PASSWORD, or a
 * generated one written to `<data dir>/initial-admin-password` (mode 0600); only the file's
 * location is logged, never the value. Of several instances starting at once on a fresh
 * database, the one whose transaction made the admin writes the file (after its commit: a file
 * naming a password that never became the admin's would mislead); the others write none.
 */
async function bootstrapAdmin(ctx: StoreContext): Promise<void> {
  const { storage, config, clock, log } = ctx;
  if (await hasBuiltinAdmin(storage.sql)) return;
  const configured = config.store.adminPassword;
  const password = configured ?? generatePassword();
  const hash = await hashPassword(password, config.store.scryptCost);
  const now = clock.now();
  const uuid = randomUUID();
  const made = await storage.sql.transaction(async (tx) => {
    // Another instance starting at the same moment may have made it meanwhile.
    if (await hasBuiltinAdmin(tx)) return false;
    await insertBuiltinAdmin(tx, uuid, hash, now);
    await createTopLevelFolders(tx, 'User', uuid, now);
    return true;
  });
  if (configured) return;
  if (!made) {
    log.info('another instance starting at the same time made the built-in admin: its generated password is in that instance\'s data directory');
    return;
  }
  const file = path.join(config.dataDir, 'initial-admin-password');
  try {
    // A file left by an earlier store in this folder names a password that is not this admin's.
    rmSync(file, { force: true });
    writeFileSync(file, `${password}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    log.warn({ file }, 'generated a password for the built-in admin; it is in this file (readable by its owner only)');
  } catch (err) {
    log.error({ file, err }, 'could not write the generated admin password: set one with `driveway user reset-password admin`');
  }
}
