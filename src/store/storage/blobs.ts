/**
 * Blob reference counts and owner disk usage. Call inside the transaction that changes the
 * rows referring to blobs; unlink files only after that transaction committed.
 */
import type { Sql } from './sql.js';
import type { OwnerType } from './nodes.js';
import type { TreeEntry } from './nodes.js';

/**
 * Adds `count` references to a blob, creating its row at the first. `inline` holds the bytes of
 * a small blob kept in the database (blobs/staging.ts stage()); when the blob exists already (the
 * same bytes uploaded before, inline or as a file) the stored form is kept and `inline` dropped.
 */
export async function addBlobRef(sql: Sql, hash: string, sizeBytes: number, count = 1, inline?: Buffer): Promise<void> {
  (await sql.run(`INSERT INTO blobs (hash, size, refs, data) VALUES (?, ?, ?, ?)
     ON CONFLICT(hash) DO UPDATE SET refs = blobs.refs + excluded.refs`, [hash, sizeBytes, count, inline ?? null]));
}

/** The bytes of a blob kept in the database; undefined for one kept as a file (or unknown). */
export async function inlineBlob(sql: Sql, hash: string): Promise<Buffer | undefined> {
  const row = (await sql.get('SELECT data FROM blobs WHERE hash = ?', [hash])) as { data: Buffer | null } | undefined;
  return row?.data ?? undefined;
}

/** Drops one reference; returns true when the blob is now unreferenced (row deleted). */
export async function releaseBlobRef(sql: Sql, hash: string): Promise<boolean> {
  (await sql.run('UPDATE blobs SET refs = refs - 1 WHERE hash = ?', [hash]));
  const gone = (await sql.run('DELETE FROM blobs WHERE hash = ? AND refs <= 0', [hash]));
  return gone.changes > 0;
}

export async function isBlobReferenced(sql: Sql, hash: string): Promise<boolean> {
  return (await sql.get('SELECT 1 FROM blobs WHERE hash = ?', [hash])) !== undefined;
}

export interface Usage {
  quotaBytes: number; // 0 or negative: unlimited
  usedBytes: number;
}

/** Owners keep quota and usage in their own table: users or groups. */
export const OWNER_TABLE: Record<OwnerType, string> = { User: 'users', Group: 'groups' };

export async function usageOf(sql: Sql, ownerType: OwnerType, ownerUuid: string): Promise<Usage | undefined> {
  return (await sql.get(`SELECT disk_quota AS quotaBytes, disk_used AS usedBytes FROM ${OWNER_TABLE[ownerType]} WHERE uuid = ?`, [ownerUuid])) as Usage | undefined;
}

/** Bytes the owner may still add; Infinity when unlimited. */
export async function remainingBytes(sql: Sql, ownerType: OwnerType, ownerUuid: string): Promise<number> {
  const usage = (await usageOf(sql, ownerType, ownerUuid));
  if (!usage || usage.quotaBytes <= 0) return Number.POSITIVE_INFINITY;
  return Math.max(0, usage.quotaBytes - usage.usedBytes);
}


export async function adjustUsage(sql: Sql, ownerType: OwnerType, ownerUuid: string, deltaBytes: number): Promise<void> {
  if (deltaBytes === 0) return;
  (await sql.run(`UPDATE ${OWNER_TABLE[ownerType]} SET disk_used = disk_used + ? WHERE uuid = ?`, [deltaBytes, ownerUuid]));
}

/** One reference per file entry, counted per blob. */
export async function addEntryRefs(sql: Sql, entries: readonly TreeEntry[]): Promise<void> {
  const refsByHash = new Map<string, { sizeBytes: number; count: number }>();
  for (const entry of entries) {
    if (entry.blobHash === null) continue;
    const refs = refsByHash.get(entry.blobHash);
    if (refs) refs.count += 1;
    else refsByHash.set(entry.blobHash, { sizeBytes: entry.size, count: 1 });
  }
  for (const [hash, refs] of refsByHash) (await addBlobRef(sql, hash, refs.sizeBytes, refs.count));
}
