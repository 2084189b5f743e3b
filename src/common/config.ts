/**
 * Configuration: one zod schema, one loader. Precedence: defaults < YAML file (`--config`)
 * < DRIVEWAY_* environment < command-line flags. Validation errors name the key and the
 * source of the offending value. Secrets (admin password, JWT secret) come only from the
 * environment, never from a file.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';

/** The YAML parser, loaded only when a config file is given (most runs have none). */
function parseYaml(text: string): unknown {
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return parse(text);
}

/** A certificate without its key (or the reverse) is a mistake, not plain HTTP. */
function tlsPairCheck(part: { tlsCert?: string | undefined; tlsKey?: string | undefined }, issue: z.RefinementCtx): void {
  if (part.tlsCert && !part.tlsKey) issue.addIssue({ code: 'custom', path: ['tlsKey'], message: 'required when tlsCert is set (the PEM private key of the certificate)' });
  if (part.tlsKey && !part.tlsCert) issue.addIssue({ code: 'custom', path: ['tlsCert'], message: 'required when tlsKey is set (the PEM certificate)' });
}

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')]);
/** A list from a YAML sequence, or from a comma-separated environment value. */
/** `http(s)://host[:port]` as a browser's Origin header spells it (a trailing slash tolerated). */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value.replace(/\/$/, '').toLowerCase();
  } catch {
    return false;
  }
}

const list = (item: z.ZodString) =>
  z.preprocess((v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v), z.array(item));

