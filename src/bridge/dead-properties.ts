/**
 * Dead properties (RFC 4918 §4, §9.2) and client modification times, per node key: the store's
 * interface can keep neither, so the bridge keeps them in the storage layer's `dav_properties`
 * and `dav_client_mtimes` tables (migration 012) through one `Sql` handle, SQLite or PostgreSQL
 * (docs/scale-out.md "Bridge state"). Under `npm start` that is the store's own database, shared
 * by every instance; a bridge alone (`--only bridge`) opens its own `<dataDir>/bridge.sqlite`
 * (openBridgeStateFile). A property set through one path or by one user is seen through every
 * path and by every user of the node. Owns these tables only; never calls the store and never
 * interprets a property's XML.
 *
 * Client mtimes come from rclone's `X-OC-Mtime`, Windows' `Win32LastModifiedTime` and Cyberduck's
 * `SAR:lastmodified` (docs/client-quirks.md §2, §3, §5); the bridge reports them in getlastmodified.
 *
 * Bounded (issue 14, finding 7: a user with a 1,000-byte quota grew the bridge's file by 21 MB): a
 * node carries at most `maxBytesPerNode` bytes (64 KiB) and `maxPropertiesPerNode` properties, and
 * all nodes charged to one owner at most `maxBytesPerOwner` (64 MiB). A property's bytes are its
 * XML, namespace and name in UTF-8. Each row records the owner it is charged to; triggers (SQL in
 * SQLite, PL/pgSQL in PostgreSQL) keep a per-owner total in the same transaction as every insert,
 * update and delete, so the count is exact whatever removes rows (PROPPATCH remove, DELETE for
 * good, COPY replacing a node) and checking it costs one row read. A change is measured before it
 * is written and refused without writing, so no transaction rolls back for a limit (see
 * sql-lock-repository.ts on why that matters while the store shares the connection). Real clients
 * stay far below: Windows sets four Win32* properties (about 450 bytes) per file it uploads,
 * Cyberduck one or two dates, Finder none (its extended attributes travel as `._` files); 64 MiB
 * holds Windows' properties for ~140,000 files.
 */
import Database, { type Statement } from 'better-sqlite3';
import { existsSync, renameSync } from 'node:fs';
import { SqliteStorage } from '../store/storage/dialects/sqlite.js';
import { migrationsOf } from '../store/storage/migrations.js';
import type { Sql } from '../store/storage/sql.js';
import { inKeys } from './sql-lists.js';

export interface DeadProperty {
  readonly ns: string;
  readonly local: string;
  /** The whole property element as the client sent it (dav-xml.ts serializes it). */
  readonly xml: string;
}

export type DeadPropertyChange =
  | { readonly op: 'set'; readonly ns: string; readonly local: string; readonly xml: string }
  | { readonly op: 'remove'; readonly ns: string; readonly local: string };

export class DeadPropertyLimitError extends Error {
  constructor(
    readonly kind: 'too-many-properties' | 'too-large' | 'owner-full',
    message: string,
  ) {
    super(message);
    this.name = 'DeadPropertyLimitError';
  }
}

export interface DeadPropertyStoreOptions {
  /** Properties one node may carry. Default 1000. */
  maxPropertiesPerNode?: number;
  /** Bytes of properties one node may carry. Default 64 KiB (config `bridge.deadPropsMaxBytesPerNode`). */
  maxBytesPerNode?: number;
  /** Bytes of properties all nodes of one owner may carry. Default 64 MiB (`bridge.deadPropsMaxBytesPerOwner`). */
  maxBytesPerOwner?: number;
}

/**
 * What the verbs need of dead properties and client mtimes. Methods throw DeadPropertyLimitError
 * where said (507 for the properties set), or a storage error (5xx; 503 when the database is
 * unavailable).
 */
