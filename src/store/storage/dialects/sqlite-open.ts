/**
 * Opens the SQLite database (WAL, foreign keys) and applies the versioned migrations in
 * `storage/migrations/sqlite/NNN-name.sql` in order (storage/migrations.ts; a database newer
 * than the code is refused), each in its own transaction. Owns nothing else.
 *
 * Durability: WAL with `synchronous = NORMAL`; what a request wrote is fsynced before it is
 * answered, one fsync shared by concurrent writers (durability.ts).
 *
 * Two things keep a small upload cheap (it costs a few SQLite calls and one durable commit):
 * - `prepare` returns a cached statement per SQL text: compiling a statement cost more than
 *   running it, and the modules call `db.prepare(sql)` where they use it.
 * - Upload tokens live in a TEMP table, never fsynced: a token is good for seconds, and one
 *   that a restart forgets answers 410 like an expired one (the client asks for another).
 */
import Database, { type Statement } from 'better-sqlite3';
import { preparePrivateDatabaseFile } from '../../../common/private-files.js';
import { installTopKindCache } from '../nodes.js';
import { installSessionWatch } from '../sessions.js';
import { assertKnownSchema, migrationsOf } from '../migrations.js';

export type Db = Database.Database;


export function openDatabase(file: string): Db {
  return openConnection(
    file,
    (db) => {
      migrate(db, file);
      createVolatileTables(db);
      installTopKindCache(db);
      installSessionWatch(db);
    },
    { foreignKeys: true, statementCacheLimit: 1000 },
  );
}

export interface ConnectionOptions {
  foreignKeys: boolean;
  /** Above this many distinct SQL texts the statement cache starts over (the modules use a few dozen). */
  statementCacheLimit: number;
}

/**
 * A connection as every SQLite file of driveway is opened (the store's database, the bridge's own
 * state file: storage/dav-state.ts): the file and its WAL the owner's only (private-files.ts),
 * WAL, `synchronous = NORMAL`, a 5 s busy timeout, then `prepareSchema` (migrations), then the
 * statement cache. Closed again when anything throws.
 */
export function openConnection(file: string, prepareSchema: (db: Db) => void, options: ConnectionOptions): Db {
  preparePrivateDatabaseFile(file);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    // Commits are made durable by a shared fsync of the WAL before anything is answered
    // (storage/dialects/wal-sync.ts, durability.ts), not by one inside every commit on the event loop.
    db.pragma('synchronous = NORMAL');
    if (options.foreignKeys) db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    prepareSchema(db);
  } catch (err) {
    db.close();
    throw err;
  }
  cacheStatements(db, options.statementCacheLimit);
  return db;
}

/**
 * `prepare` returns a cached statement per SQL text: compiling a statement cost more than running
 * it, and the modules call `db.prepare(sql)` where they use it.
 */
function cacheStatements(db: Db, limit: number): void {
  const compile = db.prepare.bind(db);
  const statements = new Map<string, Statement>();
  db.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= limit) statements.clear();
      statement = compile(sql);
      statements.set(sql, statement);
    }
    return statement;
  }) as Db['prepare'];
}

/** The connection's change count (SQLite total_changes()): what durability.ts settles against. */
export function totalChanges(db: Db): number {
  return db.prepare('SELECT total_changes() AS n').pluck().get() as number;
}

/**
 * A consistent copy of the database `source` into the new file `target`, taken while a server
 * writes it: one read transaction of a connection of our own (`VACUUM INTO`); WAL lets the
 * server write meanwhile, and busy_timeout covers the moment a checkpoint holds the file. The
 * target is made empty and 0600 first (VACUUM INTO would make it 0644).
 */
export function snapshotDatabaseFile(source: string, target: string): void {
  preparePrivateDatabaseFile(target);
  const live = new Database(source, { fileMustExist: true, timeout: 10_000 });
  try {
    live.prepare('VACUUM INTO ?').run(target);
  } finally {
    live.close();
  }
}

function createVolatileTables(db: Db): void {
  db.exec(`
    CREATE TEMP TABLE upload_tokens (
      token_hash  TEXT PRIMARY KEY,  -- sha256 of the token; the token itself is never stored
      user_uuid   TEXT NOT NULL,
      session_id  TEXT NOT NULL,
      target_uuid TEXT NOT NULL,     -- folder (new file) or file (new revision)
      created     INTEGER NOT NULL,
      used        INTEGER            -- when it was presented (single use)
    );
    CREATE INDEX temp.upload_tokens_created ON upload_tokens(created);
  `);
}

export function migrate(db: Db, where = 'the database'): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)');
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version),
  );
  const known = migrationsOf('sqlite');
  assertKnownSchema(applied, known, where);
  for (const migration of known) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)').run(migration.version, migration.name, Date.now());
    })();
  }
}