export const configSchema = z.strictObject({
  /** Address both servers bind to. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Folder holding the SQLite database, blobs, the JWT secret and the initial admin password. */
  dataDir: z.string().min(1).default('./data'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  log: z
    .strictObject({
      /** `json`: one JSON object a line (for a log collector); `pretty`: one readable line for a person at a terminal. */
      format: z.enum(['json', 'pretty']).default('json'),
      /** One info line per request on both listeners (method, redacted path, status, bytes, ms, user). */
      accessLog: bool.default(true),
    })
    .prefault({}),
  /** The store's database: unset, the SQLite file `<dataDir>/driveway.sqlite`; a `postgres://` URL, PostgreSQL (shared by instances). */
  database: z
    .strictObject({
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL (unset: the SQLite file in the data dir)')
        .optional(),
      /** Connections in the PostgreSQL pool of one instance. */
      maxConnections: z.coerce.number().int().positive().default(10),
      /** How long a request waits for a PostgreSQL connection before it is answered 503 (ms). */
      connectTimeoutMs: z.coerce.number().int().positive().default(5000),
      /** A statement running longer fails (503), client- and server-side: a silent server never hangs a request (ms). */
      queryTimeoutMs: z.coerce.number().int().positive().default(30_000),
    })
    .prefault({}),
  /** Prometheus /metrics on a listener of its own (common/metrics.ts), never on the store's or the WebDAV port. */
  metrics: z
    .strictObject({
      enabled: bool.default(false),
      /** Port of the metrics listener, bound to `host` like the others. */
      port: port.default(9464),
    })
    .prefault({}),
  /** What `main` starts: the store, the bridge, or both. */
  run: z.enum(['all', 'store', 'bridge']).default('all'),
  /** Limits of both listeners against slow clients (common/http-limits.ts); 0 turns one off. */
  http: z
    .strictObject({
      /** Headers must be complete this long after their first byte (else 408). */
      headersTimeoutMs: z.coerce.number().int().min(0).default(60_000),
      /** The whole request, body included, must arrive within this (4 h: 14 GiB at 1 MB/s). */
      requestTimeoutMs: z.coerce.number().int().min(0).default(4 * 60 * 60 * 1000),
      /** A connection on which the client sends or reads nothing for this long is cut. */
      idleTimeoutMs: z.coerce.number().int().min(0).default(60_000),
      /** A request body slower than this over bodyRateWindowMs (while the server reads) is cut with 408. */
      minBodyRateBytesPerSec: z.coerce.number().int().min(0).default(1024),
      /** The sliding window of that rate, and the grace before a body is first measured. */
      bodyRateWindowMs: z.coerce.number().int().min(1000).default(30_000),
      /** Connections open at once from one peer address; past it a new one is closed at accept. Peers in store.trustedProxies are not counted. */
      maxConnectionsPerAddress: z.coerce.number().int().min(0).default(256),
      /** On SIGTERM/SIGINT, how long requests under way may take to finish before their connections are cut. */
      shutdownGraceSec: z.coerce.number().int().min(0).default(30),
    })
    .prefault({}),
  store: z
    .strictObject({
      port: port.default(8080),
      /** Edition of the interface served (docs/api.md "Editions"); in 1.0 every 3.0-only endpoint answers 404. */
      edition: z
        .preprocess((v) => (v === 3 ? '3.0' : v === 1 ? '1.0' : v), z.enum(['3.0', '1.0'], { error: 'must be "3.0" or "1.0" (quote it in YAML: edition: "3.0")' }))
        .default('3.0'),
      /** Built-in `admin` password, applied at first start (environment only). */
      adminPassword: z.string().min(1).optional(),
      /** HS256 secret for session JWTs (environment only); when unset, the key ring in the database (jwt_keys). */
      jwtSecret: z.string().min(32).optional(),
      /** Days between rotations of the session signing key (the database key ring); 0: never. */
      jwtRotateDays: z.coerce.number().min(0).default(30),
      sessionTtlSec: z.coerce.number().int().positive().default(86_400),
      /** A web app session (its cookie) also ends after this long without a call (docs/security.md "Sessions of the web app"). */
      webSessionIdleSec: z.coerce.number().int().positive().default(28_800),
      uploadTokenTtlMs: z.coerce.number().int().positive().default(5_000),
      /**
       * Blobs written before checksums existed (migration 019) hashed per second by the
       * background backfill (ops/checksum-backfill.ts), across every instance's share; 0: none.
       */
      checksumBackfillPerSec: z.coerce.number().min(0).default(20),
      /**
       * An upload of at least this many bytes is answered before its MD5 is known (ops/md5-later.ts:
       * computed right after the commit; SHA-1 is published meanwhile); 0: MD5 always before the answer.
       */
      checksumMd5LaterBytes: z.coerce.number().int().min(0).default(16 * 1024 * 1024),
      /** Background MD5s under way at once; a further one is left to the checksum backfill. */
      checksumMd5LaterMax: z.coerce.number().int().min(0).default(4),
      /** Failed logins allowed per username and per IP inside the window before 429. */
      loginMaxFailures: z.coerce.number().int().positive().default(10),
      loginWindowSec: z.coerce.number().int().positive().default(900),
      /** scrypt cost parameter N (power of two). 2^15 uses 32 MiB per hash. */
      scryptCost: z.coerce.number().int().min(1024).default(32_768),
      /**
       * Public base URL of the store: share links (`url`) and avatar links start with it. Unset,
       * a link's URL is built from the request's Host (X-Forwarded-Proto/Host only from `trustedProxies`).
       */
      publicUrl: z.string().url().optional(),
      /** Folder of the built web app served at `/` (src/store/web-app.ts); unset: dist/web of this installation. */
      webDir: z.string().min(1).optional(),
      /** PEM certificate and key: the store serves HTTPS (both or neither). */
      tlsCert: z.string().min(1).optional(),
      tlsKey: z.string().min(1).optional(),
      /** Days a password stays valid after it was set; 0: passwords never expire (no `pass_expires`). */
      passwordMaxAgeDays: z.coerce.number().int().min(0).default(0),
      /** Login history entries kept per user (the newest; older ones are dropped). */
      loginHistoryPerUser: z.coerce.number().int().min(10).default(1000),
      /** Largest avatar accepted (user or group), in bytes of the decoded image. */
      avatarMaxBytes: z.coerce.number().int().min(1024).default(512 * 1024),
      /** Peers whose `X-Forwarded-For` names the real client (a bridge run with `--only bridge`). */
      trustedProxies: list(z.string().min(1)).default([]),
      /** Classes a group tag may have (docs/api.md "Tag"). */
      tagClasses: list(z.string().min(1).max(64)).default(['general', 'project', 'status', 'confidential']),
      /** Whether GET /api/groups?show=all lists every group of the caller's organization. */
      shareWithAllGroups: bool.default(false),
      /** Leave macOS side files (`._*`, `.DS_Store`) out of every listing but Finder's (common/side-files.ts); false: ordinary files. */
      hideMacSideFiles: bool.default(true),
      /** Where blobs (file contents above 64 KiB) live: the data directory, or an S3 bucket shared by instances. */
      blobs: z
        .strictObject({
          /** `local` (`<dataDir>/blobs`) or `s3`; when unset, `s3` if `s3.bucket` is set, else `local`. */
          backend: z.enum(['local', 's3']).optional(),
          /** Unreferenced blobs younger than this are never collected (an upload elsewhere may be about to refer to them). */
          gcGraceSec: z.coerce.number().int().min(0).default(3600),
          /** How often the collector runs while the store serves; 0: only at start. Default: 0 local, 3600 s3. */
          gcIntervalSec: z.coerce.number().int().min(0).optional(),
          /**
           * A staged part (`<dataDir>/tmp/*.part`) of this process untouched this long is removed
           * by the staging sweep, which runs every hour (or this often, if shorter) and also takes
           * the parts of processes that ended; 0: only the sweep at start.
           */
          stagingMaxAgeSec: z.coerce.number().int().min(0).default(86_400),
          s3: z
            .strictObject({
              bucket: z.string().min(3).optional(),
              /** e.g. http://127.0.0.1:9000; AWS's endpoint for the region when unset. */
              endpoint: z.string().url().optional(),
              region: z.string().min(1).default('us-east-1'),
              /** Prepended to every object key, so one bucket can hold several stores. */
              prefix: z.string().default(''),
              /** Path-style URLs (most self-hosted S3 servers). */
              forcePathStyle: bool.default(false),
              /** Bodies above this go up in parts of this size (S3: at least 5 MiB). */
              partSizeBytes: z.coerce.number().int().min(5 * 1024 * 1024).default(16 * 1024 * 1024),
              /** An upload's intent expires this long after its last part, and is then cleaned up. */
              uploadIntentTtlSec: z.coerce.number().int().positive().default(86_400),
              /** How long a connection to S3 may take to open (ms). */
              connectTimeoutMs: z.coerce.number().int().positive().default(3000),
              /** How long a request to S3 may wait for its next byte (ms). */
              requestTimeoutMs: z.coerce.number().int().positive().default(30_000),
              /** Tries per S3 request, retries with backoff included; then the request is answered 503. */
              maxAttempts: z.coerce.number().int().min(1).max(10).default(3),
            })
            .prefault({}),
        })
        .prefault({})
        .superRefine((blobs, issue) => {
          if (blobs.backend === 's3' && !blobs.s3.bucket) issue.addIssue({ code: 'custom', path: ['s3', 'bucket'], message: 'required when store.blobs.backend is s3' });
        }),
      /**
       * What old revisions and trash items are kept (docs/operations.md "Retention"); an
       * organization's own settings override each of these for its users and groups.
       */
      retention: z
        .strictObject({
          /** Newest revisions kept per file, the current one included; 0: all. */
          keepRevisions: z.coerce.number().int().min(0).default(0),
          /** Days an old revision is kept after it was uploaded; 0: forever. */
          keepRevisionDays: z.coerce.number().int().min(0).default(0),
          /** Days an item stays in trash before it is deleted for good; 0: forever. */
          trashDays: z.coerce.number().int().min(0).default(0),
          /** How often the store applies the settings while serving; 0: never (only `driveway prune`). */
          intervalSec: z.coerce.number().int().min(0).default(3600),
        })
        .prefault({}),
    })
    .prefault({})
    .superRefine((store, issue) => tlsPairCheck(store, issue)),
  /** Outgoing email (group broadcast messages). Without `host`, email is not configured. */
  mail: z
    .strictObject({
      host: z.string().min(1).optional(),
      port: port.default(587),
      /** true: TLS from the first byte (port 465); false: STARTTLS when the server offers it. */
      secure: bool.default(false),
      from: z.string().min(3).default('driveway@localhost'),
      user: z.string().min(1).optional(),
      /** SMTP password (environment only). */
      password: z.string().min(1).optional(),
    })
    .prefault({}),
  bridge: z
    .strictObject({
      port: port.default(8081),
      /** Store the bridge talks to; defaults to the embedded store's URL. */
      storeUrl: z.string().url().optional(),
      /** PEM certificate and key: the bridge serves HTTPS (both or neither). */
      tlsCert: z.string().min(1).optional(),
      tlsKey: z.string().min(1).optional(),
      /** How long a folder listing is trusted before the store is asked again. */
      cacheTtlMs: z.coerce.number().int().min(0).default(2_000),
      cacheMaxEntries: z.coerce.number().int().positive().default(5_000),
      /** What the cached listings may weigh together (estimated; metadata-cache.ts listingBytes). */
      cacheMaxBytes: z.coerce.number().int().min(1024 * 1024).default(32 * 1024 * 1024),
      /** Timeout of one store request (not of a streamed body). */
      storeTimeoutMs: z.coerce.number().int().positive().default(30_000),
      /** Report quota properties to macOS >= 15.4 (Darwin 24.4), which may stall mounting on them. */
      quotaForNewMacOS: bool.default(true),
      /** Show macOS side files (`._*`, `.DS_Store`) to Finder (WebDAVFS) only; false: to every client. */
      hideMacSideFiles: bool.default(true),
      /** Failed Basic logins allowed per username and per client address inside the window before 503 (the bridge's own limit, whatever the store). */
      loginMaxFailures: z.coerce.number().int().positive().default(10),
      loginWindowSec: z.coerce.number().int().positive().default(900),
      /** Base URL users mount (WebDrive URLs the store hands out); defaults to http://host:port. */
      publicUrl: z.string().url().optional(),
      /**
       * Origins whose pages may read the bridge's answers (CORS, bridge/cors.ts): the web app's,
       * which uploads with tus and a bearer token. Unset: the web app's own origin when the bridge
       * knows it (store.publicUrl, or the store of this process); `[]`: none. Never `*`.
       */
      corsOrigins: list(z.string().refine(isOrigin, 'an origin: http(s)://host[:port], no path; never *')).optional(),
      /** Longest lock the bridge grants, in seconds; `Timeout: Infinite` and longer get this (clients refresh). */
      lockMaxTimeoutSec: z.coerce.number().int().min(60).default(3600),
      /** A chunked upload (Nextcloud chunking) untouched this long is abandoned: its session and parts are removed. */
      uploadExpirySec: z.coerce.number().int().min(1).default(86_400),
      /**
       * Resumable uploads (Nextcloud chunking, tus) one user may have open at once; past it a new
       * one is refused with 429 until one finishes, is deleted or expires. Clients open a few at a
       * time (Nextcloud desktop up to 6 in parallel, rclone --transfers 4, the web app one).
       */
      uploadMaxOpenPerUser: z.coerce.number().int().min(1).default(100),
      /**
       * Parts one upload may have (Nextcloud chunks, tus PATCHes); past it 507. Nextcloud v2 takes
       * 10,000 chunks; rclone's v1 chunks of 10 MiB reach 100,000 at about 1 TiB (tus's largest upload).
       */
      uploadMaxParts: z.coerce.number().int().min(1).default(100_000),
      /**
       * To whom `dav.bulkupload` is advertised (bridge/uploads/bulk.ts): `fixed`, every client but
       * the Nextcloud desktop clients (nextcloudcmd included) before 3.10, whose bulk request
       * fails in the client when it holds an empty file (nextcloud/desktop #5871, backported to
       * 3.9); `all`; `none`.
       */
      bulkUploadClients: z.enum(['fixed', 'all', 'none']).default('fixed'),
      /** Push sockets (bridge/nextcloud/push.ts) one user may hold on one instance; notify_push's own limit, 64. */
      pushMaxSocketsPerUser: z.coerce.number().int().min(1).default(64),
      /** Push sockets one address may hold on one instance (authenticated or not); past it 429 at the handshake. */
      pushMaxSocketsPerAddress: z.coerce.number().int().min(1).default(256),
      /** A push socket silent this long is pinged; one that left the last ping unanswered is closed (notify_push: 30 s). */
      pushPingSec: z.coerce.number().int().min(1).default(30),
      /** Longest debounce of notify_file and notify_activity, reached at 10 sockets per second (notify_push's max_debounce_time: 15). */
      pushMaxDebounceSec: z.coerce.number().int().min(1).default(15),
      /** How often a push socket's session is confirmed with the store (a revoked app password or changed password closes it). */
      pushSessionCheckSec: z.coerce.number().int().min(1).default(60),
      /** Bytes of dead properties (PROPPATCH) one node may carry. */
      deadPropsMaxBytesPerNode: z.coerce.number().int().min(1024).default(64 * 1024),
      /** Bytes of dead properties all nodes of one owner (user or group) may carry together. */
      deadPropsMaxBytesPerOwner: z.coerce.number().int().min(1024).default(64 * 1024 * 1024),
    })
    .prefault({})
    .superRefine((bridge, issue) => tlsPairCheck(bridge, issue)),
});

export type Config = z.infer<typeof configSchema>;

/** The blob backend in use: `store.blobs.backend`, else `s3` when a bucket is configured, else `local`. */
export function blobBackendOf(config: Config): 'local' | 's3' {
  return config.store.blobs.backend ?? (config.store.blobs.s3.bucket ? 's3' : 'local');
}
type Source = 'default' | 'file' | 'env' | 'flag';

/** Environment variables, part of the public interface: names never change. */
export const ENV_KEYS: Record<string, string[]> = {
  DRIVEWAY_HOST: ['host'],
  DRIVEWAY_DATA_DIR: ['dataDir'],
  DRIVEWAY_LOG_LEVEL: ['logLevel'],
  DRIVEWAY_LOG_FORMAT: ['log', 'format'],
  DRIVEWAY_ACCESS_LOG: ['log', 'accessLog'],
  DRIVEWAY_METRICS_ENABLED: ['metrics', 'enabled'],
  DRIVEWAY_METRICS_PORT: ['metrics', 'port'],
  DRIVEWAY_STORE_PORT: ['store', 'port'],
  DRIVEWAY_EDITION: ['store', 'edition'],
  DRIVEWAY_ADMIN_PASSWORD: ['store', 'adminPassword'],
  DRIVEWAY_JWT_SECRET: ['store', 'jwtSecret'],
  DRIVEWAY_JWT_ROTATE_DAYS: ['store', 'jwtRotateDays'],
  DRIVEWAY_DAV_PORT: ['bridge', 'port'],
  DRIVEWAY_BULK_UPLOAD_CLIENTS: ['bridge', 'bulkUploadClients'],
  DRIVEWAY_STORE_URL: ['bridge', 'storeUrl'],
  DRIVEWAY_TLS_CERT: ['bridge', 'tlsCert'],
  DRIVEWAY_TLS_KEY: ['bridge', 'tlsKey'],
  DRIVEWAY_STORE_TLS_CERT: ['store', 'tlsCert'],
  DRIVEWAY_STORE_TLS_KEY: ['store', 'tlsKey'],
  DRIVEWAY_CACHE_TTL_MS: ['bridge', 'cacheTtlMs'],
  DRIVEWAY_BRIDGE_PUBLIC_URL: ['bridge', 'publicUrl'],
  DRIVEWAY_BRIDGE_CORS_ORIGINS: ['bridge', 'corsOrigins'],
  DRIVEWAY_TRUSTED_PROXIES: ['store', 'trustedProxies'],
  DRIVEWAY_SMTP_HOST: ['mail', 'host'],
  DRIVEWAY_SMTP_PORT: ['mail', 'port'],
  DRIVEWAY_SMTP_USER: ['mail', 'user'],
  DRIVEWAY_SMTP_PASSWORD: ['mail', 'password'],
  DRIVEWAY_MAIL_FROM: ['mail', 'from'],
  DRIVEWAY_DATABASE_URL: ['database', 'url'],
  DRIVEWAY_DATABASE_MAX_CONNECTIONS: ['database', 'maxConnections'],
  DRIVEWAY_SHUTDOWN_GRACE_SEC: ['http', 'shutdownGraceSec'],
  DRIVEWAY_BLOB_BACKEND: ['store', 'blobs', 'backend'],
  DRIVEWAY_S3_BUCKET: ['store', 'blobs', 's3', 'bucket'],
  DRIVEWAY_S3_ENDPOINT: ['store', 'blobs', 's3', 'endpoint'],
  DRIVEWAY_S3_REGION: ['store', 'blobs', 's3', 'region'],
  DRIVEWAY_S3_PREFIX: ['store', 'blobs', 's3', 'prefix'],
  DRIVEWAY_S3_FORCE_PATH_STYLE: ['store', 'blobs', 's3', 'forcePathStyle'],
};

/**
 * DRIVEWAY_* names read elsewhere than the configuration: no warning for them. `DRIVEWAY_TEST_*`
 * belongs to the test suites.
 */
const OTHER_ENV_NAMES = new Set(['DRIVEWAY_MIGRATE_BATCH_ROWS']);

const SECRET_KEYS = new Set(['store.adminPassword', 'store.jwtSecret', 'mail.password']);

export class ConfigError extends Error {}

type Tree = Record<string, unknown>;

function setPath(tree: Tree, keys: string[], value: unknown): void {
  let node = tree;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = {};
    node = node[key] as Tree;
  }
  node[keys[keys.length - 1] as string] = value;
}

