/**
 * The storage layer's one way to SQL (docs/scale-out.md "Storage layer"): an async handle that
 * both dialects implement, so the repositories (src/store/storage/*.ts, today still db/*.ts) are
 * written once, in the subset of SQL that SQLite 3.35+ and PostgreSQL 15 share:
 *   - parameters as `?` (positional) or `@name` (named); the PostgreSQL dialect rewrites them to
 *     `$n` once per distinct text;
 *   - `INSERT ... ON CONFLICT DO NOTHING`, `RETURNING`, recursive CTEs, `COALESCE`;
 *   - booleans as integers 0/1, times as integer milliseconds (BIGINT in PostgreSQL, read back as
 *     numbers), case-insensitive names through columns declared so (SQLite `COLLATE NOCASE`,
 *     PostgreSQL `citext`);
 *   - where the dialects differ (JSON arrays, upserts of counters), the repository asks
 *     `sql.dialect` and writes each.
 *
 * Transactions: `transaction(work)` commits when `work` resolves and rolls back when it throws;
 * `work` may await (a store operation no longer relies on the absence of an await for its
 * correctness). Called on a transaction's handle it nests as a savepoint. Inside a transaction
 * every query goes through the handle `work` received: the root handle is another connection in
 * PostgreSQL, and in SQLite it waits for the transaction to end (so using it there is a bug the
 * SQLite dialect reports at once instead of deadlocking).
 *
 * Isolation: SQLite transactions are serializable (one writer, BEGIN IMMEDIATE). PostgreSQL ones
 * run SERIALIZABLE and are retried when the server reports a serialization failure or deadlock,
 * so `work` must do nothing but queries (and pure computation) that cannot be repeated safely:
 * blobs are staged before, mail is sent after.
 */
import type { ChangeFeed } from '../../common/change-feed.js';

export type SqlParams = readonly unknown[] | Readonly<Record<string, unknown>>;

export type Dialect = 'sqlite' | 'postgres';

export interface RunResult {
  /** Rows the statement inserted, changed or deleted. */
  changes: number;
}

export interface Sql {
  readonly dialect: Dialect;
  /** The first row, or undefined. */
  get<T>(text: string, params?: SqlParams): Promise<T | undefined>;
  all<T>(text: string, params?: SqlParams): Promise<T[]>;
  run(text: string, params?: SqlParams): Promise<RunResult>;
  /** Several statements without parameters (schema changes). */
  exec(text: string): Promise<void>;
  /** Commit when `work` resolves, roll back when it throws; a savepoint when this handle is a transaction's. */
  transaction<T>(work: (tx: Sql) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** True on a transaction's handle. */
  readonly inTransaction: boolean;
}

export interface TransactionOptions {
  /**
   * Names of what the transaction is about to change that many callers change at once (a
   * user's usage counter, written by every upload of theirs). PostgreSQL runs the transactions
   * naming one key one after the other, across instances (a session advisory lock taken before
   * the transaction's snapshot), instead of letting them all start and then failing all but
   * one as serialization conflicts: same result, no wasted work. SQLite has one writer anyway.
   * A hint for speed, never for correctness (SERIALIZABLE still decides). Ignored on a savepoint.
   */
  serializeOn?: readonly string[];
  /**
   * A transaction of the in-process bridge (storage/dialects/sqlite-changes.ts bridgeStorage): the
   * folders it changes are announced as `local` (StoreChange), which the bridge patched in its
   * caches already. PostgreSQL sets `driveway.writer` for the transaction in its BEGIN message
   * (migration 038); SQLite's feed marks it in-process. Ignored on a savepoint.
   */
  local?: boolean;
}

/** A storage engine: the root handle, its schema, and how to close it. */
export interface Storage {
  readonly dialect: Dialect;
  /** Queries outside any transaction (each one its own), and `transaction()` to open one. */
  readonly sql: Sql;
  /** The schema version the database holds (the highest migration applied). */
  schemaVersion(): Promise<number>;
  /**
   * What other instances change, for caches (PostgreSQL: LISTEN/NOTIFY). Absent on SQLite: one
   * process serves the database and sees its own writes.
   */
  readonly changes?: ChangeFeed;
  /**
   * Runs `work` alone among every process over the database that asks for the same `lock`, on a
   * handle bound to one connection for the whole of `work` (its transactions too). PostgreSQL: a
   * session advisory lock (key `lock`) taken on that connection before `work` runs and released
   * after, so each transaction `work` opens takes its snapshot after the wait and sees what the
   * previous holder committed. Absent on SQLite: one process serves the database
   * (instance-lock.ts), and `work` runs on the root handle.
   */
  exclusively?<T>(lock: number, work: (sql: Sql) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Resolves when the database answers a trivial query (readiness); throws what the dialect throws otherwise. */
export async function ping(sql: Sql): Promise<void> {
  await sql.get('SELECT 1 AS ok');
}

/** A query that failed because of the data (a constraint), as opposed to the engine being unreachable. */
export class StorageConstraintError extends Error {
  override name = 'StorageConstraintError';
  constructor(
    message: string,
    readonly constraint: 'unique' | 'foreign-key' | 'check' | 'not-null',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
