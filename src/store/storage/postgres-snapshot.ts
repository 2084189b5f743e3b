/**
 * A PostgreSQL store's tables as a SQLite file of the storage layer's SQLite schema, for
 * `driveway backup` (store/backup.ts): the reverse of `driveway migrate`, so a backup has one
 * shape whatever the source and restores through one path.
 *
 * Consistency: every table is read in ONE transaction, REPEATABLE READ READ ONLY, so the file is
 * the store at one instant while the instances keep writing. The SQLite side is made by the
 * SQLite migrations (same schema version required), emptied of what they seed, and filled with
 * foreign keys off and the schema's triggers dropped meanwhile (they keep counters, which are
 * copied as they are) and recreated after. Values go over as the migrator takes them back:
 * integers as their decimal text (INTEGER affinity stores them as integers), bytea as bytes,
 * json/jsonb as their PostgreSQL text. Row counts are compared table by table at the end.
 */
import Database from 'better-sqlite3';
import type pg from 'pg';
import { preparePrivateDatabaseFile } from '../../common/private-files.js';
import { migrate } from './dialects/sqlite-open.js';
import { NOT_COPIED, REBUILD_NAME_INDEX } from './embedded-copy.js';

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const PAGE = 2000;

export interface SnapshotResult {
  schemaVersion: number;
  rows: number;
}

export async function snapshotPostgres(pool: pg.Pool, file: string): Promise<SnapshotResult> {
  // The owner's only, whatever the umask: it holds password hashes and signing keys.
  preparePrivateDatabaseFile(file);
  const db = new Database(file);
  const client = await pool.connect();
  try {
    migrate(db, file);
    const schemaVersion = (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v;
    db.pragma('foreign_keys = OFF');
    const triggers = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND sql IS NOT NULL").all() as Array<{ name: string; sql: string }>;
    for (const t of triggers) db.exec(`DROP TRIGGER ${quote(t.name)}`);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>)
      .map((r) => r.name)
      .filter((name) => !NOT_COPIED.has(name));
    for (const name of tables) db.exec(`DELETE FROM ${quote(name)}`);

    let rows = 0;
    let fileIdsIssued = '0';
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      const { rows: pgVersion } = await client.query<{ v: number }>('SELECT MAX(version)::int AS v FROM schema_migrations');
      if (pgVersion[0]?.v !== schemaVersion) {
        throw new Error(`the database has schema version ${String(pgVersion[0]?.v)}, this driveway's SQLite schema is ${schemaVersion}: back it up with the driveway version that serves it`);
      }
      const { rows: columns } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
        `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()`,
      );
      for (const name of tables) {
        const mine = (db.prepare(`PRAGMA table_info(${quote(name)})`).all() as Array<{ name: string }>).map((c) => c.name);
        const theirs = new Map(columns.filter((c) => c.table_name === name).map((c) => [c.column_name, c.data_type]));
        const missing = mine.filter((c) => !theirs.has(c));
        if (missing.length > 0) throw new Error(`the PostgreSQL table ${name} lacks the column(s) ${missing.join(', ')}`);
        const list = mine.map((c) => (theirs.get(c) === 'json' || theirs.get(c) === 'jsonb' ? `${quote(c)}::text` : quote(c))).join(', ');
        const insert = db.prepare(`INSERT INTO ${quote(name)} (${mine.map(quote).join(', ')}) VALUES (${mine.map(() => '?').join(', ')})`);
        const load = db.transaction((batch: unknown[][]) => {
          for (const row of batch) insert.run(row.map(toSqlite));
        });
        let after = '(0,0)';
        let copied = 0;
        for (;;) {
          const page = await client.query({ text: `SELECT ctid::text AS __ctid, ${list} FROM ${quote(name)} WHERE ctid > $1::tid ORDER BY ctid LIMIT $2`, values: [after, PAGE], rowMode: 'array' });
          load(page.rows.map((row: unknown[]) => row.slice(1)));
          copied += page.rows.length;
          if (page.rows.length < PAGE) break;
          after = (page.rows.at(-1) as unknown[])[0] as string;
        }
        const { rows: counted } = await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${quote(name)}`);
        if (Number(counted[0]?.n) !== copied) throw new Error(`${name}: ${counted[0]?.n} rows in the database, ${copied} copied`);
        rows += copied;
      }
      // The numeric file ids given so far (migration 025), deleted nodes' included: never given twice.
      const { rows: issued } = await client.query<{ last: string }>(
        "SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence('nodes', 'file_id')::regclass), 0)::text AS last",
      );
      fileIdsIssued = issued[0]?.last ?? '0';
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    for (const t of triggers) db.exec(t.sql);
    db.exec(REBUILD_NAME_INDEX);
    db.prepare('UPDATE node_file_id_counter SET last = MAX(CAST(? AS INTEGER), (SELECT COALESCE(MAX(file_id), 0) FROM nodes))').run(fileIdsIssued);
    const broken = db.prepare('PRAGMA foreign_key_check').all();
    if (broken.length > 0) throw new Error(`the copy breaks ${broken.length} foreign key(s), e.g. ${JSON.stringify(broken[0])}`);
    db.pragma('journal_mode = DELETE');
    return { schemaVersion, rows };
  } finally {
    client.release();
    db.close();
  }
}

/** A value as pg read it, as SQLite stores it. */
function toSqlite(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.getTime();
  return value;
}
