/**
 * The bridge's lock and property repositories on the storage layer, over the store's own SQLite
 * database (every migration, 012 included, as `npm start` opens it) and over PostgreSQL: the
 * contract suites of test/contract/, and two instances (two pools) racing conflicting LOCKs.
 *
 * PostgreSQL is a database of the run's throwaway cluster (test/helpers/postgres.ts): without
 * PostgreSQL installed those suites are skipped with a warning, and fail when CI=true.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlLockRepository } from '../../../src/store/storage/dav-locks.js';
import { LockError, LockStore } from '../../../src/bridge/locks.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { migrate } from '../../../src/store/storage/migrations.js';
import type { Sql } from '../../../src/store/storage/sql.js';
import { describeLockRepository, request } from '../../contract/lock-repository.js';
import { describePropertyRepository } from '../../contract/property-repository.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

/** A store database in a temp folder, as the store opens it; the handle the bridge gets from it. */
function storeDatabase(): { sql: Sql; close(): Promise<void> } {
  const tmp = makeTmpDir('driveway-bridgestate-');
  const storage = new SqliteStorage(openDatabase(path.join(tmp.dir, 'driveway.sqlite')));
  return {
    sql: storage.sql,
    async close() {
      await storage.close();
      tmp.remove();
    },
  };
}

describeLockRepository('SQLite (the store database)', () => {
  let db: ReturnType<typeof storeDatabase> | undefined;
  return {
    async open(budgets) {
      db = storeDatabase();
      return new SqlLockRepository(db.sql, budgets);
    },
    close: async () => db?.close(),
  };
});

