/**
 * Dead properties (RFC 4918 §4, §9.2) and client modification times, per node UUID, in the
 * bridge's own SQLite file: the store's interface can keep neither. A property set through one
 * path or by one user is seen through every path and by every user of the node. Owns this file
 * and its schema only; it never calls the store and never interprets a property's XML.
 *
 * Client mtimes come from rclone's `X-OC-Mtime`, Windows' `Win32LastModifiedTime` and Cyberduck's
 * `SAR:lastmodified` (CLIENT-QUIRKS §2, §3, §5); the bridge reports them in getlastmodified.
 *
 * Bounded (issue 14, finding 7: a user with a 1,000-byte quota grew this file by 21 MB): a node
 * carries at most `maxBytesPerNode` bytes (64 KiB) and `maxPropertiesPerNode` properties, and
 * all nodes charged to one owner at most `maxBytesPerOwner` (64 MiB). A property's bytes are its
 * XML, namespace and name in UTF-8. Each row records the owner it is charged to; triggers keep
 * a per-owner total in the same transaction as every insert, update and delete, so the count is
 * exact whatever removes rows (PROPPATCH remove, DELETE for good, COPY replacing a node) and
 * checking it costs one row read. Real clients stay far below: Windows sets four Win32*
 * properties (about 450 bytes) per file it uploads, Cyberduck one or two dates, Finder none (its
 * extended attributes travel as `._` files); 64 MiB holds Windows' properties for ~140,000 files.
 */
import Database from 'better-sqlite3';

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

const SCHEMA_VERSION = 2;

/** What a property row weighs: its XML, namespace and name in UTF-8 (`row` is NEW or OLD). */
const rowBytes = (row: string): string =>
  `(length(CAST(${row}.xml AS BLOB)) + length(CAST(${row}.ns AS BLOB)) + length(CAST(${row}.local AS BLOB)))`;
const charge = (row: string, sign: '+' | '-'): string =>
  // No conflict clause: inside a trigger the outer statement's (PROPPATCH's upsert) would override it.
  (sign === '+'
    ? `INSERT INTO dead_property_usage (owner, bytes) SELECT ${row}.owner, 0 WHERE NOT EXISTS (SELECT 1 FROM dead_property_usage WHERE owner = ${row}.owner);\n`
    : '') +
  `UPDATE dead_property_usage SET bytes = bytes ${sign} ${rowBytes(row)} WHERE owner = ${row}.owner;`;

const MIGRATIONS: ReadonlyArray<string> = [
  `CREATE TABLE dead_properties (
     node_id TEXT NOT NULL,
     ns      TEXT NOT NULL,
     local   TEXT NOT NULL,
     xml     TEXT NOT NULL,
     PRIMARY KEY (node_id, ns, local)
   ) WITHOUT ROWID;
   CREATE TABLE client_mtimes (
     node_id  TEXT PRIMARY KEY,
     mtime_ms INTEGER NOT NULL
   ) WITHOUT ROWID;`,
  // Who each property is charged to ('' = nobody: rows from before this version, until their
  // node is patched again), and the per-owner totals the triggers keep exact.
  `ALTER TABLE dead_properties ADD COLUMN owner TEXT NOT NULL DEFAULT '';
   CREATE TABLE dead_property_usage (
     owner TEXT PRIMARY KEY,
     bytes INTEGER NOT NULL
   ) WITHOUT ROWID;
   INSERT INTO dead_property_usage (owner, bytes)
     SELECT owner, sum(${rowBytes('dead_properties')}) FROM dead_properties GROUP BY owner;
   CREATE TRIGGER dead_properties_charge AFTER INSERT ON dead_properties BEGIN
     ${charge('NEW', '+')}
   END;
   CREATE TRIGGER dead_properties_refund AFTER DELETE ON dead_properties BEGIN
     ${charge('OLD', '-')}
   END;
   CREATE TRIGGER dead_properties_recharge AFTER UPDATE ON dead_properties BEGIN
     ${charge('OLD', '-')}
     ${charge('NEW', '+')}
   END;`,
];

type Db = Database.Database;

export class DeadPropertyStore {
  private readonly maxProps: number;
  private readonly maxBytes: number;
  private readonly maxOwnerBytes: number;
  private writes = 0;
  private readonly stmts: ReturnType<typeof prepare>;
  private readonly applyTx: (id: string, changes: readonly DeadPropertyChange[], owner: string) => void;
  private readonly copyTx: (fromId: string, toId: string, owner: string) => boolean;

