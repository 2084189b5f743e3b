/**
 * What every store route and operation receives: the storage layer, blobs, configuration, clock,
 * logger, mailer, and the login state one store shares across transports (HTTP routes and the
 * in-process client must count failed logins together).
 */
import type { Config } from '../common/config.js';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { LoginLimiter } from '../common/login-limiter.js';
import type { BlobBackend } from './blobs/blob-backend.js';
import type { Db } from './storage/dialects/sqlite-open.js';
import type { Sql, Storage } from './storage/sql.js';
import type { SessionKeys } from './sessions.js';
import type { Durability } from './durability.js';
import type { Md5AfterCommit } from './ops/md5-later.js';

export interface OutgoingMail {
  to: readonly string[];
  subject: string;
  text: string;
}

/** Outgoing email (ops/mail.ts makes it from `mail.*`); the context holds it, so the type lives here, below ops/. */
export interface Mailer {
  /** Hands the message to the SMTP server; throws 502 `email_failed` when it is refused or unreachable. */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

export interface StoreContext {
  /** The storage layer: every operation's queries go through `storage.sql` (storage/sql.ts). */
  storage: Storage;
  /**
   * The raw SQLite connection, only for what SQLite alone has (durability's change count and WAL
   * fsync, the top-kind cache's TEMP trigger); undefined under PostgreSQL.
   */
  db: Db | undefined;
  blobs: BlobBackend;
  config: Config;
  clock: Clock;
  log: Logger;
  keys: SessionKeys;
  loginLimiter: LoginLimiter;
  /** Wrong passwords of public and upload links, counted per link and per address. */
  linkLimiter: LoginLimiter;
  /** A hash an unknown username's password is checked against, so it costs what a real one does. */
  unknownUserHash: string;
  /** Outgoing email; undefined when `mail.host` is not configured. */
  mailer: Mailer | undefined;
  /** Makes what an operation wrote durable before it is answered (group commit). */
  durability: Durability;
  /** Records large uploads' MD5 after their commit; absent: MD5 is computed before every answer. */
  md5Later?: Md5AfterCommit | undefined;
}

/**
 * `ctx` with its queries on `tx`: what an operation hands to the helpers that take a context
 * (recording a login, naming a recipient, reading preferences) from inside its transaction, so
 * they read and write in it instead of waiting for it on the root handle.
 */
export function withSql(ctx: StoreContext, tx: Sql): StoreContext {
  const { storage } = ctx;
  return {
    ...ctx,
    storage: { dialect: storage.dialect, sql: tx, schemaVersion: () => storage.schemaVersion(), close: () => storage.close() },
  };
}
