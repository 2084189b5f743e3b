/**
 * Versioned schema migrations, one folder per dialect (`migrations/sqlite/NNN-name.sql`,
 * `migrations/postgres/NNN-name.sql`), applied in order at start, each in its own transaction and
 * recorded in `schema_migrations`. A version number means the same schema in both dialects; the
 * PostgreSQL folder starts with the schema SQLite reached by then, in one file. A database that
 * records a version newer than any file this code has is refused: an older driveway must not
 * write a schema it does not know (docs/scale-out.md "Upgrades").
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Dialect, Sql, Storage } from './sql.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The dialect's migrations, in version order. */
export function migrationsOf(dialect: Dialect): Migration[] {
  const dir = path.join(ROOT, dialect);
  return readdirSync(dir)
    .filter((f) => /^\d{3}-[\w-]+\.sql$/.test(f))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 3)), name: file, sql: readFileSync(path.join(dir, file), 'utf8') }));
}

export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}

/** Throws when the database holds a schema newer than the newest migration of this code. */
export function assertKnownSchema(applied: Iterable<number>, known: readonly Migration[], where: string): void {
  const newest = known.at(-1)?.version ?? 0;
  const highest = Math.max(0, ...applied);
  if (highest > newest) {
    throw new SchemaTooNewError(
      `${where} holds schema version ${highest}, newer than this driveway knows (${newest}): run the driveway version that wrote it, or a newer one`,
    );
  }
}

const CREATE_TABLE = 'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)';

/**
 * Applies what `storage` lacks. Several instances starting at once over PostgreSQL queue on an
 * advisory lock, and each migration re-checks that nobody applied it meanwhile.
 */
export async function migrate(storage: Storage, where: string): Promise<number[]> {
  const known = migrationsOf(storage.dialect);
  await storage.sql.exec(CREATE_TABLE);
  const appliedNow: number[] = [];
  const versions = async (sql: Sql) => (await sql.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version);
  assertKnownSchema(await versions(storage.sql), known, where);
  for (const migration of known) {
    const done = await storage.sql.transaction(async (tx) => {
      if (tx.dialect === 'postgres') await tx.run('SELECT pg_advisory_xact_lock(7241553)');
      const applied = await versions(tx);
      assertKnownSchema(applied, known, where);
      if (applied.includes(migration.version)) return false;
      await tx.exec(migration.sql);
      await tx.run('INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)', [migration.version, migration.name, Date.now()]);
      return true;
    });
    if (done) appliedNow.push(migration.version);
  }
  return appliedNow;
}
