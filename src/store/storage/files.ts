/**
 * Files and their revisions (docs/store-semantics.md, "Upload"): upload tokens and the one
 * metadata transaction that records an uploaded blob as a new file or a new revision. Who may
 * upload where is decided by resolveNode (access.ts); this module adds what the tree allows
 * (no uploads into virtual folders or trash) and the quota. It never touches blob files: the
 * caller stages and renames the bytes before commitUpload and unlinks them if it throws.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';
import { addBlobRef, adjustUsage, usageOf } from './blobs.js';
import { getChildByName, topKindOf, touch, VIRTUAL_KINDS, type NodeRow } from './nodes.js';
import { permissionsOn, resolveNode } from '../access.js';
import { sessionUser, type AuthenticatedUser } from '../sessions.js';
import { conflict, forbidden, quotaExceeded, StoreHttpError, unauthenticated } from '../envelope.js';

/** Consumed and expired tokens are kept this long so a late retry learns why it failed. */
const TOKEN_RETENTION_MS = 60_000;

export interface RevisionRow {
  node_uuid: string;
  revision: number;
  blob_hash: string;
  size: number;
  created: number;
  uploader_uuid: string | null;
}

export interface UploadGrant {
  userUuid: string;
  sessionId: string;
  targetUuid: string;
}

