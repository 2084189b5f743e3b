/**
 * Revisions and the rows an upload writes (docs/store-semantics.md, "Upload"): one-shot upload
 * token rows (SQLite: a TEMP table of the connection; PostgreSQL: an UNLOGGED table every
 * instance sees), revision rows, and a new file with its first revision. No rules: ops/files.ts
 * decides what may be uploaded where.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';
import { adjustUsage } from './blobs.js';
import { touch, type NodeRow } from './nodes.js';

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
  (await insertRevision(sql, uuid, 1, blob, uploaderUuid));
  (await adjustUsage(sql, folder.owner_type, folder.owner_uuid, blob.sizeBytes));
  (await touch(sql, folder.uuid, blob.now));
  return { uuid, name, revision: 1, size: blob.sizeBytes };
}

/** One revision of a file; undefined when the file has no such revision. */
export function getRevision(sql: Sql, nodeUuid: string, revision: number): Promise<RevisionRow | undefined> {
  return sql.get<RevisionRow>('SELECT * FROM revisions WHERE node_uuid = ? AND revision = ?', [nodeUuid, revision]);
}
