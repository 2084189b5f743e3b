/**
 * The SQLite dialect of the storage layer (sql.ts), over one better-sqlite3 connection: the
 * embedded default. Statements run synchronously on the event loop (microseconds each; the
 * statement cache of storage/dialects/sqlite-open.ts keeps them compiled), wrapped in resolved promises.
 *
 * One connection means one transaction at a time: `transaction()` takes the connection's gate
 * (BEGIN IMMEDIATE ... COMMIT), and a query on the root handle made while another flow holds it
 * waits until the gate is free, so it never reads another request's uncommitted rows nor joins
 * its transaction. A query on the root handle from inside the flow that holds the gate would wait
 * for itself, a bug the PostgreSQL dialect would show as a deadlock or a stale read. With
 * `checkRootUse` the dialect knows the flow (AsyncLocalStorage, set only while a transaction runs)
 * and throws at once; without it (AsyncLocalStorage turns on promise hooks for the whole process,
 * about a tenth of a small upload's CPU, so the store runs without it outside tests) such a wait
 * fails after `gateTimeoutMs`, which no transaction of this dialect comes near: they do no I/O.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type Database from 'better-sqlite3';
import { StorageConstraintError, type RunResult, type Sql, type SqlParams, type Storage } from '../sql.js';

type Db = Database.Database;

/** Each handle's connection, for the few SQLite-only mechanisms (sqliteConnectionOf). */
const connections = new WeakMap<Sql, Db>();

/**
 * The better-sqlite3 connection behind a SQLite dialect handle (root or transaction); undefined
 * for any other handle. Only for what SQLite alone has (a TEMP trigger's cache, nodes.ts), each
 * with a path that works without it.
 */
export function sqliteConnectionOf(sql: Sql): Db | undefined {
  // A handle derived from one by Object.create (sqlite-changes.ts bridgeStorage) is the same connection's.
  return connections.get(sql) ?? connections.get(Object.getPrototypeOf(sql) as Sql);
}

export interface SqliteStorageOptions {
  /** Refuse a query on the root handle inside a transaction at once (AsyncLocalStorage). Default true. */
  checkRootUse?: boolean;
  /** How long a query or transaction waits for the connection before it fails. Default 30 s. */
  gateTimeoutMs?: number;
}

/**
 * A FIFO mutex: the connection's one transaction at a time. A waiter that waited `timeoutMs`
 * fails; one watchdog timer runs while anyone waits (a timer per wait cost more than the wait).
 */
class Gate {
  private held = false;
  private readonly waiters: Array<{ resolve: () => void; reject: (err: Error) => void; since: number }> = [];
  private watchdog: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  get isHeld(): boolean {
    return this.held;
  }

  /** Resolves once the caller holds the gate. */
  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject, since: Date.now() });
      this.watchdog ??= setInterval(() => this.expire(), Math.max(10, Math.min(1000, this.timeoutMs / 4))).unref();
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next.resolve();
    else this.held = false;
    if (this.waiters.length === 0) this.stopWatchdog();
  }

  private expire(): void {
    const limit = Date.now() - this.timeoutMs;
    while (this.waiters.length > 0 && (this.waiters[0] as { since: number }).since <= limit) {
      (this.waiters.shift() as { reject: (err: Error) => void }).reject(
        new Error(`storage: waited ${this.timeoutMs} ms for the connection's transaction; a query on the root handle inside a transaction?`),
      );
    }
    if (this.waiters.length === 0) this.stopWatchdog();
  }

  private stopWatchdog(): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
  }
}

function bind(params: SqlParams | undefined): unknown[] {
  if (params === undefined) return [];
  return Array.isArray(params) ? (params as unknown[]) : [params];
}

function constraintOf(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_CONSTRAINT')) return err;
  const kind = code.endsWith('UNIQUE') || code.endsWith('PRIMARYKEY') ? 'unique' : code.endsWith('FOREIGNKEY') ? 'foreign-key' : code.endsWith('NOTNULL') ? 'not-null' : 'check';
  return new StorageConstraintError((err as Error).message, kind, { cause: err });
}

