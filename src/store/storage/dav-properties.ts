/**
 * The storage layer's repository of dead properties and client mtimes: the PropertyRepository
 * contract (contracts/dav-properties.ts) over the `dav_properties` and `dav_client_mtimes` tables
 * (migration 012) through one `Sql` handle, SQLite or PostgreSQL. Owns these tables only; never
 * interprets a property's XML.
 *
 * Each row records the owner it is charged to; triggers (SQL in SQLite, PL/pgSQL in PostgreSQL)
 * keep a per-owner total in the same transaction as every insert, update and delete, so the count
 * is exact whatever removes rows (PROPPATCH remove, DELETE for good, COPY replacing a node) and
 * checking it costs one row read. A change is measured before it is written and refused without
 * writing, so no transaction rolls back for a limit (see dav-locks.ts on why that matters while
 * the store shares the connection).
 */
import {
  DeadPropertyLimitError,
  type DeadProperty,
  type DeadPropertyChange,
  type DeadPropertyStoreOptions,
  type PropertyRepository,
} from '../../contracts/dav-properties.js';
import type { Sql } from './sql.js';
import { inKeys } from './sql-lists.js';

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