export interface PropertyRepository {
  /**
   * Grows with every change made through this repository: a reader caching something derived
   * from them (a PROPFIND body) compares it to know it is still exact. Changes made by another
   * instance do not move it: such a cache must also expire (propfind.ts: with the listing).
   */
  readonly version: number;
  /** Every dead property of a node, ordered by namespace and name. */
  list(id: string): Promise<DeadProperty[]>;
  /** Dead properties of many nodes in one query (a Depth 1 PROPFIND); nodes without any are absent. */
  listMany(ids: readonly string[]): Promise<Map<string, DeadProperty[]>>;
  get(id: string, ns: string, local: string): Promise<DeadProperty | undefined>;
  /**
   * Applies PROPPATCH instructions in order, all or nothing (RFC 4918 §9.2), charging the node's
   * properties to `owner` ('' charges nobody: tests and tools only). Throws
   * DeadPropertyLimitError (nothing applied) when the node or the owner would pass a limit.
   */
  apply(id: string, changes: readonly DeadPropertyChange[], owner?: string): Promise<void>;
  set(id: string, prop: DeadProperty): Promise<void>;
  remove(id: string, ns: string, local: string): Promise<void>;
  /**
   * Gives `toId` the dead properties and client mtime of `fromId`, replacing what it had (COPY:
   * the destination is a new resource, RFC 4918 §9.8.2), charged to `owner`. Returns false and
   * changes nothing when that would pass the owner's limit (the copy then has no properties).
   */
  copy(fromId: string, toId: string, owner?: string): Promise<boolean>;
  /** Forgets a node's properties and mtime (DELETE, or a node replaced by COPY/MOVE). */
  drop(id: string): Promise<void>;
  dropMany(ids: readonly string[]): Promise<void>;
  getMtime(id: string): Promise<number | undefined>;
  /** Client mtimes of many nodes in one query; nodes without one are absent. */
  getMtimes(ids: readonly string[]): Promise<Map<string, number>>;
  /** Records a client-set modification time (ms since the epoch, whole milliseconds). */
  setMtime(id: string, mtimeMs: number): Promise<void>;
  clearMtime(id: string): Promise<void>;
  /** Bytes of properties charged to `owner` ('' is charged to nobody). */
  ownerBytes(owner: string): Promise<number>;
}

/** A property's bytes as the triggers count them: xml, ns and local in UTF-8. */
function propertyBytes(p: { ns: string; local: string; xml: string }): number {
  return Buffer.byteLength(p.xml, 'utf8') + Buffer.byteLength(p.ns, 'utf8') + Buffer.byteLength(p.local, 'utf8');
}

const byName = (a: DeadProperty, b: DeadProperty): number => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : a.local < b.local ? -1 : a.local > b.local ? 1 : 0);

type Refusal = DeadPropertyLimitError | undefined;

/** Dead properties and mtimes in the storage layer's tables, over any `Sql` handle. */
export class SqlPropertyRepository implements PropertyRepository {
  private readonly maxProps: number;
  private readonly maxBytes: number;
  private readonly maxOwnerBytes: number;
  private writes = 0;

  constructor(
    private readonly sql: Sql,
    options: DeadPropertyStoreOptions = {},
  ) {
    this.maxProps = options.maxPropertiesPerNode ?? 1000;
    this.maxBytes = options.maxBytesPerNode ?? 64 * 1024;
    this.maxOwnerBytes = options.maxBytesPerOwner ?? 64 * 1024 * 1024;
  }

  get version(): number {
    return this.writes;
  }

  /** Another instance changed properties or client mtimes (a change feed said so): moves `version`. */
  noteOutsideChange(): void {
    this.writes += 1;
  }

  async ownerBytes(owner: string): Promise<number> {
    return ownerBytesIn(this.sql, owner);
  }

  async list(id: string): Promise<DeadProperty[]> {
    return (await this.sql.all<DeadProperty>('SELECT ns, local, xml FROM dav_properties WHERE node_id = ?', [id])).sort(byName);
  }

  async listMany(ids: readonly string[]): Promise<Map<string, DeadProperty[]>> {
    const out = new Map<string, DeadProperty[]>();
    if (ids.length === 0) return out;
    const keys = inKeys(this.sql, ids);
    const rows = await this.sql.all<DeadProperty & { node_id: string }>(`SELECT node_id, ns, local, xml FROM dav_properties WHERE node_id ${keys.clause}`, [keys.param]);
    for (const row of rows) {
      let props = out.get(row.node_id);
      if (props === undefined) {
        props = [];
        out.set(row.node_id, props);
      }
      props.push({ ns: row.ns, local: row.local, xml: row.xml });
    }
    for (const props of out.values()) if (props.length > 1) props.sort(byName);
    return out;
  }

