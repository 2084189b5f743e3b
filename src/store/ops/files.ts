/**
 * The rules of uploads (docs/store-semantics.md, "Upload"): upload tokens and the one metadata
 * transaction that records an uploaded blob as a new file or a new revision (the rows:
 * storage/revisions.ts). Who may
 * upload where is decided by resolveNode (access.ts); this module adds what the tree allows
 * (no uploads into virtual folders or trash) and the quota. It never touches blob files: the
 * caller stages and renames the bytes before commitUpload and unlinks them if it throws.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from '../storage/sql.js';
import {
  insertNewFile,
  insertNextRevision,
  insertUploadToken,
  markUploadTokenUsed,
  uploadFacts,
  uploadTokenRow,
  usageOf,
  type UploadResult,
} from '../storage/revisions.js';
import { topKindOf, VIRTUAL_KINDS, type NodeLocator, type NodeRow, type TopLevelKind } from '../storage/nodes.js';
import { assertValidName } from '../names.js';
import { admitNode, permissionsOn } from '../access.js';
import { sessionUser, type AuthenticatedUser } from '../sessions.js';
import { conflict, forbidden, quotaExceeded, StoreHttpError, unauthenticated } from '../envelope.js';
import { writesOf } from './tree.js';

/** Consumed and expired tokens are kept this long so a late retry learns why it failed. */
const TOKEN_RETENTION_MS = 60_000;

export interface UploadGrant {
  userUuid: string;
  sessionId: string;
  targetUuid: string;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Throws unless `target` may receive an upload: a folder outside the virtual folders and
 * trash (403 `virtual_folder`), or a file that does not lie in them either.
 */
export async function assertUploadTarget(sql: Sql, target: NodeRow): Promise<void> {
  assertUploadableUnder(await topKindOf(sql, target));
}

/** assertUploadTarget for a target whose top-level kind (topKindOf) was read already. */
export function assertUploadableUnder(top: TopLevelKind | null): void {
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
  await assertUploadTarget(sql, target);
  const token = randomBytes(32).toString('base64url');
  await sql.transaction((tx) =>
    insertUploadToken(tx, hashToken(token), { userUuid: caller.userUuid, sessionId: caller.sessionId, targetUuid: target.uuid, createdMs: now }, now - TOKEN_RETENTION_MS),
  );
  return token;
}

/**
 * Step 2 presents the token: checks and marks it used in one transaction, so it works once. 410 `upload_token_used` when unknown or already presented, 410
 * `upload_token_expired` when presented more than `ttlMs` after its creation. The bound is on
 * presenting the token; the transfer that follows may take as long as it needs.
 */
export async function consumeUploadToken(sql: Sql, token: string, now: number, ttlMs: number): Promise<UploadGrant> {
  return await sql.transaction(async (tx) => {
    const tokenHash = hashToken(token);
    const row = await uploadTokenRow(tx, tokenHash);
    if (!row || row.used !== null) throw new StoreHttpError(410, 'upload_token_used', 'upload token unknown or already used');
    if (now - row.created > ttlMs) throw new StoreHttpError(410, 'upload_token_expired', 'upload token expired');
    if (!(await markUploadTokenUsed(tx, tokenHash, now))) throw new StoreHttpError(410, 'upload_token_used', 'upload token unknown or already used');
    return { userUuid: row.user_uuid, sessionId: row.session_id, targetUuid: row.target_uuid };
  });
}

/**
 * The uploader named by a grant, as long as the session that asked for the token is still
 * live and its user active (logout or deactivation in between ends the upload: 401).
 */
export async function uploaderOf(sql: Sql, grant: UploadGrant, now: number): Promise<AuthenticatedUser> {
  const user = await sessionUser(sql, now, grant.sessionId);
  if (!user || user.userUuid !== grant.userUuid) throw unauthenticated('the session that asked for this upload token has ended');
  return user;
}

export interface CommitUpload {
  uploader: AuthenticatedUser;
  /** A folder (a new file) or a file (a new revision). */
  target: NodeLocator;
  /** The new file's name, checked here (400 `invalid_name`); unused for a file target (a new revision keeps its name). */
  name: string | undefined;
  hash: string;
  sizeBytes: number;
  /** The bytes of a small blob kept in its database row (blobs/staging.ts INLINE_MAX_BYTES). */
  inline?: Buffer;
  /** SHA-1 and MD5 computed while staging (MD5 absent when it comes after the commit: ops/md5-later.ts). */
  sha1: string;
  md5?: string | undefined;
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
  if (sql.dialect !== 'postgres' || sql.inTransaction) return await sql.transaction((tx) => recordUploadIn(tx, upload), writesOf(upload.uploader.userUuid));
  return await groupCommitted(sql, upload);
}

/**
 * Group commit of one writer's uploads on PostgreSQL. Their commits run one after the other
 * anyway (writesOf: they all change the writer's usage row), each waiting for the previous
 * one's round trips and WAL flush; so the commits that arrive while one runs wait together and
 * then go in ONE transaction, one after the other: an upload refused there (quota, a name taken
 * by a folder, a target gone) is refused before it wrote anything and is answered its error,
 * the others commit. A serialization failure still retries the whole transaction (the
 * dialect re-runs the work: every upload in it is checked and written again). A crash before
 * COMMIT records none of them: their blobs' intents stay until the collector sweeps them.
 * (No savepoint is needed: recordUploadIn refuses before it writes.)
 */
const GROUP_COMMIT_MAX = 32;
interface PendingUpload {
  upload: CommitUpload;
  resolve(result: UploadResult): void;
  reject(err: unknown): void;
}
const pendingByWriter = new WeakMap<Sql, Map<string, PendingUpload[]>>();

function groupCommitted(sql: Sql, upload: CommitUpload): Promise<UploadResult> {
  const writer = upload.uploader.userUuid;
  let byWriter = pendingByWriter.get(sql);
  if (!byWriter) pendingByWriter.set(sql, (byWriter = new Map()));
  return new Promise<UploadResult>((resolve, reject) => {
    const queue = byWriter.get(writer);
    if (queue) {
      queue.push({ upload, resolve, reject });
      return;
    }
    const started: PendingUpload[] = [{ upload, resolve, reject }];
    byWriter.set(writer, started);
    void drainUploads(sql, byWriter, writer, started);
  });
}

async function drainUploads(sql: Sql, byWriter: Map<string, PendingUpload[]>, writer: string, queue: PendingUpload[]): Promise<void> {
  while (queue.length > 0) {
    const batch = queue.splice(0, GROUP_COMMIT_MAX);
    let outcomes: Array<{ ok: true; result: UploadResult } | { ok: false; err: unknown }> = [];
    try {
      outcomes = await sql.transaction(async (tx) => {
        const done: typeof outcomes = [];
        for (const item of batch) {
          try {
            done.push({ ok: true, result: await recordUploadIn(tx, item.upload) });
          } catch (err) {
            // A refusal of this upload only (thrown before it wrote anything); anything else (the database) fails the batch.
            if (!(err instanceof StoreHttpError)) throw err;
            done.push({ ok: false, err });
          }
        }
        return done;
      }, writesOf(writer));
    } catch (err) {
      outcomes = batch.map(() => ({ ok: false, err }));
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) item.resolve(outcome.result);
      else item.reject(outcome ? outcome.err : new Error('upload not recorded'));
    });
  }
  byWriter.delete(writer);
}

