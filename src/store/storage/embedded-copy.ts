/**
 * The SQL of `driveway migrate` (store/migrate-embedded.ts): reading an embedded store's SQLite
 * file, writing its rows into a PostgreSQL database that the storage layer's migrations made,
 * recording progress there, and the checksums that prove both hold the same rows. Owns no
 * decision about when to copy what: the migrator does.
 *
 * Source: the SQLite file opened on its own connection, only read (the migrator holds the data
 * directory's lock, so nothing else writes it). Integers are read as BigInt (better-sqlite3
 * safeIntegers), so no value is rounded on its way. Rows are read in batches after a cursor: the
 * rowid; the primary key of a WITHOUT ROWID table (the WebDAV state of migration 012); or, for a
 * table whose rows refer to rows of the same table (nodes.parent_uuid), a position in a
 * parents-first order computed once per run into a TEMP table of the source connection.
 *
 * Target: one transaction per batch inserts the rows and moves the table's cursor in
 * `migration_progress`, so a batch is either in with its cursor or not at all, whatever
 * interrupts the run. Tables are filled in foreign-key order (read from PostgreSQL's catalogue);
 * user triggers (budget counters kept by the schema) are disabled inside the batch's transaction,
 * so the copied counters are the source's, not counted twice. Identity columns are inserted with
 * OVERRIDING SYSTEM VALUE and their sequence set past the highest value (and SQLite's
 * AUTOINCREMENT high-water mark) at the end.
 *
 * Checksum of a table: the rows' count and the sum modulo 2^128 of a SHA-256 of each row, each
 * value in its PostgreSQL text form (integers in decimal, bytea as `\x` and hex, text as is, NULL
 * as null), columns in name order. A sum does not depend on the order rows are read in, and
 * unlike a XOR two equal rows do not cancel out.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import type pg from 'pg';
import type { Sql } from './sql.js';

/** The FTS5 table of migration 032 and the shadow tables SQLite keeps for it. */
export const NAME_INDEX_TABLES = ['node_names', 'node_names_data', 'node_names_idx', 'node_names_content', 'node_names_docsize', 'node_names_config'];
/** Fills the name index from `nodes` again (after a load with the triggers off). */
export const REBUILD_NAME_INDEX = "DELETE FROM node_names; INSERT INTO node_names (rowid, name) SELECT file_id, name FROM nodes WHERE file_id IS NOT NULL";

/** Tables never copied: the migrations' own record, and state that belongs to one deployment. */
export const NOT_COPIED = new Set([
  'schema_migrations',
  // Intents of uploads and deletes of the S3 backend, about objects of the deployment that
  // wrote them; the local backend of an embedded store writes none.
  'blob_intents',
  // Where this deployment's bucket holds adopted blobs (chunked uploads on S3): a copy reads
  // every blob through the backend and writes it at its content address, so the target has none.
  'blob_objects',
  // SQLite keeps one-shot upload tokens in a TEMP table; PostgreSQL's UNLOGGED one starts empty.
  'upload_tokens',
  // Attempts of the database limiters (PostgreSQL only; an embedded store counts in memory).
  'limit_marks',
  'migration_progress',
  // SQLite's counter of numeric file ids (migration 025): PostgreSQL numbers nodes by a
  // sequence, set past the counter at the end of a copy (autoincrementMark), and the reverse
  // copy (postgres-snapshot.ts) sets the counter from the sequence.
  'node_file_id_counter',
  // SQLite's trigram index of names (migration 032: an FTS5 table and its shadow tables), made
  // from `nodes` by triggers; PostgreSQL indexes the column itself, and the reverse copy
  // (postgres-snapshot.ts) fills it again from the copied nodes.
  ...NAME_INDEX_TABLES,
]);


/** SQLite's counter of the numeric file ids given so far (migration 025): the high-water mark of `nodes`. */
export const FILE_ID_COUNTER = 'SELECT last FROM node_file_id_counter';

export const PROGRESS_TABLE = 'migration_progress';

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export interface TableDigest {
  rows: number;
  /** 32 hex digits. */
  digest: string;
}

