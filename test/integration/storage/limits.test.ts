/**
 * The login limiter in the database (storage/limits.ts): the LoginLimiter contract on SQLite (a
 * store's own database) and on PostgreSQL, the bound on its rows, and two instances (two pools
 * over one PostgreSQL database) counting one burst of parallel attempts together.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { SqlLoginLimiter } from '../../../src/store/storage/limits.js';
import { migrate } from '../../../src/store/storage/migrations.js';
import type { Storage } from '../../../src/store/storage/sql.js';
import { describeLoginLimiter } from '../../contract/login-limiter.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

function sqliteStorage(): { storage: Storage; close(): Promise<void> } {
  const tmp = makeTmpDir('driveway-limits-');
  const storage = new SqliteStorage(openDatabase(path.join(tmp.dir, 'driveway.sqlite')));
  return {
    storage,
    async close() {
      await storage.close();
      tmp.remove();
    },
  };
}

describeLoginLimiter('SQLite (the store database)', () => {
  let db: ReturnType<typeof sqliteStorage> | undefined;
  return {
    async open(options) {
      db = sqliteStorage();
      return new SqlLoginLimiter(db.storage.sql, { ...options, scope: 'login' });
    },
    close: async () => db?.close(),
  };
});

const postgres = requirePostgres();

/** One migrated database for the file; each opened pool starts from an empty limit_marks. */
const pgState: { url?: string; storages: PostgresStorage[] } = { storages: [] };
async function postgresStorage(options: { empty?: boolean } = {}): Promise<PostgresStorage> {
  pgState.url ??= await freshPostgresDatabase();
  const storage = new PostgresStorage(pgState.url, { maxConnections: 8 });
  pgState.storages.push(storage);
  await migrate(storage, 'the test database');
  if (options.empty !== false) await storage.sql.exec('TRUNCATE limit_marks');
  return storage;
}
afterAll(async () => {
  for (const storage of pgState.storages.splice(0)) await storage.close();
});

if (postgres.isAvailable) {
  describeLoginLimiter('PostgreSQL', () => {
    let storage: PostgresStorage | undefined;
    return {
      async open(options) {
        storage = await postgresStorage();
        return new SqlLoginLimiter(storage.sql, { ...options, scope: 'login' });
      },
      async close() {
        pgState.storages = pgState.storages.filter((s) => s !== storage);
        await storage?.close();
      },
    };
  });
}

describe('SqlLoginLimiter on SQLite: the bound', () => {
  it('sweeps rows older than the window, and keeps at most maxKeys × maxFailures rows per counter', async () => {
    const db = sqliteStorage();
    try {
      const clock = new ManualClock();
      clock.freeze();
      const limits = new SqlLoginLimiter(db.storage.sql, { clock, maxFailures: 3, windowSec: 60, maxKeys: 10, scope: 'login', sweepEvery: 20 });
      for (let i = 0; i < 20; i += 1) await (await limits.reserve(`old${i}`, `10.0.${i}.1`)).allowed;
      expect(await limits.trackedRows()).toBe(40); // an account row and a source row each
      clock.advance(61_000);
      for (let i = 0; i < 20; i += 1) {
        clock.advance(1);
        const r = await limits.reserve(`new${i}`, `10.1.${i}.1`);
        if (r.allowed) await r.attempt.failed();
      }
      // The sweep after the 40th reserve dropped the stale ones and cut each counter to 30 rows.
      expect(await limits.trackedRows()).toBeLessThanOrEqual(60);
      const counted = await db.storage.sql.all<{ scope: string; n: number }>('SELECT scope, COUNT(*) AS n FROM limit_marks GROUP BY scope ORDER BY scope');
      expect(counted).toEqual([
        { scope: 'login:account', n: 20 },
        { scope: 'login:source', n: 20 },
      ]);
      for (let i = 0; i < 80; i += 1) {
        clock.advance(1);
        const r = await limits.reserve(`flood${i}`, `10.2.${i}.1`);
        if (r.allowed) await r.attempt.failed();
      }
      for (const row of await db.storage.sql.all<{ n: number }>('SELECT COUNT(*) AS n FROM limit_marks GROUP BY scope')) {
        expect(row.n).toBeLessThanOrEqual(30 + 20);
      }
      // The newest keys are still counted.
      for (let i = 0; i < 2; i += 1) await (await limits.reserve('flood79', '10.9.9.9')).allowed;
      expect((await limits.reserve('flood79', '10.9.9.9')).allowed).toBe(false);
    } finally {
      await db.close();
    }
  });
});

postgres.describe('SqlLoginLimiter on PostgreSQL: two instances', () => {
  it('50 parallel attempts on one account through two pools: exactly maxFailures are let through to be evaluated', async () => {
    const one = await postgresStorage();
    const two = await postgresStorage({ empty: false });
    const clock = new ManualClock();
    const options = { clock, maxFailures: 5, windowSec: 900, scope: 'login' };
    const instances = [new SqlLoginLimiter(one.sql, options), new SqlLoginLimiter(two.sql, options)];
    const reservations = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (instances[i % 2] as SqlLoginLimiter).reserve('Victim@x.org', `10.0.${i}.1`)),
    );
    const allowed = reservations.filter((r) => r.allowed);
    expect(allowed).toHaveLength(5);
    expect(reservations.filter((r) => !r.allowed).every((r) => !r.allowed && r.retryAfterSec > 0)).toBe(true);
    // Each failure settled through either instance keeps counting on both.
    for (const r of allowed) if (r.allowed) await r.attempt.failed();
    expect((await instances[0]!.reserve('victim@x.org', '10.9.0.1')).allowed).toBe(false);
    expect((await instances[1]!.reserve('victim@x.org', '10.9.0.2')).allowed).toBe(false);
    // One address across many accounts, in parallel through both: its 5 too.
    const bySource = await Promise.all(Array.from({ length: 30 }, (_, i) => instances[i % 2]!.reserve(`user${i}@x.org`, '192.0.2.7')));
    expect(bySource.filter((r) => r.allowed)).toHaveLength(5);
  });
});
