/**
 * The bridge's numeric file ids and instance names (contracts/file-ids.ts; migration 027): the
 * rows of `dav_file_ids` and `dav_instance`, in whichever database holds the bridge's state.
 * A number, once read, never changes: kept in memory (bounded), so a listing asks the database
 * only for keys it has not seen. Several instances giving a number to one key at once agree:
 * the first INSERT wins, the others read its row.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { BRIDGE_FILE_ID_BASE, type FileIdRepository } from '../../contracts/file-ids.js';
import { jsonValues } from './portable.js';
import type { Sql } from './sql.js';

/** Keys per statement: far below both dialects' parameter limits. */
const KEYS_PER_INSERT = 200;

/** `n` characters of [a-z0-9], as Nextcloud's instance id is made. */
function randomName(n: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join('');
}

export class SqlFileIdRepository implements FileIdRepository {
  private readonly known = new LRUCache<string, number>({ max: 200_000 });
  private names: Promise<{ instanceId: string; dataFingerprint: string }> | undefined;

  constructor(private readonly sql: Sql) {}

  async numbersOf(keys: readonly string[]): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    const missing: string[] = [];
    for (const key of keys) {
      const n = this.known.get(key);
      if (n === undefined) missing.push(key);
      else found.set(key, n);
    }
    if (missing.length === 0) return found;
    const unique = [...new Set(missing)];
    const read = async (): Promise<Array<{ node_id: string; file_id: number }>> =>
      this.sql.all(`SELECT node_id, file_id FROM dav_file_ids WHERE node_id IN (${jsonValues(this.sql)})`, [JSON.stringify(unique)]);
    let rows = await read();
    if (rows.length < unique.length) {
      const have = new Set(rows.map((r) => r.node_id));
      // In one order for every caller: two instances inserting the same keys in other orders
      // (a listing and a reversed one) would each hold a key the other waits for, and PostgreSQL
      // would end one insert as a deadlock.
      const fresh = unique.filter((k) => !have.has(k)).sort();
      for (let i = 0; i < fresh.length; i += KEYS_PER_INSERT) {
        const chunk = fresh.slice(i, i + KEYS_PER_INSERT);
        await this.sql.run(`INSERT INTO dav_file_ids (node_id) VALUES ${chunk.map(() => '(?)').join(', ')} ON CONFLICT (node_id) DO NOTHING`, chunk);
      }
      rows = await read();
    }
    for (const row of rows) {
      const n = BRIDGE_FILE_ID_BASE + Number(row.file_id);
      this.known.set(row.node_id, n);
      found.set(row.node_id, n);
    }
    return found;
  }

  async keyOf(fileId: number): Promise<string | undefined> {
    if (fileId <= BRIDGE_FILE_ID_BASE) return undefined;
    const row = await this.sql.get<{ node_id: string }>('SELECT node_id FROM dav_file_ids WHERE file_id = ?', [fileId - BRIDGE_FILE_ID_BASE]);
    return row?.node_id;
  }

  instance(): Promise<{ instanceId: string; dataFingerprint: string }> {
    this.names ??= (async () => ({ instanceId: await this.named('instanceid', `oc${randomName(10)}`), dataFingerprint: await this.named('data_fingerprint', randomName(32)) }))();
    this.names.catch(() => (this.names = undefined));
    return this.names;
  }

  /** The value kept under `name`, `made` when there was none (the first instance's wins). */
  private async named(name: string, made: string): Promise<string> {
    await this.sql.run('INSERT INTO dav_instance (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [name, made]);
    return ((await this.sql.get<{ value: string }>('SELECT value FROM dav_instance WHERE name = ?', [name])) as { value: string }).value;
  }
}

/** What `driveway restore` does to the restored database: the fingerprint goes, so clients learn the data may be older than what they saw. */
export const FORGET_DATA_FINGERPRINT = "DELETE FROM dav_instance WHERE name = 'data_fingerprint'";