describePropertyRepository('SQLite (the store database)', () => {
  let db: ReturnType<typeof storeDatabase> | undefined;
  return {
    async open() {
      db = storeDatabase();
      return db.sql;
    },
    close: async () => db?.close(),
  };
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a database of the run's throwaway cluster (test/helpers/postgres.ts).

const postgres = requirePostgres();

/** One migrated database for the file; each test starts from empty dav_* tables. */
const pgState: { storages: PostgresStorage[]; url?: string } = { storages: [] };

async function postgresStorage(): Promise<PostgresStorage> {
  pgState.url ??= await freshPostgresDatabase();
  const storage = new PostgresStorage(pgState.url, { maxConnections: 8 });
  pgState.storages.push(storage);
  await migrate(storage, 'the test database');
  // TRUNCATE fires no row trigger: the usage tables are emptied with the rest.
  await storage.sql.exec('TRUNCATE dav_locks, dav_lock_members, dav_lock_usage, dav_properties, dav_property_usage, dav_client_mtimes');
  return storage;
}

/** Resolves once the storage's change feed listens (until then a repository asks the database). */
async function listening(storage: PostgresStorage): Promise<void> {
  const stop = storage.changes.subscribe(() => undefined);
  try {
    for (let i = 0; !storage.changes.listening; i++) {
      if (i > 200) throw new Error('the change feed did not start listening within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    stop();
  }
}

async function release(storage: PostgresStorage | undefined): Promise<void> {
  if (!storage) return;
  pgState.storages = pgState.storages.filter((s) => s !== storage);
  await storage.close();
}

postgres.describe('on PostgreSQL', () => {
  afterAll(async () => {
    await Promise.all(pgState.storages.map((s) => s.close()));
  });

  describeLockRepository('PostgreSQL', () => {
    let storage: PostgresStorage | undefined;
    return {
      async open(budgets) {
        storage = await postgresStorage();
        return new SqlLockRepository(storage.sql, budgets);
      },
      close: async () => release(storage),
    };
  });

  describeLockRepository('PostgreSQL, lookups answered from memory while the change feed listens', () => {
    let storage: PostgresStorage | undefined;
    return {
      async open(budgets) {
        storage = await postgresStorage();
        const repository = new SqlLockRepository(storage.sql, budgets, storage.changes);
        await listening(storage);
        return repository;
      },
      close: async () => release(storage),
    };
  });

  describePropertyRepository('PostgreSQL', () => {
    let storage: PostgresStorage | undefined;
    return {
      async open() {
        storage = await postgresStorage();
        return storage.sql;
      },
      close: async () => release(storage),
    };
  });

  describe('two instances (two pools) over one database', () => {
    let one: PostgresStorage;
    let two: PostgresStorage;
    beforeAll(async () => {
      one = await postgresStorage();
      two = new PostgresStorage(pgState.url as string, { maxConnections: 8 });
      pgState.storages.push(two);
    });

    it.each([
      ['asking the database every time', false],
      ['each answering lookups from memory while its change feed listens', true],
    ])('grants exactly one of the conflicting LOCKs both instances start at once, again and again (%s)', async (_how, remembering) => {
      const repository = (storage: PostgresStorage): SqlLockRepository => new SqlLockRepository(storage.sql, {}, remembering ? storage.changes : undefined);
      const instances = [new LockStore({ repository: repository(one) }), new LockStore({ repository: repository(two) })];
      if (remembering) await Promise.all([listening(one), listening(two)]);
      // What a DAV request does first (bridge/server.ts): let every change committed elsewhere arrive.
      const settled = async (): Promise<void> => {
        if (remembering) await Promise.all([one.changes.settled(), two.changes.settled()]);
      };
      for (let round = 0; round < 10; round++) {
        const file = ['home', 'docs', `race-${round}`];
        // Each instance: an exclusive lock of the file, and a depth-infinity lock of its folder.
        const outcomes = await Promise.allSettled(
          instances.flatMap((locks, i) => [
            locks.lock(request(file, { principal: `user${i}` })),
            locks.lock(request(['home', 'docs'], { principal: `user${i}`, depth: 'infinity' })),
          ]),
        );
        const granted = outcomes.filter((o) => o.status === 'fulfilled');
        expect(granted, `round ${round}`).toHaveLength(1);
        for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as LockError).kind).toBe('conflict');
        // What one instance granted, the other sees and refuses to write past.
        const taken = (granted[0] as PromiseFulfilledResult<{ token: string; chain: readonly string[] }>).value;
        await settled();
        for (const locks of instances) {
          expect((await locks.locksCovering(file)).map((l) => l.token)).toEqual([taken.token]);
          expect(await locks.canModify(file, [])).toBe(false);
        }
        await instances[1]?.unlock(taken.token, taken.chain);
        expect(await instances[0]?.count()).toBe(0);
        await settled();
        for (const locks of instances) expect(await locks.canModify(file, [])).toBe(true);
      }
    });

    it('answers lookups from memory while nothing changes, and sees another instance\'s LOCK and UNLOCK once its feed settled', async () => {
      const reads = { n: 0 };
      const counted: Sql = {
        ...one.sql,
        get: (text, params) => (reads.n++, one.sql.get(text, params)),
        all: (text, params) => (reads.n++, one.sql.all(text, params)),
      };
      const here = new SqlLockRepository(counted, {}, one.changes);
      const there = new SqlLockRepository(two.sql, {}, two.changes);
      await Promise.all([listening(one), listening(two)]);
      const now = Date.now();
      const file = ['home', 'memo', 'a.txt'];
      const fresh = ['home', 'memo', 'new-file.txt'];
      expect(await here.covering(file, now)).toEqual([]);
      const first = reads.n;
      // Nothing locked anywhere: every lookup, a chain never asked about included, from memory.
      expect(await here.covering(file, now)).toEqual([]);
      expect(await here.covering(fresh, now)).toEqual([]);
      expect(await here.childrenOf('memo', now)).toEqual([]);
      expect(reads.n).toBe(first);

      const lock = { ...request(['home', 'memo'], { depth: 'infinity' }), token: 'opaquelocktoken:memo', resourceId: 'memo', expiresAtMs: now + 60_000 };
      await there.insert(lock, now);
      await one.changes.settled();
      expect((await here.covering(fresh, now)).map((l) => l.token)).toEqual([lock.token]);
      expect(reads.n).toBeGreaterThan(first);
      const afterLock = reads.n;
      expect((await here.covering(fresh, now)).map((l) => l.token)).toEqual([lock.token]);
      expect(reads.n).toBe(afterLock);
      // A lease ends by itself in memory as in the table.
      expect(await here.covering(fresh, now + 61_000)).toEqual([]);

      await there.remove(lock.token, now);
      await one.changes.settled();
      expect(await here.covering(fresh, now)).toEqual([]);
    });
  });
});
