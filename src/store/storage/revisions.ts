/**
 * Revisions and blobs: revision rows, blob reference counts and owner usage, the blob backends'
 * ledger of intents (sections below), and the rows an upload writes (docs/store-semantics.md, "Upload"): one-shot upload
 * token rows (SQLite: a TEMP table of the connection; PostgreSQL: an UNLOGGED table every
 * instance sees), revision rows, and a new file with its first revision. No rules: ops/files.ts
 * decides what may be uploaded where.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';
import { touch, type NodeRow, type OwnerType, type TreeEntry } from './nodes.js';
import type { BlobLedger, UploadIntent } from '../blobs/blob-backend.js';

export interface RevisionRow {
  node_uuid: string;
  revision: number;
  blob_hash: string;
  size: number;
  created: number;
  uploader_uuid: string | null;
}

export interface UploadResult {
  uuid: string;
  name: string;
  revision: number;
  size: number;
}

/** A blob already referenced (addBlobRef), to record at `now`. */
export interface StoredBlob {
  hash: string;
  sizeBytes: number;
  now: number;
}

export interface UploadTokenRow {
  user_uuid: string;
  session_id: string;
  target_uuid: string;
  created: number;
  used: number | null;
}

/** Stores a token's hash, dropping the tokens created before `forgetBefore`. */
export async function insertUploadToken(
  sql: Sql,
  tokenHash: string,
  row: { userUuid: string; sessionId: string; targetUuid: string; createdMs: number },
  forgetBefore: number,
): Promise<void> {
  await sql.run('DELETE FROM upload_tokens WHERE created < ?', [forgetBefore]);
  await sql.run('INSERT INTO upload_tokens (token_hash, user_uuid, session_id, target_uuid, created) VALUES (?, ?, ?, ?, ?)', [
    tokenHash,
    row.userUuid,
    row.sessionId,
    row.targetUuid,
    row.createdMs,
  ]);
}

export function uploadTokenRow(sql: Sql, tokenHash: string): Promise<UploadTokenRow | undefined> {
  return sql.get<UploadTokenRow>('SELECT user_uuid, session_id, target_uuid, created, used FROM upload_tokens WHERE token_hash = ?', [tokenHash]);
}

/** Marks the token used; false when it was used already. */
export async function markUploadTokenUsed(sql: Sql, tokenHash: string, nowMs: number): Promise<boolean> {
  return (await sql.run('UPDATE upload_tokens SET used = ? WHERE token_hash = ? AND used IS NULL', [nowMs, tokenHash])).changes > 0;
}

export async function insertRevision(sql: Sql, nodeUuid: string, revision: number, blob: StoredBlob, uploaderUuid: string | null): Promise<void> {
  await sql.run('INSERT INTO revisions (node_uuid, revision, blob_hash, size, created, uploader_uuid) VALUES (?, ?, ?, ?, ?, ?)', [
    nodeUuid,
    revision,
    blob.hash,
    blob.sizeBytes,
    blob.now,
    uploaderUuid,
  ]);
}

/** Points a file at its new latest revision. */
export async function setFileRevision(sql: Sql, nodeUuid: string, revision: number, sizeBytes: number, nowMs: number): Promise<void> {
  await sql.run('UPDATE nodes SET revision = ?, size = ?, updated = ? WHERE uuid = ?', [revision, sizeBytes, nowMs, nodeUuid]);
}

/**
 * Records `blob` as new file `name` (revision 1) in `folder`, adding its bytes to the folder
 * owner's usage and touching the folder. The caller checked the name, quota and blob reference.
 */
export async function insertNewFile(sql: Sql, folder: NodeRow, name: string, blob: StoredBlob, uploaderUuid: string | null): Promise<UploadResult> {
  const uuid = randomUUID();
  await sql.run(
    `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated, revision, size)
     VALUES (?, ?, ?, ?, NULL, ?, 'File', ?, ?, 1, ?)`,
    [uuid, folder.owner_uuid, folder.owner_type, folder.uuid, name, blob.now, blob.now, blob.sizeBytes],
  );
  await insertRevision(sql, uuid, 1, blob, uploaderUuid);
  await adjustUsage(sql, folder.owner_type, folder.owner_uuid, blob.sizeBytes);
  await touch(sql, folder.uuid, blob.now);
  return { uuid, name, revision: 1, size: blob.sizeBytes };
}

/** One revision of a file; undefined when the file has no such revision. */
export function getRevision(sql: Sql, nodeUuid: string, revision: number): Promise<RevisionRow | undefined> {
  return sql.get<RevisionRow>('SELECT * FROM revisions WHERE node_uuid = ? AND revision = ?', [nodeUuid, revision]);
}

// ---- blobs

/**
 * Blob reference counts and owner disk usage. Call inside the transaction that changes the
 * rows referring to blobs; unlink files only after that transaction committed.
 */

/**
 * Adds `count` references to a blob, creating its row at the first. `inline` holds the bytes of
 * a small blob kept in the database (blobs/staging.ts stage()); when the blob exists already (the
 * same bytes uploaded before, inline or as a file) the stored form is kept and `inline` dropped.
 */