  get(id: string, ns: string, local: string): Promise<DeadProperty | undefined> {
    return this.sql.get<DeadProperty>('SELECT ns, local, xml FROM dav_properties WHERE node_id = ? AND ns = ? AND local = ?', [id, ns, local]);
  }

  async apply(id: string, changes: readonly DeadPropertyChange[], owner = ''): Promise<void> {
    if (changes.length === 0) return;
    const refusal = await this.sql.transaction(async (tx): Promise<Refusal> => {
      const rows = await tx.all<DeadProperty & { owner: string }>('SELECT ns, local, xml, owner FROM dav_properties WHERE node_id = ?', [id]);
      const key = (p: { ns: string; local: string }): string => `${p.ns}\0${p.local}`;
      const after = new Map(rows.map((r) => [key(r), propertyBytes(r)]));
      const nodeBefore = { count: rows.length, bytes: [...after.values()].reduce((a, b) => a + b, 0) };
      for (const change of changes) {
        if (change.op === 'set') after.set(key(change), propertyBytes(change));
        else after.delete(key(change));
      }
      const nodeAfter = { count: after.size, bytes: [...after.values()].reduce((a, b) => a + b, 0) };
      // A limit stops growth only: a node or owner already past one (a lowered limit) may still shrink.
      if (nodeAfter.count > this.maxProps && nodeAfter.count > nodeBefore.count) {
        return new DeadPropertyLimitError('too-many-properties', `more than ${this.maxProps} dead properties on one resource`);
      }
      if (nodeAfter.bytes > this.maxBytes && nodeAfter.bytes > nodeBefore.bytes) {
        return new DeadPropertyLimitError('too-large', `more than ${this.maxBytes} bytes of dead properties on one resource`);
      }
      if (owner !== '' && nodeAfter.bytes > nodeBefore.bytes) {
        // The node's properties are charged to its owner now (it may have moved to another owner).
        const elsewhere = (await ownerBytesIn(tx, owner)) - rows.filter((r) => r.owner === owner).reduce((a, r) => a + propertyBytes(r), 0);
        if (elsewhere + nodeAfter.bytes > this.maxOwnerBytes) {
          return new DeadPropertyLimitError('owner-full', `more than ${this.maxOwnerBytes} bytes of dead properties for one owner`);
        }
      }
      await tx.run('UPDATE dav_properties SET owner = ? WHERE node_id = ? AND owner <> ?', [owner, id, owner]);
      for (const change of changes) {
        if (change.op === 'set') {
          await tx.run(
            'INSERT INTO dav_properties (node_id, ns, local, xml, owner) VALUES (?, ?, ?, ?, ?) ON CONFLICT (node_id, ns, local) DO UPDATE SET xml = excluded.xml, owner = excluded.owner',
            [id, change.ns, change.local, change.xml, owner],
          );
        } else {
          await tx.run('DELETE FROM dav_properties WHERE node_id = ? AND ns = ? AND local = ?', [id, change.ns, change.local]);
        }
      }
      return undefined;
    });
    if (refusal) throw refusal;
    this.writes++;
  }

  set(id: string, prop: DeadProperty): Promise<void> {
    return this.apply(id, [{ op: 'set', ...prop }]);
  }

  remove(id: string, ns: string, local: string): Promise<void> {
    return this.apply(id, [{ op: 'remove', ns, local }]);
  }

  async copy(fromId: string, toId: string, owner = ''): Promise<boolean> {
    if (fromId === toId) return true;
    const copied = await this.sql.transaction(async (tx) => {
      if (owner !== '') {
        const source = await tx.all<DeadProperty>('SELECT ns, local, xml FROM dav_properties WHERE node_id = ?', [fromId]);
        const replaced = await tx.all<DeadProperty>('SELECT ns, local, xml FROM dav_properties WHERE node_id = ? AND owner = ?', [toId, owner]);
        const before = await ownerBytesIn(tx, owner);
        const after = before - replaced.reduce((a, r) => a + propertyBytes(r), 0) + source.reduce((a, r) => a + propertyBytes(r), 0);
        if (after > this.maxOwnerBytes && after > before) return false;
      }
      await tx.run('DELETE FROM dav_properties WHERE node_id = ?', [toId]);
      await tx.run('DELETE FROM dav_client_mtimes WHERE node_id = ?', [toId]);
      await tx.run('INSERT INTO dav_properties (node_id, ns, local, xml, owner) SELECT ?, ns, local, xml, ? FROM dav_properties WHERE node_id = ?', [toId, owner, fromId]);
      await tx.run('INSERT INTO dav_client_mtimes (node_id, mtime_ms) SELECT ?, mtime_ms FROM dav_client_mtimes WHERE node_id = ?', [toId, fromId]);
      return true;
    });
    if (copied) this.writes++;
    return copied;
  }

