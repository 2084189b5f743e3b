/**
 * Pools over one fresh, migrated database of the run's PostgreSQL cluster, for the bridge-state
 * suites that race two instances (two pools) over one table: each new pool empties `tables`
 * first; every pool is closed after the calling describe.
 */
import { afterAll } from 'vitest';
import { PostgresStorage } from '../../src/store/storage/dialects/postgres.js';
import { migrate } from '../../src/store/storage/migrations.js';
import { freshPostgresDatabase } from './postgres.js';

export function migratedPostgresPools(tables: string): () => Promise<PostgresStorage> {
  const storages: PostgresStorage[] = [];
  let url: string | undefined;
  afterAll(async () => {
    await Promise.all(storages.map((s) => s.close()));
  });
  return async () => {
    url ??= await freshPostgresDatabase();
    const storage = new PostgresStorage(url, { maxConnections: 8 });
    storages.push(storage);
    await migrate(storage, 'the test database');
    await storage.sql.exec(`TRUNCATE ${tables}`);
    return storage;
  };
}
