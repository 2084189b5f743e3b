/**
 * ownCloud's legacy chunked upload (`OC-Chunked: 1`), which the Nextcloud and ownCloud desktop
 * clients fall back on when the capabilities do not announce `dav.chunking` (the desktop's
 * propagateuploadv1.cpp; the server side was ownCloud's OC_FileChunking and Sabre's File.php
 * createFileChunked). A front door over the upload service, as nextcloud.ts and tus.ts are:
 *
 * - PUT `<folder>/<name>-chunking-<transfer>-<count>-<index>` with `OC-Chunked` (any value), on
 *   any path of the drive: chunk `index` (0-based) of `count` of the file `<folder>/<name>`. The
 *   chunk is a part of an upload session named by the target, the transfer id and the count
 *   (protocol `oc-chunked`; never a folder of the Nextcloud uploads space), held to the quota
 *   before its bytes land (OC-Total-Length reserved at the first chunk, each chunk's
 *   Content-Length, which it must have: 411) and expiring as any upload does
 *   (bridge.uploadExpirySec). Nothing is ever stored under the chunk's name.
 * - A name that does not decode (400), a count outside 1..10000 or an index not below it (400), a
 *   count other than the one the transfer's earlier chunks named (400): refused with nothing kept.
 * - Every chunk is checked against the target as a PUT of the target would be (commit.ts: 405 a
 *   collection there, 409 no folder, 403 without write or in a made-up place; If header and
 *   If-Match against the target's ETag, as ownCloud's ObjectTree maps a chunk's URL to its
 *   target: the desktop client sends `If-Match` with every chunk of an existing file; locks), so a
 *   conflict is 412 at the first chunk, before any byte.
 * - A chunk that leaves some missing: 201 with no ETag (the client takes an ETag as "the file is
 *   in"). The chunk that completes the set (the client sends the last one last, alone) assembles
 *   the file through the write path every upload ends in (nextcloud.ts assemble: commitWrite, the
 *   request's `OC-Checksum` verified and sane `X-OC-Mtime` kept) and answers 201 or 204 with
 *   ETag, OC-ETag, OC-FileId and `X-OC-Mtime: accepted`; a refusal there (412, 423, 507, 400 for
 *   a checksum) keeps the chunks, so the chunk sent again assembles.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { UploadSession } from '../../contracts/upload-sessions.js';
import { DavStatusError } from '../dav-errors.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { sendEmpty } from '../request/respond.js';
import { headerValue } from '../request/headers.js';
import type { BridgeUser } from '../sessions.js';
import { parentOf, type DavPath } from '../store-tree.js';
import { checkWritable } from '../commit.js';
import { UploadLimitError } from '../upload-service.js';
import { assemble, chunkLengthOf, MAX_CHUNKS, newTotalOf, receiveChunk, totalLengthOf, withSabreErrors } from './nextcloud.js';
import { limitRefusal, uploadQuotaAt } from './upload-quota.js';

/** `<name>-chunking-<transfer>-<count>-<index>` (OC_FileChunking::decodeName, anchored at the end). */
const CHUNK_NAME = /^(.+)-chunking-(\d{1,20})-(\d{1,9})-(\d{1,9})$/;

/** Whether a PUT is a legacy chunk: `OC-Chunked` present, as ownCloud tested it (isset). */
export function isOcChunked(req: IncomingMessage): boolean {
  return req.headers['oc-chunked'] !== undefined;
}

interface LegacyChunk {
  /** The file the chunks make. */
  target: DavPath;
  transfer: string;
  count: number;
  index: number;
}

/** The chunk a path names; 400 when its last segment is no legacy chunk name or its numbers do not fit. */
export function legacyChunkOf(path: DavPath): LegacyChunk {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const match = CHUNK_NAME.exec(name);
  if (!match) throw new DavStatusError(400, `OC-Chunked: ${JSON.stringify(name)} is not <name>-chunking-<transfer id>-<chunk count>-<index>`);
  const [, file, transfer, countDigits, indexDigits] = match as unknown as [string, string, string, string, string];
  const count = Number(countDigits);
  const index = Number(indexDigits);
  if (count < 1 || count > MAX_CHUNKS) throw new DavStatusError(400, `OC-Chunked: a file is sent in 1 to ${MAX_CHUNKS} chunks, not ${count}`);
  if (index >= count) throw new DavStatusError(400, `OC-Chunked: chunk index ${index} is out of range for ${count} chunks (0 to ${count - 1})`);
  const folder = parentOf(path);
  return { target: (folder === '/' ? `/${file}` : `${folder}/${file}`) as DavPath, transfer: String(BigInt(transfer)), count, index };
}