  /** Opens (creating and migrating) the file at `file`; `:memory:` works for tests. */
  static open(file: string, options: DeadPropertyStoreOptions = {}): DeadPropertyStore {
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      migrate(db);
    } catch (err) {
      db.close();
      throw err;
    }
    return new DeadPropertyStore(db, options);
  }

  private constructor(
    private readonly db: Db,
    options: DeadPropertyStoreOptions,
  ) {
    this.maxProps = options.maxPropertiesPerNode ?? 1000;
    this.maxBytes = options.maxBytesPerNode ?? 64 * 1024;
    this.maxOwnerBytes = options.maxBytesPerOwner ?? 64 * 1024 * 1024;
    this.stmts = prepare(db);
    this.applyTx = db.transaction((id: string, changes: readonly DeadPropertyChange[], owner: string) => {
      const nodeBefore = this.stmts.usage.get(id) as { count: number; bytes: number };
      // The node's properties are charged to its owner now (it may have moved to another owner).
      this.stmts.recharge.run(owner, id, owner);
      const ownerBefore = this.ownerBytes(owner);
      for (const change of changes) {
        if (change.op === 'set') this.stmts.upsert.run(id, change.ns, change.local, change.xml, owner);
        else this.stmts.deleteOne.run(id, change.ns, change.local);
      }
      // A limit stops growth only: a node or owner already past one (a lowered limit) may still shrink.
      const node = this.stmts.usage.get(id) as { count: number; bytes: number };
      if (node.count > this.maxProps && node.count > nodeBefore.count) {
        throw new DeadPropertyLimitError('too-many-properties', `more than ${this.maxProps} dead properties on one resource`);
      }
      if (node.bytes > this.maxBytes && node.bytes > nodeBefore.bytes) {
        throw new DeadPropertyLimitError('too-large', `more than ${this.maxBytes} bytes of dead properties on one resource`);
      }
      this.checkOwner(owner, ownerBefore);
    });
    this.copyTx = db.transaction((fromId: string, toId: string, owner: string) => {
      const ownerBefore = this.ownerBytes(owner);
      this.stmts.dropProps.run(toId);
      this.stmts.dropMtime.run(toId);
      this.stmts.copyProps.run(toId, owner, fromId);
      this.stmts.copyMtime.run(toId, fromId);
      this.checkOwner(owner, ownerBefore);
      return true;
    });
  }

  /** Bytes of properties charged to `owner` ('' is charged to nobody). */
  ownerBytes(owner: string): number {
    return (this.stmts.ownerUsage.get(owner) as { bytes: number } | undefined)?.bytes ?? 0;
  }

  private checkOwner(owner: string, before: number): void {
    if (owner === '') return;
    const after = this.ownerBytes(owner);
    if (after > this.maxOwnerBytes && after > before) {
      throw new DeadPropertyLimitError('owner-full', `more than ${this.maxOwnerBytes} bytes of dead properties for one owner`);
    }
  }

  /**
   * Grows with every change made through this store (properties or mtimes, any node): a reader
   * caching something derived from them (a PROPFIND body) compares it to know it is still exact.
   */
  get version(): number {
    return this.writes;
  }

  /** Every dead property of a node, ordered by namespace and name. */
  list(id: string): DeadProperty[] {
    return this.stmts.list.all(id) as DeadProperty[];
  }

  /** Dead properties of many nodes in one query (a Depth 1 PROPFIND); nodes without any are absent. */
  listMany(ids: readonly string[]): Map<string, DeadProperty[]> {
    const out = new Map<string, DeadProperty[]>();
    if (ids.length === 0) return out;
    const rows = this.stmts.listMany.all(JSON.stringify(ids)) as Array<DeadProperty & { node_id: string }>;
    for (const row of rows) {
      let props = out.get(row.node_id);
      if (props === undefined) {
        props = [];
        out.set(row.node_id, props);
      }
      props.push({ ns: row.ns, local: row.local, xml: row.xml });
    }
    return out;
  }

  get(id: string, ns: string, local: string): DeadProperty | undefined {
    return this.stmts.getOne.get(id, ns, local) as DeadProperty | undefined;
  }

  /**
   * Applies PROPPATCH instructions in order, all or nothing (RFC 4918 §9.2), charging the
   * node's properties to `owner` ('' charges nobody: tests and tools only). Throws
   * DeadPropertyLimitError (nothing applied) when the node or the owner would pass a limit:
   * the verb answers 507 for the properties set.
   */
  apply(id: string, changes: readonly DeadPropertyChange[], owner = ''): void {
    if (changes.length === 0) return;
    this.applyTx(id, changes, owner);
    this.writes++;
  }

  set(id: string, prop: DeadProperty): void {
    this.apply(id, [{ op: 'set', ...prop }]);
  }

  remove(id: string, ns: string, local: string): void {
    this.apply(id, [{ op: 'remove', ns, local }]);
  }

  /**
   * Gives `toId` the dead properties and client mtime of `fromId`, replacing what it had (COPY:
   * the destination is a new resource, RFC 4918 §9.8.2), charged to `owner`. Returns false and
   * changes nothing when that would pass the owner's limit (the copy then has no properties).
   */
  copy(fromId: string, toId: string, owner = ''): boolean {
    if (fromId === toId) return true;
    try {
      this.copyTx(fromId, toId, owner);
    } catch (err) {
      if (err instanceof DeadPropertyLimitError) return false;
      throw err;
    }
    this.writes++;
    return true;
  }

  /** Forgets a node's properties and mtime (DELETE, or a node replaced by COPY/MOVE). */
  drop(id: string): void {
    this.stmts.dropTx([id]);
    this.writes++;
  }

  dropMany(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.stmts.dropTx(ids);
    this.writes++;
  }

  getMtime(id: string): number | undefined {
    const row = this.stmts.getMtime.get(id) as { mtime_ms: number } | undefined;
    return row?.mtime_ms;
  }

  /** Client mtimes of many nodes in one query; nodes without one are absent. */
  getMtimes(ids: readonly string[]): Map<string, number> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    for (const row of this.stmts.getMtimes.all(JSON.stringify(ids)) as Array<{ node_id: string; mtime_ms: number }>) {
      out.set(row.node_id, row.mtime_ms);
    }
    return out;
  }

  /** Records a client-set modification time (ms since the epoch, whole milliseconds). */
  setMtime(id: string, mtimeMs: number): void {
    if (!Number.isFinite(mtimeMs)) throw new RangeError('mtime must be a finite number of milliseconds');
    this.stmts.setMtime.run(id, Math.trunc(mtimeMs));
    this.writes++;
  }

  clearMtime(id: string): void {
    this.stmts.clearMtime.run(id);
    this.writes++;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function migrate(db: Db): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new Error(`dead property file has schema ${version}, newer than this bridge (${SCHEMA_VERSION})`);
  }
  for (let v = version; v < SCHEMA_VERSION; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

function prepare(db: Db) {
  const dropProps = db.prepare('DELETE FROM dead_properties WHERE node_id = ?');
  const dropMtime = db.prepare('DELETE FROM client_mtimes WHERE node_id = ?');
  const copyProps = db.prepare(
    'INSERT INTO dead_properties (node_id, ns, local, xml, owner) SELECT ?, ns, local, xml, ? FROM dead_properties WHERE node_id = ?',
  );
  const copyMtime = db.prepare('INSERT INTO client_mtimes (node_id, mtime_ms) SELECT ?, mtime_ms FROM client_mtimes WHERE node_id = ?');
  return {
    list: db.prepare('SELECT ns, local, xml FROM dead_properties WHERE node_id = ? ORDER BY ns, local'),
    listMany: db.prepare(
      'SELECT node_id, ns, local, xml FROM dead_properties WHERE node_id IN (SELECT value FROM json_each(?)) ORDER BY node_id, ns, local',
    ),
    getOne: db.prepare('SELECT ns, local, xml FROM dead_properties WHERE node_id = ? AND ns = ? AND local = ?'),
    upsert: db.prepare(
      'INSERT INTO dead_properties (node_id, ns, local, xml, owner) VALUES (?, ?, ?, ?, ?) ON CONFLICT (node_id, ns, local) DO UPDATE SET xml = excluded.xml, owner = excluded.owner',
    ),
    recharge: db.prepare('UPDATE dead_properties SET owner = ? WHERE node_id = ? AND owner <> ?'),
    ownerUsage: db.prepare('SELECT bytes FROM dead_property_usage WHERE owner = ?'),
    dropProps,
    dropMtime,
    copyProps,
    copyMtime,
    deleteOne: db.prepare('DELETE FROM dead_properties WHERE node_id = ? AND ns = ? AND local = ?'),
    usage: db.prepare(
      `SELECT count(*) AS count, coalesce(sum(${rowBytes('dead_properties')}), 0) AS bytes FROM dead_properties WHERE node_id = ?`,
    ),
    getMtime: db.prepare('SELECT mtime_ms FROM client_mtimes WHERE node_id = ?'),
    getMtimes: db.prepare('SELECT node_id, mtime_ms FROM client_mtimes WHERE node_id IN (SELECT value FROM json_each(?))'),
    setMtime: db.prepare(
      'INSERT INTO client_mtimes (node_id, mtime_ms) VALUES (?, ?) ON CONFLICT (node_id) DO UPDATE SET mtime_ms = excluded.mtime_ms',
    ),
    clearMtime: dropMtime,
    dropTx: db.transaction((ids: readonly string[]) => {
      for (const id of ids) {
        dropProps.run(id);
        dropMtime.run(id);
      }
    }),
  };
}

/**
 * Reads rclone's `X-OC-Mtime` (seconds since the epoch, possibly fractional) into milliseconds;
 * undefined when absent or not a plausible time (CLIENT-QUIRKS §3).
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
