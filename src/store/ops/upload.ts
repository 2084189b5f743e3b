/**
 * Uploads as operations (docs/api.md "Upload"; docs/store-semantics.md "Upload"): the upload token of
 * step 1, and storing a file's bytes, which step 2 of the HTTP upload and the in-process client
 * share. Storing: the bytes are staged while hashed (in memory for a small file, else a temp file
 * that is fsynced; an upload the bridge assembled in place is staged where it lies:
 * blobs/staged-parts.ts), a staged file is renamed to its content address, then ONE metadata
 * transaction records the file or the new revision (checking target, permission and quota again).
 * Whatever fails, no row refers to missing bytes and no unreferenced blob file stays.
 */
import type { Readable } from 'node:stream';
import { admitNode, resolveNode } from '../access.js';
import { AssembledFile } from '../blobs/staged-parts.js';
import { INLINE_MAX_BYTES, type StagedBlob } from '../blobs/staging.js';
import type { StoreContext } from '../context.js';
import { roomIn, uploadFacts, type UploadResult } from '../storage/revisions.js';
import { locatorOf, type NodeLocator, type NodeRow } from '../storage/nodes.js';
import { notFound, StoreHttpError } from '../envelope.js';
import { ocChecksumMismatch } from '../../common/oc-checksum.js';
import type { Checksums } from '../schemas/nodes.js';
import { assertUploadableUnder, commitUpload, consumeUploadToken, createUploadToken, uploaderOf } from './files.js';
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

export interface RedeemedUpload extends CheckedTarget {
  uploader: AuthenticatedUser;
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
  return { uploader, ...(await uploadTarget(ctx, uploader, grant.targetUuid)) };
}

/** Where an upload goes, as checked before a byte of it is read. */
export interface CheckedTarget {
  /** The target: `write` granted, not in trash or a virtual folder. */
  target: NodeRow;
  /** Bytes the target's owner may still add (Infinity when unlimited). */
  roomBytes: number;
}

/** Where an upload goes, checked before a byte is read (one round trip on PostgreSQL: uploadFacts); 404, 403 as resolveNode. */
export async function uploadTarget(ctx: StoreContext, uploader: AuthenticatedUser, id: string): Promise<CheckedTarget> {
  const where = locatorOf(id, uploader.userUuid);
  if (!where) throw notFound();
  const facts = await uploadFacts(ctx.storage.sql, where);
  const { node: target } = await admitNode(ctx.storage.sql, uploader, facts.target, 'write');
  assertUploadableUnder(facts.topKind);
  return { target, roomBytes: roomIn(facts.usage) };
}

/** The stored name: a new file's must pass the name rule (400); a new revision keeps the file's. */
export function uploadName(target: NodeRow, name: unknown): string {
  return target.type === 'Dir' ? assertValidName(name) : target.name;
}

export interface StoreFileOptions {
  signal?: AbortSignal;
  /** The client's OC-Checksum claim (`SHA1:<hex>`, …), verified before the upload is recorded. */
  checksum?: string | undefined;
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

/** An upload's answer: what was recorded, with the checksums computed while staging (docs/extensions.md "Checksums"). */
export type StoredUpload = UploadResult & { checksums: Checksums };

/**
 * Refuses a staged blob that contradicts the client's `OC-Checksum` claim (400
 * `checksum_mismatch`; the staged bytes dropped, nothing recorded): checked after staging, when
 * the hashes are known, and before anything is committed, so the old content stays.
 */
export async function assertClaimedChecksum(ctx: StoreContext, staged: StagedBlob, claim: string | undefined): Promise<void> {
  if (claim === undefined) return;
  const wrong = ocChecksumMismatch(claim, staged);
  if (wrong === undefined) return;
  staged.md5Later?.cancel();
  await ctx.blobs.discard(staged);
  throw new StoreHttpError(400, 'checksum_mismatch', `the content does not match its OC-Checksum ${wrong.algorithm}`);
}

/**
 * Records a staged blob as `name` in `target` (a folder), or as a new revision of `target` (a
 * file); `claim` is the client's OC-Checksum, refused when the bytes contradict it.
 */
export async function recordUpload(ctx: StoreContext, uploader: AuthenticatedUser, target: NodeLocator, name: string | undefined, staged: StagedBlob, claim?: string): Promise<StoredUpload> {
  await assertClaimedChecksum(ctx, staged, claim);
  const result = await commitStaged(ctx, staged, () =>
    commitUpload(ctx.storage.sql, {
      uploader,
      target,
      name,
      hash: staged.hash,
      sizeBytes: staged.sizeBytes,
      sha1: staged.sha1,
      md5: staged.md5,
      ...(staged.inline ? { inline: staged.inline } : {}),
      now: ctx.clock.now(),
    }),
  ).catch((err: unknown) => {
    staged.md5Later?.cancel();
    throw err;
  });
  // A large body's MD5 comes after the commit (ops/md5-later.ts); the answer lists what is known.
  if (staged.md5Later) {
    if (ctx.md5Later) ctx.md5Later.take(staged.hash, staged.sizeBytes, staged.md5Later);
    else staged.md5Later.cancel();
  }
  ctx.log.debug({ node: result.uuid, revision: result.revision, sizeBytes: result.size }, 'upload stored');
  return { ...result, checksums: staged.md5 === undefined ? { sha1: staged.sha1 } : { sha1: staged.sha1, md5: staged.md5 } };
}

/**
 * Stores `source` as `name` in `target` (a folder), or as a new revision of `target` (a file),
 * checked by uploadTarget. The quota is enforced while streaming (BlobTooLargeError from staging: the caller says 507).
 */
export async function storeFile(
  ctx: StoreContext,
  uploader: AuthenticatedUser,
  { target, roomBytes }: CheckedTarget,
  name: string,
  source: Readable | Buffer,
  options: StoreFileOptions = {},
): Promise<StoredUpload> {
  // An upload assembled in place (staged-parts.ts) is staged where it lies; else it is read.
  const inPlace = source instanceof AssembledFile ? await source.stageInPlace(roomBytes, options.signal) : undefined;
  const staged = inPlace ?? (await ctx.blobs.stage(source, roomBytes, options.signal, undefined, ctx.md5Later?.thresholdFor(options.checksum)));
  return recordUpload(ctx, uploader, { uuid: target.uuid }, name, staged, options.checksum);
}

/**
 * Stores a small body held whole (up to INLINE_MAX_BYTES: the bridge's PUT of a small file) as
 * `name` in folder `id`, or as a new revision of file `id`, without uploadTarget's checks
 * before the bytes: those exist to refuse a body before it is read, and this one is read. The
 * one transaction that records it makes every check (commitUpload: target, permission, trash
 * and virtual folders, the name, quota), so a refusal answers as it would have; over PostgreSQL
 * that is a round trip less for every small file.
 */
export async function storeWholeFile(ctx: StoreContext, uploader: AuthenticatedUser, id: string, name: string | undefined, body: Buffer, checksum?: string): Promise<StoredUpload> {
  if (body.length > INLINE_MAX_BYTES) throw new Error(`storeWholeFile takes bodies of up to ${INLINE_MAX_BYTES} bytes`);
  const where = locatorOf(id, uploader.userUuid);
  if (!where) throw notFound();
  return recordUpload(ctx, uploader, where, name, await ctx.blobs.stage(body), checksum);
}
