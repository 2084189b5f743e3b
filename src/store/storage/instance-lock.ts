/**
 * One process per data directory and part (issue 14, item 10): `<dataDir>/store.lock` guards
 * the database and blobs, `<dataDir>/bridge.lock` the bridge's state (bridge.sqlite, and locks
 * kept in memory that a second bridge would not see). A second instance refuses to start, naming
 * the directory and the process that holds it.
 *
 * The lock is SQLite's own write lock on the lock file (BEGIN IMMEDIATE, never committed): a
 * POSIX record lock the kernel drops when the process dies, however it dies, so a crash never
 * leaves a stale lock, and no PID is ever trusted for liveness (a PID can be reused). The holder's
 * PID and start time sit in a committed row of the same file, readable while the lock is held,
 * for the message only. Owns the lock file only; run.ts decides when to take it (for a bridge
 * alone too: the lock file is SQLite, so it lives with the rest of the SQL, in the storage layer).
 *
 * `tryLockFile` is the same lock without the holder row, for whoever needs to know whether the
 * process that made a file still lives (blobs/staging.ts: the owner of staged parts).
 */
import { chmodSync, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ensureDataDir, preparePrivateDatabaseFile, type WarnLog } from '../../common/private-files.js';
import { reasonOf, StartupError } from '../../common/startup-error.js';

export type LockedPart = 'store' | 'bridge';

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly part: LockedPart,
    readonly holderPid: number | undefined,
  ) {
    super(
      `the data directory ${dataDir} is in use by ${holderPid === undefined ? 'another process' : `process ${holderPid}`} ` +
        `(its ${part}); one process per data directory: stop that one, or give this one another dataDir`,
    );
  }
}

export interface InstanceLock {
  readonly file: string;
  release(): void;
}

interface Holder {
  pid: number;
  host: string;
  started: number;
}

/**
 * Takes the part's lock in `dataDir`, or throws DataDirInUseError naming who holds it. The data
 * folder is made or checked first (private-files.ts: one open to others is narrowed, logged on
 * `log`, or refused), and the lock file is the owner's only.
 */
export function lockDataDir(dataDir: string, part: LockedPart, log?: WarnLog): InstanceLock {
  ensureDataDir(dataDir, log);
  const file = path.join(dataDir, `${part}.lock`);
  let db: Database.Database;
  try {
    preparePrivateDatabaseFile(file);
    // timeout 0: a held lock is an answer, not something to wait for.
    db = new Database(file, { timeout: 0 });
  } catch (err) {
    if (err instanceof StartupError) throw err;
    throw new StartupError(`cannot open the lock file ${file}: ${reasonOf(err)}; check dataDir / DRIVEWAY_DATA_DIR and that the folder is writable by this user`, { cause: err });
  }
  try {
    db.exec('CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, host TEXT NOT NULL, started INTEGER NOT NULL)');
    const me: Holder = { pid: process.pid, host: hostname(), started: Date.now() };
    // Say who we are, then hold the write lock. Between the two another process may win; it is
    // then the holder, and this one refuses like any second instance.
    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT OR REPLACE INTO holder (id, pid, host, started) VALUES (1, @pid, @host, @started)').run(me);
    db.exec('COMMIT');
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') {
      db.close();
      throw err;
    }
    const holder = readHolder(db);
    db.close();
    throw new DataDirInUseError(dataDir, part, holder?.pid === process.pid ? undefined : holder?.pid);
  }
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}

function readHolder(db: Database.Database): Holder | undefined {
  try {
    return db.prepare('SELECT pid, host, started FROM holder WHERE id = 1').get() as Holder | undefined;
  } catch {
    return undefined;
  }
}

/** A lock `tryLockFile` holds; release() ends it (the process's death does too). */
export interface FileLock {
  release(): void;
}

/**
 * Takes the write lock of `file` (SQLite's: BEGIN IMMEDIATE, never committed; no journal, no
 * rows, so the file stays empty) and holds it until release(). 'busy' when another connection
 * holds it, in this process or another; 'missing' when the file does not exist and `create` is
 * false. With `create` the file is made, mode 0600.
 */
export function tryLockFile(file: string, options: { create: boolean }): FileLock | 'busy' | 'missing' {
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: 0, fileMustExist: !options.create });
  } catch (err) {
    if (!options.create && (err as { code?: string }).code === 'SQLITE_CANTOPEN' && !existsSync(file)) return 'missing';
    throw err;
  }
  try {
    if (options.create) chmodSync(file, 0o600);
    // No -journal file beside it: nothing is ever written through this connection.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return 'busy';
    throw err;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}
