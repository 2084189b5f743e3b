/**
 * Blob reference counts and owner disk usage. Call inside the transaction that changes the
 * rows referring to blobs; unlink files only after that transaction committed.
 */
import type { Db } from './dialects/sqlite-open.js';
import type { OwnerType } from './nodes.js';
import { quotaExceeded } from '../envelope.js';

/**
 * Adds `count` references to a blob, creating its row at the first. `inline` holds the bytes of
 * a small blob kept in the database (blobs/staging.ts stage()); when the blob exists already (the
 * same bytes uploaded before, inline or as a file) the stored form is kept and `inline` dropped.
 */
export function addBlobRef(db: Db, hash: string, sizeBytes: number, count = 1, inline?: Buffer): void {
  db.prepare(
    `INSERT INTO blobs (hash, size, refs, data) VALUES (?, ?, ?, ?)
     ON CONFLICT(hash) DO UPDATE SET refs = refs + excluded.refs`,
  ).run(hash, sizeBytes, count, inline ?? null);
}

/** The bytes of a blob kept in the database; undefined for one kept as a file (or unknown). */
export function inlineBlob(db: Db, hash: string): Buffer | undefined {
  const row = db.prepare('SELECT data FROM blobs WHERE hash = ?').get(hash) as { data: Buffer | null } | undefined;
  return row?.data ?? undefined;
}

/** Drops one reference; returns true when the blob is now unreferenced (row deleted). */
export function releaseBlobRef(db: Db, hash: string): boolean {
  db.prepare('UPDATE blobs SET refs = refs - 1 WHERE hash = ?').run(hash);
  const gone = db.prepare('DELETE FROM blobs WHERE hash = ? AND refs <= 0').run(hash);
  return gone.changes > 0;
}

export function isBlobReferenced(db: Db, hash: string): boolean {
  return db.prepare('SELECT 1 FROM blobs WHERE hash = ?').get(hash) !== undefined;
}

export interface Usage {
  quotaBytes: number; // 0 or negative: unlimited
  usedBytes: number;
}

/** Owners keep quota and usage in their own table: users or groups. */
export const OWNER_TABLE: Record<OwnerType, string> = { User: 'users', Group: 'groups' };

export function usageOf(db: Db, ownerType: OwnerType, ownerUuid: string): Usage | undefined {
  return db
    .prepare(`SELECT disk_quota AS quotaBytes, disk_used AS usedBytes FROM ${OWNER_TABLE[ownerType]} WHERE uuid = ?`)
    .get(ownerUuid) as Usage | undefined;
}

/** Bytes the owner may still add; Infinity when unlimited. */
export function remainingBytes(db: Db, ownerType: OwnerType, ownerUuid: string): number {
  const usage = usageOf(db, ownerType, ownerUuid);
  if (!usage || usage.quotaBytes <= 0) return Number.POSITIVE_INFINITY;
  return Math.max(0, usage.quotaBytes - usage.usedBytes);
}

/** Refuses (507) `bytes` more for an owner they would take over its quota. */
export function assertRoom(db: Db, owner: { owner_type: OwnerType; owner_uuid: string }, bytes: number): void {
  if (bytes > remainingBytes(db, owner.owner_type, owner.owner_uuid)) throw quotaExceeded();
}

export function adjustUsage(db: Db, ownerType: OwnerType, ownerUuid: string, deltaBytes: number): void {
  if (deltaBytes === 0) return;
  db.prepare(`UPDATE ${OWNER_TABLE[ownerType]} SET disk_used = disk_used + ? WHERE uuid = ?`).run(deltaBytes, ownerUuid);
}