/**
 * The upload's rows, in the transaction `tx`. Every check comes first, on what ONE read
 * (uploadFacts) found, and every refusal (a StoreHttpError) is thrown before the first write: so
 * an upload refused in a group commit leaves nothing to roll back and needs no savepoint. Then
 * the writes, one statement on PostgreSQL (insertNewFile, insertNextRevision).
 */
async function recordUploadIn(tx: Sql, upload: CommitUpload): Promise<UploadResult> {
  const { uploader, hash, sizeBytes, now } = upload;
  const facts = await uploadFacts(tx, upload.target, upload.name);
  const { node: target } = await admitNode(tx, uploader, facts.target, 'write');
  assertUploadableUnder(facts.topKind);

  let file: NodeRow | undefined;
  let name = target.name;
  if (target.type === 'File') {
    file = target;
  } else {
    name = assertValidName(upload.name);
    const existing = facts.existing;
    if (existing?.type === 'Dir') throw conflict(`a folder named ${JSON.stringify(name)} exists here`);
    if (existing && !(await permissionsOn(tx, uploader, existing)).includes('write')) throw forbidden('write permission required');
    file = existing;
  }
  const owner = file ?? target;
  // A folder's files are its owner's; should one not be, its own owner's quota is asked.
  const usage = owner.owner_uuid === target.owner_uuid && owner.owner_type === target.owner_type ? facts.usage : await usageOf(tx, owner.owner_type, owner.owner_uuid);
  if (usage && usage.quotaBytes > 0 && usage.usedBytes + sizeBytes > usage.quotaBytes) throw quotaExceeded();

  const blob = { hash, sizeBytes, now, inline: upload.inline, sha1: upload.sha1, md5: upload.md5 };
  return file ? await insertNextRevision(tx, file, blob, uploader.userUuid) : await insertNewFile(tx, target, name, blob, uploader.userUuid);
}
