/**
 * The store's database and blob backend as the administrator's commands open them (user, check):
 * the configuration the server reads, without the server. No instance lock is taken, so they
 * run beside a serving instance as well as on a stopped one: on SQLite a second connection to
 * the WAL database (its writes wait for the server's through busy_timeout and are fsynced at
 * commit), on PostgreSQL a small pool of its own. Every write goes through the storage layer in
 * its own transaction, and the server reads users and sessions from the database on every
 * request, so it sees a change at once. Nothing here bootstraps, sweeps or clears staging
 * folders: that belongs to the server's start.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../common/config.js';
import { createLogger } from '../common/logger.js';
import type { BlobBackend } from '../store/blobs/blob-backend.js';
import { createBlobBackend } from '../store/blobs/create-blob-backend.js';
import { redactDatabaseUrl } from '../store/storage/database-url.js';
import { Durability } from '../store/durability.js';
import { openDatabase } from '../store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../store/storage/dialects/sqlite.js';
import { migrate } from '../store/storage/migrations.js';
import { storageBlobLedger } from '../store/storage/revisions.js';
import type { Storage } from '../store/storage/sql.js';
import { CliError, EXIT } from './context.js';

export interface AdminStore {
  storage: Storage;
  /** Where the metadata lives, for messages (a PostgreSQL URL without its password). */
  where: string;
  /**
   * Makes every commit this connection sees durable, the server's included: what the blob
   * backend waits for before it removes bytes (blobs/blob-backend.ts BlobLedger.durable).
   */
  durable(): Promise<void>;
  close(): Promise<void>;
}

/** Opens the store's database; a missing or unreadable one is a one-line error naming it. */
export async function openAdminStore(config: Config): Promise<AdminStore> {
  const url = config.database.url;
  if (url === undefined) {
    const file = path.join(config.dataDir, 'driveway.sqlite');
    if (!existsSync(file)) {
      throw new CliError(`no database at ${file}: start driveway once with this data directory, or name the right one (--config, DRIVEWAY_DATA_DIR)`, EXIT.failed);
    }
    let db;
    try {
      db = openDatabase(file);
    } catch (err) {
      throw new CliError(`cannot open the database ${file}: ${(err as Error).message}`, EXIT.failed);
    }
    // The server fsyncs its WAL before it answers (durability.ts); this process has no such
    // loop, so each of its commits is made durable by SQLite itself.
    db.pragma('synchronous = FULL');
    const storage = new SqliteStorage(db, { checkRootUse: true });
    // The server's commits are durable once it answered; a blob they released this process may
    // see before that, so before any removal the WAL is fsynced from here too.
    const durability = new Durability(db, file, { besideServer: true });
    return {
      storage,
      where: file,
      durable: () => durability.durable(),
      close: async () => {
        await durability.close();
        await storage.close();
      },
    };
  }
  const { PostgresStorage } = await import('../store/storage/dialects/postgres.js');
  const where = `the database ${redactDatabaseUrl(url)} (database.url / DRIVEWAY_DATABASE_URL)`;
  const storage = new PostgresStorage(url, { maxConnections: 2 });
  try {
    await migrate(storage, where);
  } catch (err) {
    await storage.close();
    throw new CliError(`cannot use ${where}: ${(err as Error).message}`, EXIT.failed);
  }
  return { storage, where, durable: async () => undefined, close: () => storage.close() };
}

/** The blob backend the configuration names, over the store's database (no init: that belongs to the server's start). */
export function openAdminBlobs(config: Config, store: Pick<AdminStore, 'storage' | 'durable'>): Promise<BlobBackend> {
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, undefined, config.log.format);
  return createBlobBackend(config, storageBlobLedger(store.storage.sql, store.durable), () => Date.now(), log);
}

/** Runs `work` on the opened store and closes it whatever happens. */
export async function withAdminStore<T>(config: Config, work: (store: AdminStore) => Promise<T>): Promise<T> {
  const store = await openAdminStore(config);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
