/**
 * The storage layer's SQL handle (src/store/storage/sql.ts) on each dialect: parameters,
 * transactions that await, savepoints, rollback, the one-transaction-at-a-time gate of SQLite,
 * constraint errors, migrations that refuse a newer schema and run once among migrators starting
 * together (Storage.exclusively).
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage, rewritePlaceholders } from '../../../src/store/storage/dialects/postgres.js';
import { assertKnownSchema, migrate, migrationsOf, SchemaTooNewError } from '../../../src/store/storage/migrations.js';
import { StorageUnavailableError } from '../../../src/contracts/storage-unavailable.js';
import { StorageConstraintError, type Storage } from '../../../src/store/storage/sql.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

type TmpDir = ReturnType<typeof makeTmpDir>;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the SQLite dialect', () => {
  let tmp: TmpDir;
  let storage: Storage;

  beforeEach(async () => {
    tmp = makeTmpDir();
    const db = new Database(path.join(tmp.dir, 'test.sqlite'));
    db.pragma('journal_mode = WAL');
    storage = new SqliteStorage(db);
    await storage.sql.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, n INTEGER NOT NULL DEFAULT 0)');
  });
  afterEach(async () => {
    await storage.close();
    tmp.remove();
  });

  it('binds positional and named parameters', async () => {
    await storage.sql.run('INSERT INTO t (id, name) VALUES (?, ?)', [1, 'a']);
    await storage.sql.run('INSERT INTO t (id, name, n) VALUES (@id, @name, @id)', { id: 2, name: 'b' });
    expect(await storage.sql.all('SELECT id, name, n FROM t ORDER BY id')).toEqual([
      { id: 1, name: 'a', n: 0 },
      { id: 2, name: 'b', n: 2 },
    ]);
    expect(await storage.sql.get('SELECT name FROM t WHERE id = ?', [3])).toBeUndefined();
  });

  it('commits a transaction that awaits, and rolls back one that throws', async () => {
    await storage.sql.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, name) VALUES (1, ?)', ['kept']);
      await tick();
      await tx.run('INSERT INTO t (id, name) VALUES (2, ?)', ['kept too']);
    });
    await expect(
      storage.sql.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id, name) VALUES (3, ?)', ['gone']);
        await tick();
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect((await storage.sql.all<{ name: string }>('SELECT name FROM t ORDER BY id')).map((r) => r.name)).toEqual(['kept', 'kept too']);
  });

  it('nests as a savepoint: an inner failure undoes the inner part only', async () => {
    await storage.sql.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id, name) VALUES (1, 'outer')");
      await expect(
        tx.transaction(async (inner) => {
          await inner.run("INSERT INTO t (id, name) VALUES (2, 'inner')");
          throw new Error('inner refused');
        }),
      ).rejects.toThrow('inner refused');
    });
    expect(await storage.sql.all('SELECT name FROM t')).toEqual([{ name: 'outer' }]);
  });

  it('never shows another flow a transaction still open, and runs transactions one at a time', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = storage.sql.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id, name) VALUES (1, 'first')");
      await held;
      seen.push('first commits');
    });
    await tick();
    const read = storage.sql.all('SELECT name FROM t').then((rows) => seen.push(`read ${rows.length}`));
    const second = storage.sql.transaction(async (tx) => {
      const n = (await tx.get<{ c: number }>('SELECT COUNT(*) AS c FROM t'))?.c;
      seen.push(`second sees ${n}`);
    });
    await tick();
    expect(seen).toEqual([]);
    release();
    await Promise.all([first, read, second]);
    expect(seen).toEqual(['first commits', 'read 1', 'second sees 1']);
  });

  it('refuses the root handle inside a transaction instead of deadlocking', async () => {
    await expect(
      storage.sql.transaction(async () => {
        await storage.sql.get('SELECT 1');
      }),
    ).rejects.toThrow(/root handle inside a transaction/);
    // The gate is free again.
    expect(await storage.sql.get('SELECT 1 AS one')).toEqual({ one: 1 });
  });

  it('without the flow check, fails a root query inside a transaction after the gate timeout, and rolls the transaction back', async () => {
    const unchecked = new SqliteStorage(new Database(path.join(tmp.dir, 'test.sqlite')), { checkRootUse: false, gateTimeoutMs: 50 });
    try {
      const started = Date.now();
      await expect(
        unchecked.sql.transaction(async (tx) => {
          await tx.run("INSERT INTO t (id, name) VALUES (7, 'rolled back')");
          await unchecked.sql.get('SELECT 1');
        }),
      ).rejects.toThrow(/waited 50 ms .*root handle inside a transaction/);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await unchecked.sql.get('SELECT name FROM t WHERE id = 7')).toBeUndefined();
      // A query that merely waits for another flow's transaction is served once it commits.
      const slow = unchecked.sql.transaction(async (tx) => {
        await tx.run("INSERT INTO t (id, name) VALUES (8, 'committed')");
        await tick();
      });
      expect(await unchecked.sql.get('SELECT name FROM t WHERE id = 8')).toEqual({ name: 'committed' });
      await slow;
    } finally {
      await unchecked.close();
    }
  });

  it('refuses a transaction handle used after its end', async () => {
    let kept: Parameters<Parameters<Storage['sql']['transaction']>[0]>[0] | undefined;
    await storage.sql.transaction(async (tx) => {
      kept = tx;
    });
    await expect(kept!.get('SELECT 1')).rejects.toThrow(/after its transaction ended/);
  });

  it('reports a unique violation as a constraint error', async () => {
    await storage.sql.run("INSERT INTO t (id, name) VALUES (1, 'x')");
    const err = await storage.sql.run("INSERT INTO t (id, name) VALUES (2, 'x')").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageConstraintError);
    expect((err as StorageConstraintError).constraint).toBe('unique');
  });
});

describe('PostgreSQL placeholders', () => {
  it('rewrites ? and @name to $n, outside quotes and comments', () => {
    expect(rewritePlaceholders("SELECT '?', \"@x\" FROM t WHERE a = ? AND b = ? -- ? @c\n").text).toBe(
      "SELECT '?', \"@x\" FROM t WHERE a = $1 AND b = $2 -- ? @c\n",
    );
    const named = rewritePlaceholders('UPDATE t SET a = @a, b = @b WHERE a = @a');
    expect(named.text).toBe('UPDATE t SET a = $1, b = $2 WHERE a = $1');
    expect(named.names).toEqual(['a', 'b']);
    expect(() => rewritePlaceholders('SELECT ? , @a')).toThrow(/mixes/);
  });
});

describe('migrations', () => {
  it('have the same versions in both dialects from the PostgreSQL baseline on', () => {
    const sqlite = migrationsOf('sqlite').map((m) => m.version);
    const postgres = migrationsOf('postgres').map((m) => m.version);
    expect(postgres.length).toBeGreaterThan(0);
    expect(sqlite.filter((v) => v >= (postgres[0] as number))).toEqual(postgres);
  });

  it('refuse a database newer than the code', () => {
    const known = migrationsOf('sqlite');
    expect(() => assertKnownSchema([1, 2, (known.at(-1)?.version ?? 0) + 1], known, '/data/driveway.sqlite')).toThrow(SchemaTooNewError);
    expect(() => assertKnownSchema([1, 2], known, 'x')).not.toThrow();
  });
});

const postgres = requirePostgres();

postgres.describe('the PostgreSQL dialect', () => {
  let storage: PostgresStorage;
  let url: string;

  beforeAll(async () => {
    url = await freshPostgresDatabase();
    storage = new PostgresStorage(url);
    await storage.sql.exec('CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT NOT NULL UNIQUE, n BIGINT NOT NULL DEFAULT 0)');
  });
  afterAll(async () => {
    await storage?.close();
  });
  beforeEach(async () => {
    await storage.sql.run('DELETE FROM t');
  });

  it('binds positional and named parameters and reads BIGINT back as numbers', async () => {
    await storage.sql.run('INSERT INTO t (id, name) VALUES (?, ?)', [1, 'a']);
    await storage.sql.run('INSERT INTO t (id, name, n) VALUES (@id, @name, @big)', { id: 2, name: 'b', big: 2 ** 52 });
    expect(await storage.sql.all('SELECT id, name, n FROM t ORDER BY id')).toEqual([
      { id: 1, name: 'a', n: 0 },
      { id: 2, name: 'b', n: 2 ** 52 },
    ]);
    expect(await storage.sql.get('SELECT COUNT(*) AS c, SUM(n) AS s FROM t')).toEqual({ c: 2, s: 2 ** 52 });
  });

  it('commits, rolls back, and nests as a savepoint', async () => {
    await storage.sql.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id, name) VALUES (1, 'outer')");
      await expect(
        tx.transaction(async (inner) => {
          await inner.run("INSERT INTO t (id, name) VALUES (2, 'inner')");
          throw new Error('inner refused');
        }),
      ).rejects.toThrow('inner refused');
    });
    await expect(
      storage.sql.transaction(async (tx) => {
        await tx.run("INSERT INTO t (id, name) VALUES (3, 'gone')");
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await storage.sql.all('SELECT name FROM t')).toEqual([{ name: 'outer' }]);
  });

  it('reports a unique violation as a constraint error', async () => {
    await storage.sql.run("INSERT INTO t (id, name) VALUES (1, 'x')");
    const err = await storage.sql.run("INSERT INTO t (id, name) VALUES (2, 'x')").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageConstraintError);
    expect((err as StorageConstraintError).constraint).toBe('unique');
  });

  it('keeps check-then-write rules between instances: of parallel read-modify-writes from two pools none is lost', async () => {
    const other = new PostgresStorage(url);
    try {
      await storage.sql.run("INSERT INTO t (id, name, n) VALUES (1, 'counter', 0)");
      const bump = (s: PostgresStorage) =>
        s.sql.transaction(async (tx) => {
          const row = await tx.get<{ n: number }>('SELECT n FROM t WHERE id = 1');
          await tick();
          await tx.run('UPDATE t SET n = ? WHERE id = 1', [(row?.n ?? 0) + 1]);
        });
      await Promise.all(Array.from({ length: 10 }, (_, i) => bump(i % 2 === 0 ? storage : other)));
      expect(await storage.sql.get('SELECT n FROM t WHERE id = 1')).toEqual({ n: 10 });
    } finally {
      await other.close();
    }
  });

  it('runs transactions naming one key one after the other across pools, so none is spent on a conflict; without the key 30 parallel ones still all commit', async () => {
    const other = new PostgresStorage(url);
    try {
      await storage.sql.run("INSERT INTO t (id, name, n) VALUES (1, 'usage', 0)");
      const run = async (serializeOn: string[] | undefined): Promise<number> => {
        let attempts = 0;
        const bump = (s: PostgresStorage) =>
          s.sql.transaction(
            async (tx) => {
              attempts += 1;
              await tx.run('UPDATE t SET n = n + 1 WHERE id = 1');
              await tick();
              await tx.get('SELECT n FROM t WHERE id = 1');
            },
            serializeOn ? { serializeOn } : undefined,
          );
        await Promise.all(Array.from({ length: 30 }, (_, i) => bump(i % 2 === 0 ? storage : other)));
        return attempts;
      };
      expect(await run(['writer:u1'])).toBe(30);
      expect(await storage.sql.get('SELECT n FROM t WHERE id = 1')).toEqual({ n: 30 });
      // The retry lane lets every conflicting one through in the end (each at least once).
      expect(await run(undefined)).toBeGreaterThanOrEqual(30);
      expect(await storage.sql.get('SELECT n FROM t WHERE id = 1')).toEqual({ n: 60 });
      // Keys are released: a later transaction naming the key gets it at once.
      await other.sql.transaction(async (tx) => void (await tx.run('UPDATE t SET n = 0 WHERE id = 1')), { serializeOn: ['writer:u1'] });
      const held = await storage.sql.get<{ c: number }>("SELECT COUNT(*) AS c FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())");
      expect(held).toEqual({ c: 0 });
    } finally {
      await other.close();
    }
  });

  it('migrates a fresh database to the same version as SQLite, and refuses one newer than the code', async () => {
    const fresh = new PostgresStorage(await freshPostgresDatabase());
    try {
      await migrate(fresh, 'test database');
      const newest = migrationsOf('sqlite').at(-1)?.version;
      expect(await fresh.schemaVersion()).toBe(newest);
      expect(await migrate(fresh, 'test database')).toEqual([]);
      await fresh.sql.run("INSERT INTO schema_migrations (version, name, applied) VALUES (999, '999-future.sql', 0)");
      await expect(migrate(fresh, 'test database')).rejects.toThrow(SchemaTooNewError);
    } finally {
      await fresh.close();
    }
  });

  it('applies each migration once when several migrators start together on a fresh database', async () => {
    const url = await freshPostgresDatabase();
    // As app.ts migrates: a pool of one connection each.
    const migrators = Array.from({ length: 4 }, () => new PostgresStorage(url, { maxConnections: 1, queryTimeoutMs: 0 }));
    try {
      const applied = await Promise.all(migrators.map((storage) => migrate(storage, 'test database')));
      const known = migrationsOf('postgres').map((m) => m.version);
      expect(applied.flat().sort((a, b) => a - b)).toEqual(known);
      expect(applied.filter((versions) => versions.length > 0)).toHaveLength(1);
      expect(await migrators[0]?.sql.all('SELECT version FROM schema_migrations ORDER BY version')).toEqual(known.map((version) => ({ version })));
    } finally {
      await Promise.all(migrators.map((storage) => storage.close()));
    }
  });

  it('holds an exclusive lock on one connection for the whole work, and frees it after a failure', async () => {
    const url = await freshPostgresDatabase();
    const a = new PostgresStorage(url, { maxConnections: 2 });
    const b = new PostgresStorage(url, { maxConnections: 2 });
    try {
      await a.sql.exec('CREATE TABLE turns (n INTEGER NOT NULL, who TEXT NOT NULL)');
      const order: string[] = [];
      // Each holder reads, waits, then writes the next number: interleaved, both would write 1.
      const turn = (storage: PostgresStorage, who: string) =>
        storage.exclusively(4242, async (sql) => {
          const row = await sql.get<{ n: number | null }>('SELECT MAX(n) AS n FROM turns');
          await new Promise((resolve) => setTimeout(resolve, 50));
          await sql.transaction(async (tx) => tx.run('INSERT INTO turns (n, who) VALUES (?, ?)', [(row?.n ?? 0) + 1, who]));
          order.push(who);
        });
      await Promise.all([turn(a, 'a'), turn(b, 'b'), turn(a, 'a2')]);
      expect((await a.sql.all<{ n: number }>('SELECT n FROM turns ORDER BY n')).map((r) => r.n)).toEqual([1, 2, 3]);
      await expect(b.exclusively(4242, async () => Promise.reject(new Error('work failed')))).rejects.toThrow('work failed');
      // Released: a plain try-lock from another connection gets it.
      expect(await a.sql.get('SELECT pg_try_advisory_lock(4242) AS got')).toEqual({ got: true });
      expect(order.sort()).toEqual(['a', 'a2', 'b']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('says the database is unavailable when it cannot be reached', async () => {
    const nowhere = new PostgresStorage('postgres://driveway:x@127.0.0.1:1/driveway', { connectTimeoutMs: 1000 });
    try {
      await expect(nowhere.sql.get('SELECT 1')).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(nowhere.sql.transaction(async (tx) => tx.get('SELECT 1'))).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await nowhere.close();
    }
  });
});
