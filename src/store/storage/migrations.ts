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
 * The lock migrators queue on (Storage.exclusively; on PostgreSQL an advisory key). The number
 * earlier releases took per migration transaction, so an older instance still starting waits
 * for a newer one's migrations too.
 */
export const MIGRATION_LOCK = 7241553;

/**
 * Applies what `storage` lacks; the versions applied here. Several instances starting at once
 * over PostgreSQL run this one after the other: the first takes the migration lock before it
 * touches anything (the CREATE TABLE of schema_migrations included: two of those at once collide
 * in PostgreSQL's catalogue) and holds it to the end; the next, once it has the lock, reads the
 * versions afresh and finds nothing left to do. Each migration is one transaction with its row.
 */
export async function migrate(storage: Storage, where: string): Promise<number[]> {
  const known = migrationsOf(storage.dialect);
  const versions = async (sql: Sql) => (await sql.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version);
  const run = async (sql: Sql): Promise<number[]> => {
    await sql.exec(CREATE_TABLE);
    const applied = await versions(sql);
    assertKnownSchema(applied, known, where);
    const appliedNow: number[] = [];
    for (const migration of known) {
      if (applied.includes(migration.version)) continue;
      await sql.transaction(async (tx) => {
        await tx.exec(migration.sql);
        await tx.run('INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)', [migration.version, migration.name, Date.now()]);
      });
      appliedNow.push(migration.version);
    }
    return appliedNow;
  };
  return storage.exclusively ? storage.exclusively(MIGRATION_LOCK, run) : run(storage.sql);
}