const MOD = 1n << 128n;

class Digest {
  private sum = 0n;
  rows = 0;

  add(values: ReadonlyArray<string | null>): void {
    const hash = createHash('sha256').update(JSON.stringify(values)).digest();
    this.sum = (this.sum + BigInt(`0x${hash.subarray(0, 16).toString('hex')}`)) % MOD;
    this.rows += 1;
  }

  result(): TableDigest {
    return { rows: this.rows, digest: this.sum.toString(16).padStart(32, '0') };
  }
}

/** A SQLite value in the text form PostgreSQL gives it (`col::text`; bytea in hex). */
function canonical(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) ? value.toFixed(0) : String(value);
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  return String(value);
}

/** A value as better-sqlite3 read it, in the form pg sends (BigInt as its decimal text). */
function toTarget(value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

// ---------------------------------------------------------------------------------------------
// Source: the embedded store's SQLite file.

export interface SourceTable {
  name: string;
  columns: string[];
}

export interface SourceBatch {
  /** The cursor after this batch: where the next one starts (text, kept in migration_progress). */
  cursor: string;
  rows: unknown[][];
}

/** A primary-key cursor as text: each value tagged with its SQLite type, so it binds back exactly. */
function encodeKey(values: readonly unknown[]): string {
  return JSON.stringify(
    values.map((v) => (typeof v === 'bigint' ? ['i', v.toString()] : Buffer.isBuffer(v) ? ['b', v.toString('hex')] : typeof v === 'number' ? ['r', v] : v === null ? ['n'] : ['t', String(v)])),
  );
}

function decodeKey(text: string): unknown[] {
  return (JSON.parse(text) as Array<[string, unknown?]>).map(([tag, v]) =>
    tag === 'i' ? BigInt(v as string) : tag === 'b' ? Buffer.from(v as string, 'hex') : tag === 'n' ? null : v,
  );
}

/** How a table's batches are cut. */
type Paging = { kind: 'rowid' } | { kind: 'order'; temp: string } | { kind: 'key'; columns: string[] };

export interface SourceBlob {
  hash: string;
  sizeBytes: number;
}

export class EmbeddedSource {
  private readonly db: Database.Database;
  private readonly paging = new Map<string, Paging>();

  constructor(readonly file: string) {
    // Read-write only so that SQLite may recover a WAL a killed store left (a read-only
    // connection cannot); nothing here writes the main database.
    this.db = new Database(file, { fileMustExist: true, timeout: 0 });
  }

  schemaVersion(): number {
    const exists = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    if (!exists) return 0;
    return (this.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0;
  }

  /** What names this store across runs: the built-in administrator's UUID (made at its first start). */
  identity(): string {
    const row = this.db.prepare('SELECT uuid FROM users WHERE is_builtin = 1 ORDER BY created, uuid LIMIT 1').get() as { uuid: string } | undefined;
    const any = row ?? (this.db.prepare('SELECT uuid FROM users ORDER BY created, uuid LIMIT 1').get() as { uuid: string } | undefined);
    return any?.uuid ?? '';
  }

  tables(): SourceTable[] {
    const names = (this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>)
      .map((r) => r.name)
      .filter((name) => !NOT_COPIED.has(name));
    return names.map((name) => ({ name, columns: (this.db.prepare(`PRAGMA table_info(${quote(name)})`).all() as Array<{ name: string }>).map((c) => c.name) }));
  }

  count(table: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM ${quote(table)}`).get() as { n: number }).n;
  }

  /** SQLite's AUTOINCREMENT high-water mark of a table (0 when none). */
  autoincrementMark(table: string): bigint {
    if (table === 'nodes') {
      const counted = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'node_file_id_counter'").get();
      if (counted) return (this.db.prepare(FILE_ID_COUNTER).safeIntegers(true).get() as { last: bigint } | undefined)?.last ?? 0n;
    }
    const exists = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'").get();
    if (!exists) return 0n;
    const row = this.db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').safeIntegers(true).get(table) as { seq: bigint } | undefined;
    return row?.seq ?? 0n;
  }

  /**
   * Orders `table` parents first along `child -> parent` (one self-referencing column), into a
   * TEMP table. Throws when some rows cannot be reached from a root (a parent that does not
   * exist, or a cycle): PostgreSQL's foreign key would refuse them.
   */
  orderParentsFirst(table: string, child: string, parent: string): void {
    if (this.paging.get(table)?.kind === 'order') return;
    const order = `migrate_order_${table.replace(/\W/g, '_')}`;
    this.db.exec(`DROP TABLE IF EXISTS temp.${order}`);
    this.db.exec(`CREATE TEMP TABLE ${order} (seq INTEGER PRIMARY KEY, source_rowid INTEGER NOT NULL)`);
    const t = quote(table);
    this.db.exec(`
      WITH RECURSIVE walk(rid, key, depth) AS (
        SELECT rowid, ${quote(parent)}, 0 FROM ${t} WHERE ${quote(child)} IS NULL
        UNION ALL
        SELECT c.rowid, c.${quote(parent)}, walk.depth + 1 FROM ${t} c JOIN walk ON c.${quote(child)} = walk.key
      )
      INSERT INTO temp.${order} (source_rowid) SELECT rid FROM walk ORDER BY depth, rid`);
    const reached = (this.db.prepare(`SELECT COUNT(*) AS n FROM temp.${order}`).get() as { n: number }).n;
    const total = this.count(table);
    if (reached !== total) {
      throw new Error(`${total - reached} of the ${total} rows of ${table} refer through ${child} to a row that does not exist (or to themselves in a cycle): repair the source first`);
    }
    this.paging.set(table, { kind: 'order', temp: order });
  }

  /** By rowid, or by primary key for a WITHOUT ROWID table. */
  private pagingOf(table: string): Paging {
    let paging = this.paging.get(table);
    if (!paging) {
      const info = this.db.prepare('SELECT wr FROM pragma_table_list WHERE schema = ? AND name = ?').get('main', table) as { wr: number } | undefined;
      if (info?.wr) {
        const key = (this.db.prepare(`PRAGMA table_info(${quote(table)})`).all() as Array<{ name: string; pk: number }>)
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name);
        paging = { kind: 'key', columns: key };
      } else {
        paging = { kind: 'rowid' };
      }
      this.paging.set(table, paging);
    }
    return paging;
  }

  /** The next rows of `table` after `cursor` ('' for the start), at most `limit`, values in `columns` order. */
  batch(table: string, columns: readonly string[], cursor: string, limit: number): SourceBatch {
    const list = columns.map((c) => `t.${quote(c)}`).join(', ');
    const paging = this.pagingOf(table);
    if (paging.kind === 'key') {
      const key = paging.columns.map((c) => `t.${quote(c)}`);
      const after = cursor === '' ? [] : decodeKey(cursor);
      const where = cursor === '' ? '' : `WHERE (${key.join(', ')}) > (${key.map(() => '?').join(', ')})`;
      const rows = this.db
        .prepare(`SELECT ${key.join(', ')}, ${list} FROM ${quote(table)} t ${where} ORDER BY ${key.join(', ')} LIMIT ?`)
        .raw(true)
        .safeIntegers(true)
        .all(...after, limit) as unknown[][];
      const last = rows.at(-1);
      return { cursor: last ? encodeKey(last.slice(0, key.length)) : cursor, rows: rows.map((row) => row.slice(key.length)) };
    }
    const statement =
      paging.kind === 'order'
        ? this.db.prepare(`SELECT o.seq AS __cursor, ${list} FROM temp.${paging.temp} o JOIN ${quote(table)} t ON t.rowid = o.source_rowid WHERE o.seq > ? ORDER BY o.seq LIMIT ?`)
        : this.db.prepare(`SELECT t.rowid AS __cursor, ${list} FROM ${quote(table)} t WHERE t.rowid > ? ORDER BY t.rowid LIMIT ?`);
    const rows = statement.raw(true).safeIntegers(true).all(cursor === '' ? 0n : BigInt(cursor), limit) as unknown[][];
    const last = rows.at(-1);
    return { cursor: last ? (last[0] as bigint).toString() : cursor, rows: rows.map((row) => row.slice(1)) };
  }

  /** Blobs kept as files (not inline in their row), in hash order after `after`. */
  fileBlobs(after: string, limit: number): SourceBlob[] {
    return (this.db.prepare('SELECT hash, size FROM blobs WHERE data IS NULL AND hash > ? ORDER BY hash LIMIT ?').all(after, limit) as Array<{ hash: string; size: number }>).map(
      (r) => ({ hash: r.hash, sizeBytes: r.size }),
    );
  }

  fileBlobCount(): { blobs: number; bytes: number } {
    const row = this.db.prepare('SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM blobs WHERE data IS NULL').get() as { n: number; bytes: number };
    return { blobs: row.n, bytes: row.bytes };
  }

  digest(table: string, columns: readonly string[]): TableDigest {
    const sorted = [...columns].sort();
    const digest = new Digest();
    const statement = this.db.prepare(`SELECT ${sorted.map(quote).join(', ')} FROM ${quote(table)}`).raw(true).safeIntegers(true);
    for (const row of statement.iterate() as Iterable<unknown[]>) digest.add(row.map(canonical));
    return digest.result();
  }

  close(): void {
    this.db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Target: the PostgreSQL database, its catalogue, the progress table.

export interface TargetColumn {
  name: string;
  dataType: string;
  isIdentity: boolean;
}

export interface TargetTable {
  name: string;
  columns: TargetColumn[];
  /** Tables whose rows this one's foreign keys name (itself excluded). */
  references: string[];
  /** A single-column foreign key onto the same table: rows must go in parents first. */
  selfReference?: { child: string; parent: string };
  /** Has triggers of its own (not those of constraints): disabled while its rows are copied. */
  hasUserTriggers: boolean;
}

/** The tables of the current schema, as PostgreSQL's catalogue describes them. */
export async function targetTables(sql: Sql): Promise<Map<string, TargetTable>> {
  const columns = await sql.all<{ table_name: string; column_name: string; data_type: string; is_identity: string }>(
    `SELECT table_name, column_name, data_type, is_identity FROM information_schema.columns
      WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  );
  const kinds = await sql.all<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')`,
  );
  const tables = new Map<string, TargetTable>();
  for (const { name } of kinds) tables.set(name, { name, columns: [], references: [], hasUserTriggers: false });
  for (const c of columns) tables.get(c.table_name)?.columns.push({ name: c.column_name, dataType: c.data_type, isIdentity: c.is_identity === 'YES' });
  const keys = await sql.all<{ child_table: string; parent_table: string; child_column: string; parent_column: string; columns: number }>(
    `SELECT ch.relname AS child_table, pa.relname AS parent_table,
            (SELECT attname FROM pg_attribute WHERE attrelid = k.conrelid AND attnum = k.conkey[1]) AS child_column,
            (SELECT attname FROM pg_attribute WHERE attrelid = k.confrelid AND attnum = k.confkey[1]) AS parent_column,
            cardinality(k.conkey) AS columns
       FROM pg_constraint k JOIN pg_class ch ON ch.oid = k.conrelid JOIN pg_class pa ON pa.oid = k.confrelid
      WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace`,
  );
  for (const key of keys) {
    const table = tables.get(key.child_table);
    if (!table) continue;
    if (key.child_table !== key.parent_table) {
      if (!table.references.includes(key.parent_table)) table.references.push(key.parent_table);
    } else if (key.columns === 1) {
      table.selfReference = { child: key.child_column, parent: key.parent_column };
    } else {
      throw new Error(`${key.child_table} refers to itself through several columns: the migrator cannot order its rows`);
    }
  }
  const triggered = await sql.all<{ name: string }>(
    `SELECT DISTINCT c.relname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace`,
  );
  for (const { name } of triggered) {
    const table = tables.get(name);
    if (table) table.hasUserTriggers = true;
  }
  return tables;
}

/** `names` ordered so that every table comes after the tables it refers to. */
export function foreignKeyOrder(names: readonly string[], tables: ReadonlyMap<string, TargetTable>): string[] {
  const wanted = new Set(names);
  const done = new Set<string>();
  const visiting = new Set<string>();
  const order: string[] = [];
  const visit = (name: string): void => {
    if (done.has(name)) return;
    if (visiting.has(name)) throw new Error(`the foreign keys of ${name} form a cycle: the migrator cannot order the tables`);
    visiting.add(name);
    for (const parent of tables.get(name)?.references ?? []) if (wanted.has(parent)) visit(parent);
    visiting.delete(name);
    done.add(name);
    order.push(name);
  };
  for (const name of [...names].sort()) visit(name);
  return order;
}

export async function tableExists(sql: Sql, table: string): Promise<boolean> {
  const row = await sql.get<{ found: string | null }>('SELECT to_regclass(?)::text AS found', [quote(table)]);
  return row?.found !== null && row?.found !== undefined;
}

export async function countRows(sql: Sql, table: string): Promise<number> {
  return (await sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${quote(table)}`))?.n ?? 0;
}

/**
 * One migrator per target database: a session advisory lock on a connection of its own, held
 * until `releaseTarget`. Undefined (the connection returned) when another migrator holds it.
 */
export async function claimTarget(pool: pg.Pool): Promise<pg.PoolClient | undefined> {
  const session = await pool.connect();
  try {
    const { rows } = await session.query<{ got: boolean }>('SELECT pg_try_advisory_lock(7241554) AS got');
    if (rows[0]?.got) return session;
  } catch (err) {
    session.release();
    throw err;
  }
  session.release();
  return undefined;
}

export async function releaseTarget(session: pg.PoolClient): Promise<void> {
  await session.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
  session.release();
}

/**
 * Rows the target's own migrations made that the source has its own of, copied as they are:
 * the default organization, as SQLite's 008 makes it.
 */
const SEEDED_BY_MIGRATIONS: ReadonlyArray<readonly [string, string]> = [['organizations', "id = 'default'"]];

export async function deleteSeededRows(sql: Sql): Promise<void> {
  for (const [table, where] of SEEDED_BY_MIGRATIONS) await sql.run(`DELETE FROM ${quote(table)} WHERE ${where}`);
}

export async function dropProgressTable(sql: Sql): Promise<void> {
  await sql.exec(`DROP TABLE ${PROGRESS_TABLE}`);
}

export interface ProgressRow {
  step: string;
  cursor: string;
  rows: number;
  done: number;
  note: string;
}

export async function createProgressTable(tx: Sql): Promise<void> {
  await tx.exec(`CREATE TABLE IF NOT EXISTS ${PROGRESS_TABLE} (
    step   TEXT PRIMARY KEY,            -- 'source', 'blobs', 'table:<name>', 'sequences'
    cursor TEXT NOT NULL DEFAULT '',    -- the last rowid, position or blob hash done
    rows   BIGINT NOT NULL DEFAULT 0,   -- rows or blobs done so far
    done   BIGINT NOT NULL DEFAULT 0,   -- when the step finished (ms), 0 while it runs
    note   TEXT NOT NULL DEFAULT ''     -- 'source': the identity of the store being moved
  )`);
}

export async function progress(sql: Sql): Promise<Map<string, ProgressRow>> {
  const rows = await sql.all<ProgressRow>(`SELECT step, cursor, rows, done, note FROM ${PROGRESS_TABLE}`);
  return new Map(rows.map((r) => [r.step, r]));
}

/** Inserts the step's row if missing (ON CONFLICT DO NOTHING: a resumed run keeps its cursor). */
export async function beginStep(sql: Sql, step: string, note = ''): Promise<void> {
  await sql.run(`INSERT INTO ${PROGRESS_TABLE} (step, note) VALUES (?, ?) ON CONFLICT DO NOTHING`, [step, note]);
}

export async function advanceStep(tx: Sql, step: string, expectedCursor: string, cursor: string, rows: number): Promise<void> {
  const moved = await tx.run(`UPDATE ${PROGRESS_TABLE} SET cursor = ?, rows = rows + ? WHERE step = ? AND cursor = ?`, [cursor, rows, step, expectedCursor]);
  if (moved.changes !== 1) throw new Error(`the progress of ${step} moved under this run (another driveway migrate on the same database?)`);
}

export async function finishStep(sql: Sql, step: string): Promise<void> {
  await sql.run(`UPDATE ${PROGRESS_TABLE} SET done = ? WHERE step = ?`, [Date.now(), step]);
}

/** PostgreSQL's limit on parameters of one statement is 65,535. */
const MAX_PARAMETERS = 60_000;

/**
 * Inserts one batch of `table`'s rows (values in `columns` order) and moves the step's cursor,
 * in one transaction: after a crash either both are there or neither.
 */
export async function insertBatch(
  sql: Sql,
  table: TargetTable,
  columns: readonly string[],
  rows: readonly unknown[][],
  step: { name: string; from: string; to: string },
): Promise<void> {
  const identity = table.columns.some((c) => c.isIdentity && columns.includes(c.name));
  const head = `INSERT INTO ${quote(table.name)} (${columns.map(quote).join(', ')})${identity ? ' OVERRIDING SYSTEM VALUE' : ''} VALUES `;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, columns.length)));
  await sql.transaction(async (tx) => {
    if (table.hasUserTriggers) await tx.exec(`ALTER TABLE ${quote(table.name)} DISABLE TRIGGER USER`);
    for (let start = 0; start < rows.length; start += perStatement) {
      const chunk = rows.slice(start, start + perStatement);
      await tx.run(head + chunk.map(() => tuple).join(', '), chunk.flat().map(toTarget));
    }
    if (table.hasUserTriggers) await tx.exec(`ALTER TABLE ${quote(table.name)} ENABLE TRIGGER USER`);
    await advanceStep(tx, step.name, step.from, step.to, rows.length);
  });
}

/** Sets the sequence of each identity column past its highest value and `mark` (SQLite's AUTOINCREMENT). */
export async function setIdentitySequences(sql: Sql, table: TargetTable, mark: bigint): Promise<void> {
  for (const column of table.columns.filter((c) => c.isIdentity)) {
    const row = await sql.get<{ top: string | null }>(`SELECT MAX(${quote(column.name)})::text AS top FROM ${quote(table.name)}`);
    const top = row?.top === null || row?.top === undefined ? 0n : BigInt(row.top);
    const next = top > mark ? top : mark;
    if (next === 0n) continue;
    await sql.get('SELECT setval(pg_get_serial_sequence(?, ?), ?::bigint, true)', [quote(table.name), column.name, next.toString()]);
  }
}

/** The checksum of a target table, read in pages by ctid (no primary key needed), one snapshot. */
export async function targetDigest(sql: Sql, table: TargetTable, columns: readonly string[], pageRows: number): Promise<TableDigest> {
  const sorted = [...columns].sort();
  const types = new Map(table.columns.map((c) => [c.name, c.dataType]));
  const list = sorted.map((c) => (types.get(c) === 'bytea' ? `'\\x' || encode(${quote(c)}, 'hex')` : `${quote(c)}::text`)).join(', ');
  const digest = new Digest();
  await sql.transaction(async (tx) => {
    let after = '(0,0)';
    for (;;) {
      const page = await tx.all<Record<string, string | null>>(
        `SELECT ctid::text AS __ctid, ${list.length ? `ARRAY[${list}]` : "ARRAY[]::text[]"} AS v FROM ${quote(table.name)} WHERE ctid > ?::tid ORDER BY ctid LIMIT ?`,
        [after, pageRows],
      );
      for (const row of page) digest.add(row.v as unknown as Array<string | null>);
      const last = page.at(-1);
      if (!last || page.length < pageRows) break;
      after = last.__ctid as string;
    }
  });
  return digest.result();
}