  drop(id: string): Promise<void> {
    return this.dropMany([id]);
  }

  async dropMany(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.sql.transaction(async (tx) => {
      if (ids.length === 1) {
        await tx.run('DELETE FROM dav_properties WHERE node_id = ?', [ids[0]]);
        await tx.run('DELETE FROM dav_client_mtimes WHERE node_id = ?', [ids[0]]);
        return;
      }
      const keys = inKeys(tx, ids);
      await tx.run(`DELETE FROM dav_properties WHERE node_id ${keys.clause}`, [keys.param]);
      await tx.run(`DELETE FROM dav_client_mtimes WHERE node_id ${keys.clause}`, [keys.param]);
    });
    this.writes++;
  }

  async getMtime(id: string): Promise<number | undefined> {
    const row = await this.sql.get<{ mtime_ms: number }>('SELECT mtime_ms FROM dav_client_mtimes WHERE node_id = ?', [id]);
    return row === undefined ? undefined : Number(row.mtime_ms);
  }

  async getMtimes(ids: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    const keys = inKeys(this.sql, ids);
    for (const row of await this.sql.all<{ node_id: string; mtime_ms: number }>(`SELECT node_id, mtime_ms FROM dav_client_mtimes WHERE node_id ${keys.clause}`, [keys.param])) {
      out.set(row.node_id, Number(row.mtime_ms));
    }
    return out;
  }

  async setMtime(id: string, mtimeMs: number): Promise<void> {
    if (!Number.isFinite(mtimeMs)) throw new RangeError('mtime must be a finite number of milliseconds');
    await this.sql.run(
      'INSERT INTO dav_client_mtimes (node_id, mtime_ms) VALUES (?, ?) ON CONFLICT (node_id) DO UPDATE SET mtime_ms = excluded.mtime_ms',
      [id, Math.trunc(mtimeMs)],
    );
    this.writes++;
  }

  async clearMtime(id: string): Promise<void> {
    await this.sql.run('DELETE FROM dav_client_mtimes WHERE node_id = ?', [id]);
    this.writes++;
  }
}

async function ownerBytesIn(sql: Sql, owner: string): Promise<number> {
  const row = await sql.get<{ bytes: number }>('SELECT bytes FROM dav_property_usage WHERE owner = ?', [owner]);
  return Number(row?.bytes ?? 0);
}

// ---------------------------------------------------------------------------------------------
// The bridge's own file, for a bridge with no shared storage (`--only bridge`).

/**
 * user_version of bridge.sqlite. 1 and 2 are the layouts of earlier releases (tables
 * dead_properties, client_mtimes and, from 2, dead_property_usage); 3 holds the tables of the
 * storage layer's migration 012, the same as the store's database, so one repository serves both.
 * A later migration that changes these tables must add a step here too.
 */
export const STATE_FILE_VERSION = 3;
const STATE_MIGRATION = 12;

/** Opens (creating or upgrading) a bridge state file as a SqliteStorage; `:memory:` works for tests. */
export function openBridgeStateFile(file: string): SqliteStorage {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    upgradeStateFile(db);
  } catch (err) {
    db.close();
    throw err;
  }
  cacheStatements(db);
  return new SqliteStorage(db);
}

function upgradeStateFile(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > STATE_FILE_VERSION) {
    throw new Error(`dead property file has schema ${version}, newer than this bridge (${STATE_FILE_VERSION})`);
  }
  if (version === STATE_FILE_VERSION) return;
  const migration = migrationsOf('sqlite').find((m) => m.version === STATE_MIGRATION);
  if (!migration) throw new Error(`storage migration ${STATE_MIGRATION} is missing`);
  db.transaction(() => {
    db.exec(migration.sql);
    if (version >= 1) {
      // Earlier releases: rows move into the new tables (the triggers charge each to its owner;
      // version 1 had no owners, so its rows are charged to nobody until their node is patched).
      db.exec(`INSERT INTO dav_properties (node_id, ns, local, xml, owner)
                 SELECT node_id, ns, local, xml, ${version >= 2 ? 'owner' : "''"} FROM dead_properties;
               INSERT INTO dav_client_mtimes (node_id, mtime_ms) SELECT node_id, mtime_ms FROM client_mtimes;
               DROP TABLE dead_properties;
               DROP TABLE client_mtimes;
               ${version >= 2 ? 'DROP TABLE dead_property_usage;' : ''}`);
    }
    db.pragma(`user_version = ${STATE_FILE_VERSION}`);
  })();
}