export interface UploadResult {
  uuid: string;
  name: string;
  revision: number;
  size: number;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Throws unless `target` may receive an upload: a folder outside the virtual folders and
 * trash (403 `virtual_folder`), or a file that does not lie in them either.
 */
export async function assertUploadTarget(sql: Sql, target: NodeRow): Promise<void> {
  const top = (await topKindOf(sql, target));
  if (top !== null && VIRTUAL_KINDS.has(top)) {
    throw forbidden(`nothing can be uploaded into ${top}`, 'virtual_folder');
  }
  if (top === 'trash') throw forbidden('nothing can be uploaded into trash; restore the node first', 'virtual_folder');
}

/**
 * Step 1 of an upload: a fresh single-use token bound to the caller, their session and the
 * target (a folder for a new file, a file for a new revision). Only the token's SHA-256 is
 * stored. The caller has already resolved `target` with the `write` permission.
 */
export async function createUploadToken(sql: Sql, now: number, caller: AuthenticatedUser, target: NodeRow): Promise<string> {
  (await assertUploadTarget(sql, target));
  const token = randomBytes(32).toString('base64url');
  (await sql.transaction(async (tx) => {
    (await tx.run('DELETE FROM upload_tokens WHERE created < ?', [now - TOKEN_RETENTION_MS]));
    (await tx.run('INSERT INTO upload_tokens (token_hash, user_uuid, session_id, target_uuid, created) VALUES (?, ?, ?, ?, ?)', [hashToken(token),
      caller.userUuid,
      caller.sessionId,
      target.uuid,
      now]));
  }));
  return token;
}

/**
 * Step 2 presents the token: checks and marks it used in one transaction, so it works once. 410 `upload_token_used` when unknown or already presented, 410
 * `upload_token_expired` when presented more than `ttlMs` after its creation. The bound is on
 * presenting the token; the transfer that follows may take as long as it needs.
 */
export async function consumeUploadToken(sql: Sql, token: string, now: number, ttlMs: number): Promise<UploadGrant> {
  return (await sql.transaction(async (tx) => {
    const row = (await tx.get('SELECT user_uuid, session_id, target_uuid, created, used FROM upload_tokens WHERE token_hash = ?', [hashToken(token)])) as
      | { user_uuid: string; session_id: string; target_uuid: string; created: number; used: number | null }
      | undefined;
    if (!row || row.used !== null) throw new StoreHttpError(410, 'upload_token_used', 'upload token unknown or already used');
    if (now - row.created > ttlMs) throw new StoreHttpError(410, 'upload_token_expired', 'upload token expired');
    (await tx.run('UPDATE upload_tokens SET used = ? WHERE token_hash = ? AND used IS NULL', [now, hashToken(token)]));
    return { userUuid: row.user_uuid, sessionId: row.session_id, targetUuid: row.target_uuid };
  }));
}

/**
 * The uploader named by a grant, as long as the session that asked for the token is still
 * live and its user active (logout or deactivation in between ends the upload: 401).
 */
export async function uploaderOf(sql: Sql, grant: UploadGrant, now: number): Promise<AuthenticatedUser> {
  const user = (await sessionUser(sql, now, grant.sessionId));
  if (!user || user.userUuid !== grant.userUuid) throw unauthenticated('the session that asked for this upload token has ended');
  return user;
}

export interface CommitUpload {
  uploader: AuthenticatedUser;
  targetUuid: string;
  /** Name of the part; used only when the target is a folder (a new revision keeps its name). */
  name: string;
  hash: string;
  sizeBytes: number;
  /** The bytes of a small blob kept in its database row (blobs/staging.ts INLINE_MAX_BYTES). */
  inline?: Buffer;
  now: number;
}

/**
 * Records an uploaded blob in ONE transaction: checks the target again (it may have moved,
 * been deleted or lost its permission while the bytes streamed), checks the quota again
 * (another upload may have finished first), adds the blob reference, creates the file at
 * revision 1 or adds revision n+1, and updates size, revision, times and disk usage.
 * Throws 404/403 for the target, 409 `name_conflict` when a folder holds the name, 507
 * `quota_exceeded`; nothing is written then.
 */
export async function commitUpload(sql: Sql, upload: CommitUpload): Promise<UploadResult> {
  const { uploader, hash, sizeBytes, now } = upload;
  return (await sql.transaction(async (tx): Promise<UploadResult> => {
    const target = (await resolveNode(tx, uploader, upload.targetUuid, 'write'));
    (await assertUploadTarget(tx, target));

    let file: NodeRow | undefined;
    if (target.type === 'File') {
      file = target;
    } else {
      const existing = (await getChildByName(tx, target.uuid, upload.name));
      if (existing?.type === 'Dir') throw conflict(`a folder named ${JSON.stringify(upload.name)} exists here`);
      if (existing && !(await permissionsOn(tx, uploader, existing)).includes('write')) throw forbidden('write permission required');
      file = existing;
    }
    const owner = file ?? target;
    const usage = (await usageOf(tx, owner.owner_type, owner.owner_uuid));
    if (usage && usage.quotaBytes > 0 && usage.usedBytes + sizeBytes > usage.quotaBytes) throw quotaExceeded();

    (await addBlobRef(tx, hash, sizeBytes, 1, upload.inline));
    let result: UploadResult;
    if (file) {
      const revision = (file.revision ?? 0) + 1;
      (await tx.run('UPDATE nodes SET revision = ?, size = ?, updated = ? WHERE uuid = ?', [revision, sizeBytes, now, file.uuid]));
      result = { uuid: file.uuid, name: file.name, revision, size: sizeBytes };
      (await insertRevision(tx, result.uuid, result.revision, upload, uploader.userUuid));
      (await adjustUsage(tx, owner.owner_type, owner.owner_uuid, sizeBytes));
      if (file.parent_uuid !== null) (await touch(tx, file.parent_uuid, now));
    } else {
      result = (await insertNewFile(tx, target, upload.name, upload, uploader.userUuid));
    }
    return result;
  }));
}

async function insertRevision(sql: Sql, nodeUuid: string, revision: number, blob: StoredBlob, uploaderUuid: string | null): Promise<void> {
  (await sql.run('INSERT INTO revisions (node_uuid, revision, blob_hash, size, created, uploader_uuid) VALUES (?, ?, ?, ?, ?, ?)', [nodeUuid,
    revision,
    blob.hash,
    blob.sizeBytes,
    blob.now,
    uploaderUuid]));
}

/** A blob already referenced (addBlobRef), to record at `now`. */
export interface StoredBlob {
  hash: string;
  sizeBytes: number;
  now: number;
}

/**
 * Records `blob` as new file `name` (revision 1) in `folder`, adding its bytes to the folder
 * owner's usage and touching the folder. The caller checked the name, quota and blob reference.
 */
export async function insertNewFile(sql: Sql, folder: NodeRow, name: string, blob: StoredBlob, uploaderUuid: string | null): Promise<UploadResult> {
  const uuid = randomUUID();
  (await sql.run(`INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated, revision, size)
     VALUES (?, ?, ?, ?, NULL, ?, 'File', ?, ?, 1, ?)`, [uuid, folder.owner_uuid, folder.owner_type, folder.uuid, name, blob.now, blob.now, blob.sizeBytes]));
  (await insertRevision(sql, uuid, 1, blob, uploaderUuid));
  (await adjustUsage(sql, folder.owner_type, folder.owner_uuid, blob.sizeBytes));
  (await touch(sql, folder.uuid, blob.now));
  return { uuid, name, revision: 1, size: blob.sizeBytes };
}

/** One revision of a file; undefined when the file has no such revision. */
export async function getRevision(sql: Sql, nodeUuid: string, revision: number): Promise<RevisionRow | undefined> {
  return (await sql.get('SELECT * FROM revisions WHERE node_uuid = ? AND revision = ?', [nodeUuid, revision])) as RevisionRow | undefined;
}