/** Statements against the connection, with no gate: what a transaction's handle and a free root handle run. */
function direct(db: Db) {
  return {
    get<T>(text: string, params?: SqlParams): T | undefined {
      return db.prepare(text).get(...bind(params)) as T | undefined;
    },
    all<T>(text: string, params?: SqlParams): T[] {
      return db.prepare(text).all(...bind(params)) as T[];
    },
    run(text: string, params?: SqlParams): RunResult {
      try {
        return { changes: db.prepare(text).run(...bind(params)).changes };
      } catch (err) {
        throw constraintOf(err);
      }
    },
    exec(text: string): void {
      db.exec(text);
    },
  };
}

export class SqliteStorage implements Storage {
  readonly dialect = 'sqlite' as const;
  readonly sql: Sql;
  private readonly gate: Gate;
  /** The flow holding the gate, while a transaction runs. */
  private readonly holder = new AsyncLocalStorage<object>();
  /** Savepoints open in the running transaction (their names are by depth, so their statements are cached). */
  private depth = 0;

  private readonly checkRootUse: boolean;

  constructor(
    readonly db: Db,
    options: SqliteStorageOptions = {},
  ) {
    this.checkRootUse = options.checkRootUse ?? true;
    this.gate = new Gate(options.gateTimeoutMs ?? 30_000);
    const now = direct(db);
    const storage = this;
    /** Runs `statement` now when no transaction is open, else once the gate is free. */
    const gated = async <T>(statement: () => T): Promise<T> => {
      if (!storage.gate.isHeld) return statement();
      if (storage.checkRootUse && storage.holder.getStore() !== undefined) {
        throw new Error('storage: a query on the root handle inside a transaction; use the handle the transaction gave');
      }
      await storage.gate.acquire();
      try {
        return statement();
      } finally {
        storage.gate.release();
      }
    };
    this.sql = {
      dialect: 'sqlite',
      inTransaction: false,
      get: (text, params) => gated(() => now.get(text, params)),
      all: (text, params) => gated(() => now.all(text, params)),
      run: (text, params) => gated(() => now.run(text, params)),
      exec: (text) => gated(() => now.exec(text)),
      // serializeOn needs nothing here: one connection, one writer.
      transaction: (work) => this.begin(work),
    };
    connections.set(this.sql, db);
  }

  private async begin<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    if (this.checkRootUse && this.holder.getStore() !== undefined) {
      throw new Error('storage: a transaction opened on the root handle inside a transaction; nest it on the handle the transaction gave');
    }
    await this.gate.acquire();
    const run = async (): Promise<T> => {
      let open = true;
      const tx = this.handle(() => open);
      try {
        this.statement('BEGIN IMMEDIATE');
        const result = await work(tx);
        this.statement('COMMIT');
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.statement('ROLLBACK');
        throw err;
      } finally {
        open = false;
        this.gate.release();
      }
    };
    return this.checkRootUse ? this.holder.run({}, run) : run();
  }

  /** A transaction's handle; it refuses to run once its transaction has ended. */
  private handle(isOpen: () => boolean): Sql {
    const now = direct(this.db);
    const check = (): void => {
      if (!isOpen()) throw new Error('storage: a transaction handle used after its transaction ended');
    };
    const handle: Sql = {
      dialect: 'sqlite',
      inTransaction: true,
      get: async (text, params) => (check(), now.get(text, params)),
      all: async (text, params) => (check(), now.all(text, params)),
      run: async (text, params) => (check(), now.run(text, params)),
      exec: async (text) => (check(), now.exec(text)),
      transaction: async (work) => {
        check();
        const name = `sp${++this.depth}`;
        this.statement(`SAVEPOINT ${name}`);
        try {
          const result = await work(handle);
          this.statement(`RELEASE ${name}`);
          return result;
        } catch (err) {
          this.statement(`ROLLBACK TO ${name}`);
          this.statement(`RELEASE ${name}`);
          throw err;
        } finally {
          this.depth -= 1;
        }
      },
    };
    connections.set(handle, this.db);
    return handle;
  }

  /**
   * A transaction-control statement, prepared (through the connection's statement cache when it
   * has one: sqlite-open.ts) rather than exec'd: exec compiles its text on every call, which cost
   * more than the INSERT an upload commits.
   */
  private statement(text: string): void {
    this.db.prepare(text).run();
  }

  async schemaVersion(): Promise<number> {
    const row = this.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null } | undefined;
    return row?.v ?? 0;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