export async function addBlobRef(sql: Sql, hash: string, sizeBytes: number, count = 1, inline?: Buffer): Promise<void> {
  await sql.run(`INSERT INTO blobs (hash, size, refs, data) VALUES (?, ?, ?, ?)
     ON CONFLICT(hash) DO UPDATE SET refs = blobs.refs + excluded.refs`, [hash, sizeBytes, count, inline ?? null]);
}

/** The bytes of a blob kept in the database; undefined for one kept as a file (or unknown). */
export async function inlineBlob(sql: Sql, hash: string): Promise<Buffer | undefined> {
  const row = (await sql.get('SELECT data FROM blobs WHERE hash = ?', [hash])) as { data: Buffer | null } | undefined;
  return row?.data ?? undefined;
}

/** Drops one reference; returns true when the blob is now unreferenced (row deleted). */
export async function releaseBlobRef(sql: Sql, hash: string): Promise<boolean> {
  await sql.run('UPDATE blobs SET refs = refs - 1 WHERE hash = ?', [hash]);
  const gone = await sql.run('DELETE FROM blobs WHERE hash = ? AND refs <= 0', [hash]);
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
  // The aliases quoted: PostgreSQL folds unquoted names to lower case.
  return sql.get<Usage>(`SELECT disk_quota AS "quotaBytes", disk_used AS "usedBytes" FROM ${OWNER_TABLE[ownerType]} WHERE uuid = ?`, [ownerUuid]);
}

/** Bytes the owner may still add; Infinity when unlimited. */
export async function remainingBytes(sql: Sql, ownerType: OwnerType, ownerUuid: string): Promise<number> {
  const usage = await usageOf(sql, ownerType, ownerUuid);
  if (!usage || usage.quotaBytes <= 0) return Number.POSITIVE_INFINITY;
  return Math.max(0, usage.quotaBytes - usage.usedBytes);
}

export async function adjustUsage(sql: Sql, ownerType: OwnerType, ownerUuid: string, deltaBytes: number): Promise<void> {
  if (deltaBytes === 0) return;
  await sql.run(`UPDATE ${OWNER_TABLE[ownerType]} SET disk_used = disk_used + ? WHERE uuid = ?`, [deltaBytes, ownerUuid]);
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
  for (const [hash, refs] of refsByHash) await addBlobRef(sql, hash, refs.sizeBytes, refs.count);
}

// ---- blob ledger

/**
 * The database side of the blob backends (blobs/blob-backend.ts BlobLedger): which blobs rows
 * refer to, and the intents of uploads and deletes (migration 011). Each method is one statement
 * or one transaction, so the check and the marker of beginDelete and beginUpload cannot
 * interleave, in this process or another instance on the same database.
 */

interface IntentRow {
  id: string;
  hash: string;
  key: string;
  upload_id: string | null;
  expires: number;
}

export function storageBlobLedger(sql: Sql): BlobLedger {
  return {
    isReferenced: (hash) => isBlobReferenced(sql, hash),
    beginUpload: (hash, key, nowMs, expiresMs) =>
      sql.transaction(async (tx) => {
        const deleting = await tx.get("SELECT 1 FROM blob_intents WHERE hash = ? AND kind = 'delete' AND expires > ?", [hash, nowMs]);
        if (deleting) return undefined;
        const id = randomUUID();
        await tx.run("INSERT INTO blob_intents (id, kind, hash, key, created, expires) VALUES (?, 'upload', ?, ?, ?, ?)", [id, hash, key, nowMs, expiresMs]);
        return id;
      }),
    updateUpload: async (id, change) => {
      if (change.uploadId === undefined && change.expiresMs === undefined) return;
      await sql.transaction(async (tx) => {
        if (change.uploadId !== undefined) await tx.run('UPDATE blob_intents SET upload_id = ? WHERE id = ?', [change.uploadId, id]);
        if (change.expiresMs !== undefined) await tx.run('UPDATE blob_intents SET expires = ? WHERE id = ?', [change.expiresMs, id]);
      });
    },
    endUpload: async (id) => {
      await sql.run('DELETE FROM blob_intents WHERE id = ?', [id]);
    },
    expiredUploads: async (nowMs, limit) =>
      (
        await sql.all<IntentRow>(
          "SELECT id, hash, key, upload_id, expires FROM blob_intents WHERE kind = 'upload' AND expires <= ? ORDER BY expires LIMIT ?",
          [nowMs, limit],
        )
      ).map((row): UploadIntent => ({ id: row.id, hash: row.hash, key: row.key, uploadId: row.upload_id ?? undefined, expiresMs: row.expires })),
    beginDelete: (hash, nowMs, expiresMs) =>
      sql.transaction(async (tx) => {
        // Markers a crash left behind (a delete never finished) expire; drop them here.
        await tx.run("DELETE FROM blob_intents WHERE kind = 'delete' AND expires <= ?", [nowMs]);
        if (await isBlobReferenced(tx, hash)) return undefined;
        const busy = await tx.get('SELECT 1 FROM blob_intents WHERE hash = ? AND expires > ?', [hash, nowMs]);
        if (busy) return undefined;
        const id = randomUUID();
        await tx.run("INSERT INTO blob_intents (id, kind, hash, key, created, expires) VALUES (?, 'delete', ?, '', ?, ?)", [id, hash, nowMs, expiresMs]);
        return id;
      }),
    endDelete: async (id) => {
      await sql.run('DELETE FROM blob_intents WHERE id = ?', [id]);
    },
  };
}
