/**
 * The queries of `driveway check` (ops/consistency-check.ts): what the counters the store keeps
 * (`disk_used` of users and groups, `blobs.refs`) should be, recomputed from the rows they
 * summarise, and the repairs that set them so. The definitions are the store's own:
 *   - an owner's `disk_used` is the size of every revision of every node it owns, the trash
 *     included (revisions.ts adjustUsage keeps it so, nodes.ts ownerBytes sums it);
 *   - a blob's `refs` is the number of revisions plus share snapshot entries naming it (the
 *     only two columns that refer to blobs: blob-refs.ts addBlobRef, revisions.ts addEntryRefs).
 * Each repair is one statement that recomputes inside its own transaction, so a write the
 * server commits meanwhile is counted, never overwritten with a stale number.
 */
import { ancestry, OWNER_TABLE, type NodeRow, type OwnerType } from './nodes.js';
import type { Sql } from './sql.js';

const STORED_BYTES = (owner: string) => `COALESCE((SELECT SUM(r.size) FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = ${owner}.uuid), 0)`;
const COUNTED_REFS = `((SELECT COUNT(*) FROM revisions r WHERE r.blob_hash = b.hash) + (SELECT COUNT(*) FROM snapshot_entries s WHERE s.blob_hash = b.hash))`;

export interface UsageSkew {
  ownerType: OwnerType;
  uuid: string;
  name: string;
  recordedBytes: number;
  storedBytes: number;
}

/** Users and groups whose `disk_used` is not what their revisions hold. */
export async function usageSkews(sql: Sql): Promise<UsageSkew[]> {
  const skews: UsageSkew[] = [];
  for (const [ownerType, name] of [['User', 'username'], ['Group', 'name']] as const) {
    const rows = await sql.all<{ uuid: string; name: string; recorded: number; stored: number }>(
      `SELECT o.uuid, o.${name} AS name, o.disk_used AS recorded, ${STORED_BYTES('o')} AS stored FROM ${OWNER_TABLE[ownerType]} o ORDER BY o.uuid`,
    );
    for (const row of rows) {
      if (Number(row.recorded) !== Number(row.stored)) {
        skews.push({ ownerType, uuid: row.uuid, name: row.name, recordedBytes: Number(row.recorded), storedBytes: Number(row.stored) });
      }
    }
  }
  return skews;
}

/** Sets the owner's `disk_used` to what its revisions hold now; answers the new value. */
export async function repairUsage(sql: Sql, ownerType: OwnerType, uuid: string): Promise<number> {
  return sql.transaction(async (tx) => {
    const table = OWNER_TABLE[ownerType];
    await tx.run(`UPDATE ${table} SET disk_used = ${STORED_BYTES(table)} WHERE uuid = ?`, [uuid]);
    return Number((await tx.get<{ n: number }>(`SELECT disk_used AS n FROM ${table} WHERE uuid = ?`, [uuid]))?.n ?? 0);
  });
}

export interface BlobRow {
  hash: string;
  sizeBytes: number;
  refs: number;
  countedRefs: number;
  /** Kept in its database row (small blobs) rather than in the blob backend. */
  isInline: boolean;
  /** The stored checksums (NULL until computed: migration 019). */
  sha1: string | null;
  md5: string | null;
}

/** One page of blob rows in hash order, after `after`, with the references counted. */
export async function blobRows(sql: Sql, after: string, limit: number): Promise<BlobRow[]> {
  const rows = await sql.all<{ hash: string; size: number; refs: number; counted: number; inline: number; sha1: string | null; md5: string | null }>(
    `SELECT b.hash, b.size, b.refs, ${COUNTED_REFS} AS counted, CASE WHEN b.data IS NULL THEN 0 ELSE 1 END AS inline, b.sha1, b.md5
       FROM blobs b WHERE b.hash > ? ORDER BY b.hash LIMIT ?`,
    [after, limit],
  );
  return rows.map((r) => ({
    hash: r.hash,
    sizeBytes: Number(r.size),
    refs: Number(r.refs),
    countedRefs: Number(r.counted),
    isInline: Number(r.inline) === 1,
    sha1: r.sha1,
    md5: r.md5,
  }));
}

/** The bytes of an inline blob; undefined when it is not (or no longer) in the database. */
export async function inlineBytes(sql: Sql, hash: string): Promise<Buffer | undefined> {
  const row = await sql.get<{ data: Buffer | null }>('SELECT data FROM blobs WHERE hash = ?', [hash]);
  return row?.data ?? undefined;
}

/**
 * Sets the blob's `refs` to the references counted now, and drops its row when there are none.
 * Answers the new count (0: the row is gone, and the bytes may be collected).
 */
export async function repairBlobRefs(sql: Sql, hash: string): Promise<number> {
  return sql.transaction(async (tx) => {
    await tx.run(`UPDATE blobs SET refs = (SELECT ${COUNTED_REFS} FROM blobs b WHERE b.hash = blobs.hash) WHERE hash = ?`, [hash]);
    await tx.run('DELETE FROM blobs WHERE hash = ? AND refs = 0', [hash]);
    return Number((await tx.get<{ n: number }>('SELECT refs AS n FROM blobs WHERE hash = ?', [hash]))?.n ?? 0);
  });
}

export interface BlobUse {
  /** `/<top-level kind>/<names...>` of the file, e.g. `/home/docs/a.txt`. */
  path: string;
  revision: number;
  ownerType: OwnerType;
  ownerName: string;
}

/** Up to `limit` revisions that name the blob, each with the file's path and owner (for the report). */
export async function blobUses(sql: Sql, hash: string, limit: number): Promise<BlobUse[]> {
  const rows = await sql.all<NodeRow & { rev: number; owner_name: string | null }>(
    `SELECT n.*, r.revision AS rev,
            COALESCE((SELECT u.username FROM users u WHERE u.uuid = n.owner_uuid), (SELECT g.name FROM groups g WHERE g.uuid = n.owner_uuid)) AS owner_name
       FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE r.blob_hash = ? ORDER BY n.uuid, r.revision LIMIT ?`,
    [hash, limit],
  );
  const uses: BlobUse[] = [];
  for (const row of rows) {
    const chain = await ancestry(sql, row);
    const names = chain.map((n) => (n.parent_uuid === null ? (n.top_kind ?? n.name) : n.name));
    uses.push({ path: `/${names.join('/')}`, revision: Number(row.rev), ownerType: row.owner_type, ownerName: row.owner_name ?? row.owner_uuid });
  }
  return uses;
}

/** Users plus groups: the owners whose `disk_used` a check compares. */
export async function ownerCount(sql: Sql): Promise<number> {
  return Number((await sql.get<{ n: number }>('SELECT (SELECT COUNT(*) FROM users) + (SELECT COUNT(*) FROM groups) AS n'))?.n ?? 0);
}