export interface LoadOptions {
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  /** Dotted keys from the command line, e.g. { 'store.port': '0' }. */
  flags?: Record<string, unknown>;
  /** Receives one line per unknown DRIVEWAY_* variable (not fatal); default: stderr. */
  warn?: (line: string) => void;
}

/** Levenshtein distance, for "did you mean" (names are short: the quadratic cost is nothing). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** The candidate nearest to `name` (case ignored), when it is near enough to be a typo. */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  const leafLength = name.split('.').pop()?.length ?? name.length;
  return best && best.distance <= Math.max(2, Math.floor(leafLength / 3)) ? best.candidate : undefined;
}

/** Every key of the schema, dotted, groups included (`store`, `store.blobs`, `store.blobs.s3.bucket`). */
function schemaKeyNames(shape: Record<string, z.ZodType>, prefix = ''): string[] {
  return Object.entries(shape).flatMap(([name, field]) => {
    let inner: z.ZodType = field;
    while (inner instanceof z.ZodPrefault || inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
    const dotted = `${prefix}${name}`;
    return inner instanceof z.ZodObject ? [dotted, ...schemaKeyNames(inner.shape as Record<string, z.ZodType>, `${dotted}.`)] : [dotted];
  });
}

let knownKeys: string[] | undefined;

/** "unknown key store.loginMaxFailure; did you mean store.loginMaxFailures?" */
function unknownKeyMessage(dotted: string): string {
  knownKeys ??= schemaKeyNames(configSchema.shape as Record<string, z.ZodType>);
  const parent = dotted.includes('.') ? dotted.slice(0, dotted.lastIndexOf('.') + 1) : '';
  // A key of the same group first (store.port, not bridge.port), then any key.
  const siblings = knownKeys.filter((key) => key.startsWith(parent) && !key.slice(parent.length).includes('.'));
  const guess = nearestName(dotted, siblings) ?? nearestName(dotted, knownKeys);
  if (guess) return `unknown key ${dotted}; did you mean ${guess}?`;
  return `unknown key ${dotted}; known keys${parent ? ` in ${parent.slice(0, -1)}` : ''}: ${siblings.map((key) => key.slice(parent.length)).join(', ')}`;
}

/** One line per DRIVEWAY_* variable the configuration does not know, with the nearest known name. */
export function unknownEnvWarnings(env: NodeJS.ProcessEnv): string[] {
  const known = Object.keys(ENV_KEYS);
  return Object.keys(env)
    .filter((name) => name.startsWith('DRIVEWAY_') && !(name in ENV_KEYS) && !OTHER_ENV_NAMES.has(name) && !name.startsWith('DRIVEWAY_TEST_'))
    .sort()
    .map((name) => {
      const guess = nearestName(name, known);
      return `warning: environment variable ${name} is not a driveway setting and is ignored${guess ? `; did you mean ${guess}?` : ''}`;
    });
}

/** Builds the configuration; throws ConfigError naming the key and where its value came from. */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const raw: Tree = {};
  const sources = new Map<string, Source>();

  if (options.configFile) {
    let text: string;
    try {
      text = readFileSync(options.configFile, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read config file ${options.configFile}: ${(err as Error).message}`);
    }
    const fileTree = (parseYaml(text) ?? {}) as unknown;
    if (typeof fileTree !== 'object' || Array.isArray(fileTree)) {
      throw new ConfigError(`config file ${options.configFile} must hold a mapping`);
    }
    const walk = (tree: Tree, prefix: string[]): void => {
      for (const [key, value] of Object.entries(tree)) {
        const keys = [...prefix, key];
        if (value && typeof value === 'object' && !Array.isArray(value)) walk(value as Tree, keys);
        else {
          if (SECRET_KEYS.has(keys.join('.'))) {
            throw new ConfigError(`${keys.join('.')} is a secret: set it through the environment, not ${options.configFile}`);
          }
          setPath(raw, keys, value);
          sources.set(keys.join('.'), 'file');
        }
      }
    };
    walk(fileTree as Tree, []);
  }
  for (const [name, keys] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      setPath(raw, keys, value);
      sources.set(keys.join('.'), 'env');
    }
  }
  for (const [dotted, value] of Object.entries(options.flags ?? {})) {
    setPath(raw, dotted.split('.'), value);
    sources.set(dotted, 'flag');
  }

  const warn = options.warn ?? ((line: string) => process.stderr.write(`driveway: ${line}\n`));
  for (const line of unknownEnvWarnings(env)) warn(line);

  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.flatMap((issue) => {
      if (issue.code === 'unrecognized_keys') {
        // Only a file or a flag can name a key the schema lacks (the environment maps known names).
        return issue.keys.map((name) => {
          const dotted = [...issue.path, name].join('.');
          const source = sources.get(dotted) ?? [...sources.entries()].find(([key]) => key.startsWith(`${dotted}.`))?.[1];
          return `${unknownKeyMessage(dotted)}${source === 'flag' ? ' (from a flag)' : options.configFile ? ` (in ${options.configFile})` : ''}`;
        });
      }
      const key = issue.path.join('.');
      const source = sources.get(key) ?? 'default';
      const envName = Object.entries(ENV_KEYS).find(([, keys]) => keys.join('.') === key)?.[0];
      if (source === 'default') return `${key} (not set): ${issue.message}`;
      const where = source === 'env' && envName ? `environment ${envName}` : source === 'file' ? `file ${options.configFile}` : source;
      return `${key} (from ${where}): ${issue.message}`;
    });
    throw new ConfigError(lines.length === 1 ? `invalid configuration: ${lines[0]}` : `invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const config = parsed.data;
  config.dataDir = path.resolve(config.dataDir);
  return config;
}

/** URL the WebDAV bridge is reachable at (what WebDrive URLs start with), without a trailing slash. */
export function bridgePublicUrl(config: Config): string {
  if (config.bridge.publicUrl) return config.bridge.publicUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const scheme = config.bridge.tlsCert ? 'https' : 'http';
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${config.bridge.port}`;
}

/** URL the embedded store is reachable at from this machine. */
export function storeBaseUrl(config: Config, port = config.store.port): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `${config.store.tlsCert ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
