/**
 * Uploads as operations (docs/api.md "Upload"; docs/store-semantics.md "Upload"): the upload token of
 * step 1, and storing a file's bytes, which step 2 of the HTTP upload and the in-process client
 * share. Storing: the bytes are staged while hashed (in memory for a small file, else a temp file
 * that is fsynced), a staged file is renamed to its content address, then ONE metadata
 * transaction records the file or the new revision (checking target, permission and quota again).
 * Whatever fails, no row refers to missing bytes and no unreferenced blob file stays.
 */
import type { Readable } from 'node:stream';
import { resolveNode } from '../access.js';
import type { StagedBlob } from '../blobs/staging.js';
import type { StoreContext } from '../context.js';
import { remainingBytes, type UploadResult } from '../storage/revisions.js';
import type { NodeRow } from '../storage/nodes.js';
import { assertUploadTarget, commitUpload, consumeUploadToken, createUploadToken, uploaderOf } from './files.js';
import { assertValidName } from '../names.js';
import type { AuthenticatedUser } from '../sessions.js';

export interface UploadToken {
  token: string;
  /** A new file in a folder, or a new revision of a file. */
  kind: 'file' | 'revision';
}

/** Step 1: a single-use token for a folder (new file) or a file (new revision); `write` needed. */
export async function issueUploadToken(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<UploadToken> {
  const target = await resolveNode(ctx.storage.sql, caller, id, 'write');
  return { token: await createUploadToken(ctx.storage.sql, ctx.clock.now(), caller, target), kind: target.type === 'Dir' ? 'file' : 'revision' };
}

export interface RedeemedUpload {
  uploader: AuthenticatedUser;
  target: NodeRow;
  /** Bytes the target's owner may still add (Infinity when unlimited). */
  roomBytes: number;
}

/**
 * Step 2 of the HTTP upload, before a byte of the body is read: the token is spent (410 when
 * unknown, used or expired), the session that asked for it must still be live (401), `admit`
 * applies the route's policy to the uploader, and the target is checked again.
 */
export async function redeemUploadToken(ctx: StoreContext, token: string, admit: (uploader: AuthenticatedUser) => void): Promise<RedeemedUpload> {
  const { clock, config } = ctx;
  const grant = await consumeUploadToken(ctx.storage.sql, token, clock.now(), config.store.uploadTokenTtlMs);
  const uploader = await uploaderOf(ctx.storage.sql, grant, clock.now());
  admit(uploader);
  const target = await uploadTarget(ctx, uploader, grant.targetUuid);
  return { uploader, target, roomBytes: await remainingBytes(ctx.storage.sql, target.owner_type, target.owner_uuid) };
}

/** Where an upload goes, checked before a byte is read: `write` on the target, not in trash or a virtual folder. */
export async function uploadTarget(ctx: StoreContext, uploader: AuthenticatedUser, id: string): Promise<NodeRow> {
  const target = await resolveNode(ctx.storage.sql, uploader, id, 'write');
  await assertUploadTarget(ctx.storage.sql, target);
  return target;
}

/** The stored name: a new file's must pass the name rule (400); a new revision keeps the file's. */
export function uploadName(target: NodeRow, name: unknown): string {
  return target.type === 'Dir' ? assertValidName(name) : target.name;
}

export interface StoreFileOptions {
  signal?: AbortSignal;
}

/**
 * Stores a staged blob with the blob backend (a small one has nothing to store: its bytes go
 * into its row), then runs `record`, the one metadata transaction that refers to it. When either
 * fails, the stored blob goes unless another row shares the bytes.
 */
export async function commitStaged<T>(ctx: StoreContext, staged: StagedBlob, record: () => Promise<T>): Promise<T> {
  const { blobs } = ctx;
  try {
    await blobs.commit(staged);
  } catch (err) {
    await blobs.discard(staged);
    await blobs.release(staged.hash);
    await blobs.remove(staged.hash);
    throw err;
  }
  let recorded: T;
  try {
    recorded = await record();
  } catch (err) {
    await blobs.release(staged.hash);
    if (staged.tempPath !== undefined) await blobs.remove(staged.hash);
    throw err;
  }
  await blobs.release(staged.hash);
  return recorded;
}

/** Records a staged blob as `name` in `target` (a folder), or as a new revision of `target` (a file). */
export async function recordUpload(ctx: StoreContext, uploader: AuthenticatedUser, target: NodeRow, name: string, staged: StagedBlob): Promise<UploadResult> {
  const result = await commitStaged(ctx, staged, () =>
    commitUpload(ctx.storage.sql, {
      uploader,
      targetUuid: target.uuid,
      name,
      hash: staged.hash,
      sizeBytes: staged.sizeBytes,
      ...(staged.inline ? { inline: staged.inline } : {}),
      now: ctx.clock.now(),
    }),
  );
  ctx.log.debug({ node: result.uuid, revision: result.revision, sizeBytes: result.size }, 'upload stored');
  return result;
}

/**
 * Stores `source` as `name` in `target` (a folder), or as a new revision of `target` (a file).
 * The quota is enforced while streaming (BlobTooLargeError from staging: the caller says 507).
 */
export async function storeFile(
  ctx: StoreContext,
  uploader: AuthenticatedUser,
  target: NodeRow,
  name: string,
  source: Readable | Buffer,
  options: StoreFileOptions = {},
): Promise<UploadResult> {
  const staged = await ctx.blobs.stage(source, await remainingBytes(ctx.storage.sql, target.owner_type, target.owner_uuid), options.signal);
  return recordUpload(ctx, uploader, target, name, staged);
}