/** Above this many distinct SQL texts the cache starts over (the repositories use a few dozen). */
const STATEMENT_CACHE_LIMIT = 500;

/** Compiled statements reused per SQL text, as the store's database does (db/database.ts). */
function cacheStatements(db: Database.Database): void {
  const compile = db.prepare.bind(db);
  const statements = new Map<string, Statement>();
  db.prepare = ((text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE_LIMIT) statements.clear();
      statement = compile(text);
      statements.set(text, statement);
    }
    return statement;
  }) as Database.Database['prepare'];
}

/**
 * Moves what a bridge state file holds (dead properties, client mtimes) into the shared tables
 * of `target`, the first time an in-process bridge starts over a data directory whose earlier
 * release kept them in `<dataDir>/bridge.sqlite`: in one transaction, rows already in `target`
 * kept, then the file renamed to `bridge.sqlite.moved` so it is never read again. Returns how
 * many rows were moved, or undefined when there was no file.
 */
export async function moveStateFileInto(file: string, target: Sql): Promise<{ properties: number; mtimes: number } | undefined> {
  if (!existsSync(file)) return undefined;
  const local = openBridgeStateFile(file);
  let moved: { properties: number; mtimes: number };
  try {
    const props = await local.sql.all<{ node_id: string; ns: string; local: string; xml: string; owner: string }>(
      'SELECT node_id, ns, local, xml, owner FROM dav_properties',
    );
    const mtimes = await local.sql.all<{ node_id: string; mtime_ms: number }>('SELECT node_id, mtime_ms FROM dav_client_mtimes');
    moved = await target.transaction(async (tx) => {
      let properties = 0;
      let times = 0;
      for (let i = 0; i < props.length; i += ROWS_PER_INSERT) {
        const chunk = props.slice(i, i + ROWS_PER_INSERT);
        properties += (
          await tx.run(
            `INSERT INTO dav_properties (node_id, ns, local, xml, owner) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')} ON CONFLICT DO NOTHING`,
            chunk.flatMap((r) => [r.node_id, r.ns, r.local, r.xml, r.owner]),
          )
        ).changes;
      }
      for (let i = 0; i < mtimes.length; i += ROWS_PER_INSERT) {
        const chunk = mtimes.slice(i, i + ROWS_PER_INSERT);
        times += (
          await tx.run(
            `INSERT INTO dav_client_mtimes (node_id, mtime_ms) VALUES ${chunk.map(() => '(?, ?)').join(', ')} ON CONFLICT DO NOTHING`,
            chunk.flatMap((r) => [r.node_id, r.mtime_ms]),
          )
        ).changes;
      }
      return { properties, mtimes: times };
    });
  } finally {
    await local.close();
  }
  renameSync(file, `${file}.moved`);
  return moved;
}

/** Rows per multi-row INSERT when moving a state file: 100 × 5 parameters, far below both dialects' limits. */
const ROWS_PER_INSERT = 100;

/**
 * Reads rclone's `X-OC-Mtime` (seconds since the epoch, possibly fractional) into milliseconds;
 * undefined when absent or not a plausible time (docs/client-quirks.md §3).
 */
export function parseOcMtime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (!/^\d{1,12}(\.\d+)?$/.test(text)) return undefined;
  return Math.round(Number(text) * 1000);
}

/**
 * Reads a date property value (Win32LastModifiedTime, SAR:lastmodified, DAV:getlastmodified:
 * RFC 1123 dates, or ISO 8601) into milliseconds; undefined when it is not a date.
 */
export function parseDateProperty(value: string): number | undefined {
  const text = value.trim();
  if (text === '' || text.length > 64) return undefined;
  if (/^\d+$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}
