/**
 * Files and their revisions (docs/store-semantics.md, "Upload"): upload tokens and the one
 * metadata transaction that records an uploaded blob as a new file or a new revision. Who may
 * upload where is decided by resolveNode (access.ts); this module adds what the tree allows
 * (no uploads into virtual folders or trash) and the quota. It never touches blob files: the
 * caller stages and renames the bytes before commitUpload and unlinks them if it throws.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from './dialects/sqlite-open.js';
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
export function assertUploadTarget(db: Db, target: NodeRow): void {
  const top = topKindOf(db, target);
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
export function createUploadToken(db: Db, now: number, caller: AuthenticatedUser, target: NodeRow): string {
  assertUploadTarget(db, target);
  const token = randomBytes(32).toString('base64url');
  db.transaction(() => {
    db.prepare('DELETE FROM upload_tokens WHERE created < ?').run(now - TOKEN_RETENTION_MS);
    db.prepare('INSERT INTO upload_tokens (token_hash, user_uuid, session_id, target_uuid, created) VALUES (?, ?, ?, ?, ?)').run(
      hashToken(token),
      caller.userUuid,
      caller.sessionId,
      target.uuid,
      now,
    );
  })();
  return token;
}

/**
 * Step 2 presents the token: checks and marks it used in one transaction, so it works once. 410 `upload_token_used` when unknown or already presented, 410
 * `upload_token_expired` when presented more than `ttlMs` after its creation. The bound is on
 * presenting the token; the transfer that follows may take as long as it needs.
 */
export function consumeUploadToken(db: Db, token: string, now: number, ttlMs: number): UploadGrant {
  return db.transaction(() => {
    const row = db
      .prepare('SELECT user_uuid, session_id, target_uuid, created, used FROM upload_tokens WHERE token_hash = ?')
      .get(hashToken(token)) as
      | { user_uuid: string; session_id: string; target_uuid: string; created: number; used: number | null }
      | undefined;
    if (!row || row.used !== null) throw new StoreHttpError(410, 'upload_token_used', 'upload token unknown or already used');
    if (now - row.created > ttlMs) throw new StoreHttpError(410, 'upload_token_expired', 'upload token expired');
    db.prepare('UPDATE upload_tokens SET used = ? WHERE token_hash = ? AND used IS NULL').run(now, hashToken(token));
    return { userUuid: row.user_uuid, sessionId: row.session_id, targetUuid: row.target_uuid };
  })();
}

/**
 * The uploader named by a grant, as long as the session that asked for the token is still
 * live and its user active (logout or deactivation in between ends the upload: 401).
 */
export function uploaderOf(db: Db, grant: UploadGrant, now: number): AuthenticatedUser {
  const user = sessionUser(db, now, grant.sessionId);
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
export function commitUpload(db: Db, upload: CommitUpload): UploadResult {
  const { uploader, hash, sizeBytes, now } = upload;
  return db.transaction((): UploadResult => {
    const target = resolveNode(db, uploader, upload.targetUuid, 'write');
    assertUploadTarget(db, target);

    let file: NodeRow | undefined;
    if (target.type === 'File') {
      file = target;
    } else {
      const existing = getChildByName(db, target.uuid, upload.name);
      if (existing?.type === 'Dir') throw conflict(`a folder named ${JSON.stringify(upload.name)} exists here`);
      if (existing && !permissionsOn(db, uploader, existing).includes('write')) throw forbidden('write permission required');
      file = existing;
    }
    const owner = file ?? target;
    const usage = usageOf(db, owner.owner_type, owner.owner_uuid);
    if (usage && usage.quotaBytes > 0 && usage.usedBytes + sizeBytes > usage.quotaBytes) throw quotaExceeded();

    addBlobRef(db, hash, sizeBytes, 1, upload.inline);
    let result: UploadResult;
    if (file) {
      const revision = (file.revision ?? 0) + 1;
      db.prepare('UPDATE nodes SET revision = ?, size = ?, updated = ? WHERE uuid = ?').run(revision, sizeBytes, now, file.uuid);
      result = { uuid: file.uuid, name: file.name, revision, size: sizeBytes };
      insertRevision(db, result.uuid, result.revision, upload, uploader.userUuid);
      adjustUsage(db, owner.owner_type, owner.owner_uuid, sizeBytes);
      if (file.parent_uuid !== null) touch(db, file.parent_uuid, now);
    } else {
      result = insertNewFile(db, target, upload.name, upload, uploader.userUuid);
    }
    return result;
  })();
}

function insertRevision(db: Db, nodeUuid: string, revision: number, blob: StoredBlob, uploaderUuid: string | null): void {
  db.prepare('INSERT INTO revisions (node_uuid, revision, blob_hash, size, created, uploader_uuid) VALUES (?, ?, ?, ?, ?, ?)').run(
    nodeUuid,
    revision,
    blob.hash,
    blob.sizeBytes,
    blob.now,
    uploaderUuid,
  );
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
export function insertNewFile(db: Db, folder: NodeRow, name: string, blob: StoredBlob, uploaderUuid: string | null): UploadResult {
  const uuid = randomUUID();
  db.prepare(
    `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated, revision, size)
     VALUES (?, ?, ?, ?, NULL, ?, 'File', ?, ?, 1, ?)`,
  ).run(uuid, folder.owner_uuid, folder.owner_type, folder.uuid, name, blob.now, blob.now, blob.sizeBytes);
  insertRevision(db, uuid, 1, blob, uploaderUuid);
  adjustUsage(db, folder.owner_type, folder.owner_uuid, blob.sizeBytes);
  touch(db, folder.uuid, blob.now);
  return { uuid, name, revision: 1, size: blob.sizeBytes };
}

/** One revision of a file; undefined when the file has no such revision. */
export function getRevision(db: Db, nodeUuid: string, revision: number): RevisionRow | undefined {
  return db.prepare('SELECT * FROM revisions WHERE node_uuid = ? AND revision = ?').get(nodeUuid, revision) as RevisionRow | undefined;
}