/**
 * The session of a transfer: one per target, transfer id and count, so two transfers' chunks
 * never mix. The target goes in as a hash: a session's name holds no `/`.
 */
function sessionName(chunk: LegacyChunk): string {
  return `${transferPrefix(chunk)}${chunk.count}:${createHash('sha256').update(chunk.target).digest('hex').slice(0, 32)}`;
}

function transferPrefix(chunk: LegacyChunk): string {
  return `oc-chunked:${chunk.transfer}:`;
}

/**
 * The transfer's live session, created at its first chunk (OC-Total-Length reserved of the quota
 * where the file goes: 507, 429 past bridge.uploadMaxOpenPerUser); 400 when an earlier chunk of
 * the same transfer named another count.
 */
async function sessionFor(ctx: DavContext, user: BridgeUser, chunk: LegacyChunk, totalBytes: number | undefined): Promise<UploadSession> {
  const { uploads } = ctx.services;
  const name = sessionName(chunk);
  const found = await uploads.find(user.userId, name);
  if (found) return found;
  const live = (await uploads.list(user.userId)).filter((s) => s.protocol === 'oc-chunked');
  // A chunk sent alongside made it meanwhile.
  const made = live.find((s) => s.name === name);
  if (made) return made;
  const sameTransfer = live.find((s) => s.destination === chunk.target && s.name.startsWith(transferPrefix(chunk)));
  if (sameTransfer) {
    throw new DavStatusError(400, `OC-Chunked: transfer ${chunk.transfer} of ${chunk.target} is in ${sameTransfer.name.split(':')[2]} chunks, not ${chunk.count}`);
  }
  const quota = await uploadQuotaAt(ctx, user, chunk.target);
  try {
    const created = await uploads.create(user.userId, name, 'oc-chunked', { destination: chunk.target, ...(totalBytes !== undefined ? { totalBytes } : {}) }, quota);
    // Two first chunks at once: the other made it.
    const session = created ?? (await uploads.find(user.userId, name));
    if (!session) throw new DavStatusError(409, 'OC-Chunked: the transfer’s upload went while this chunk arrived; send it again');
    return session;
  } catch (err) {
    if (err instanceof UploadLimitError) throw limitRefusal(err);
    throw err;
  }
}

/** PUT with `OC-Chunked`: see the top of this file. Refusals carry Sabre's error body, which the clients show. */
export const ocChunkedPut: VerbHandler = withSabreErrors(async (ctx) => {
  const user = ctx.user();
  const chunk = legacyChunkOf(ctx.path);
  if (ctx.req.headers['content-range'] !== undefined) throw new DavStatusError(400, 'PUT with Content-Range is not supported (RFC 9110 §14.5)');
  // The target as a PUT of it would find it (If and If-Match against its ETag, locks); the quota
  // is the session's reservations'.
  await checkWritable(ctx, user, { path: chunk.target, door: 'put', sizeBytes: undefined });
  const announced = chunkLengthOf(ctx.req);
  const total = totalLengthOf(ctx.req);
  const session = await sessionFor(ctx, user, chunk, total);
  if (ctx.services.uploads.isBusy(session)) throw new DavStatusError(423, 'the upload is being assembled');
  const newTotal = newTotalOf(session, total);
  // Index i is kept as i + 1: numbered chunks run 1..n in the upload service and the part stores.
  const order = { name: String(chunk.index), seq: chunk.index + 1, startByte: undefined };
  const stored = await receiveChunk(ctx, user, session, order, announced, { totalBytes: newTotal, destination: chunk.target });
  if (!stored) return;
  const parts = await ctx.services.uploads.parts(session);
  if (parts.length < chunk.count) {
    sendEmpty(ctx, 201);
    return;
  }
  const outcome = await assemble(ctx, user, session, chunk.target, total ?? session.totalBytes);
  sendEmpty(ctx, outcome.created ? 201 : 204, outcome.headers);
});
