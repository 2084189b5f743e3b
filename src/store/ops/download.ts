/**
 * View and download as operations (docs/api.md "View and download"): which revision of which file a
 * caller may read, and its bytes, whole or one range. The HTTP route (routes/resources.ts) adds
 * the conditional headers; the in-process client streams the same bytes without HTTP. A blob is
 * read from its database row (small files) or from the blob backend: a local file in 1 MiB
 * pieces into reused buffers, an S3 object as its body streams in; a range reads only its bytes.
 */
import { Readable, type Writable } from 'node:stream';
import { assertMayActAsOwner, resolveApproverPreview, resolveNodeAccess } from '../access.js';
import type { BlobRange, BlobReader } from '../blobs/blob-backend.js';
import type { StoreContext } from '../context.js';
import { inlineBlob } from '../storage/blob-refs.js';
import { getRevision, type RevisionRow } from '../storage/revisions.js';
import type { NodeRow } from '../storage/nodes.js';
import { invalid, notFound } from '../envelope.js';
import type { AuthenticatedUser } from '../sessions.js';

/** The "latest version" selector (docs/api.md "View and download"). */
export const LATEST_VERSION = '999999999999999';

export interface FileVersion {
  node: NodeRow;
  revision: RevisionRow;
  /** `"<uuid>-<revision>"`: strong, changes with every revision. */
  etag: string;
}

/**
 * The revision `version` names (a number, or LATEST_VERSION) of a file the caller may download.
 * 400 for a version that is no number; 404 for an unknown file, one the caller may not see, a
 * folder (it has no bytes: answering as for an unknown id keeps the two apart from nobody) and an
 * unknown revision; 403 when the caller sees the file without `download`, and for any revision
 * but the current one when a share is what lets them download it (access.ts mayActAsOwner:
 * asked before the revision is looked up, so the answer tells nothing about which are kept).
 */
export async function fileVersion(ctx: StoreContext, caller: AuthenticatedUser, uuid: string, version: string = LATEST_VERSION): Promise<FileVersion> {
  if (!/^\d{1,20}$/.test(version)) throw invalid(`version must be a revision number or ${LATEST_VERSION}`);
  const { node, access } = await resolveNodeAccess(ctx.storage.sql, caller, uuid, 'download');
  if (node.type !== 'File' || node.revision === null) throw notFound();
  const wanted = version === LATEST_VERSION ? node.revision : Number(version);
  if (wanted !== node.revision) assertMayActAsOwner(access, 'download-old-revision');
  const revision = Number.isSafeInteger(wanted) ? (await getRevision(ctx.storage.sql, node.uuid, wanted)) : undefined;
  if (!revision) throw notFound('no such revision');
  return { node, revision, etag: `"${node.uuid}-${revision.revision}"` };
}

/**
 * The latest revision of the file of a share request waiting for the caller's decision
 * (access.ts resolveApproverPreview): what an approver previews before deciding.
 */
export async function pendingFileVersion(ctx: StoreContext, caller: AuthenticatedUser, pendingUuid: string): Promise<FileVersion> {
  const node = await resolveApproverPreview(ctx.storage.sql, caller, pendingUuid);
  const revision = await getRevision(ctx.storage.sql, node.uuid, node.revision as number);
  if (!revision) throw notFound('no such revision');
  return { node, revision, etag: `"${node.uuid}-${revision.revision}"` };
}

/**
 * The bytes of a revision, or of `range` (inclusive end) of it, opened before anything is
 * answered: a blob that cannot be read is a clean error (500), never a cut response.
 */
export async function openRevision(ctx: StoreContext, file: FileVersion, range?: BlobRange): Promise<Readable> {
  return streamOf(await openBlob(ctx, file, range), range);
}

/** A revision's bytes, open for reading: its bytes from its database row, or the blob backend's reader. */
export type OpenBlob = { inline: Buffer } | { reader: BlobReader };

/**
 * Opens the bytes of a revision (or `range` of them) before anything is answered, for a caller
 * that sends them itself (sendRevision) or streams them (streamOf): read or opened once. The
 * same `range` must be given to whichever of the two reads it.
 */
export async function openBlob(ctx: StoreContext, file: FileVersion, range?: BlobRange): Promise<OpenBlob> {
  const hash = file.revision.blob_hash;
  const inline = await inlineBlob(ctx.storage.sql, hash);
  if (inline) return { inline };
  try {
    return { reader: await ctx.blobs.get(hash, range) };
  } catch (err) {
    ctx.log.error({ err, node: file.node.uuid, revision: file.revision.revision }, 'blob of a revision cannot be opened');
    throw err;
  }
}

/** An opened blob (the `range` it was opened with) as a stream, which closes what it holds at its end. */
export function streamOf(blob: OpenBlob, range?: BlobRange): Readable {
  if ('inline' in blob) return Readable.from([range ? blob.inline.subarray(range.start, range.end + 1) : blob.inline], { objectMode: false });
  return blob.reader.kind === 'file' ? blob.reader.stream() : blob.reader.body;
}

/** Size of each of the two buffers sendRevision() reads into and writes from, in turn. */
const SEND_CHUNK = 1 << 20;
/** The buffers of a download past the pool's budget: still streaming, with more turns. */
const SMALL_SEND_CHUNK = 64 << 10;
/** 1 MiB buffers kept for downloads: 32 MiB, sixteen downloads at full speed at once. */
const SEND_POOL_BUFFERS = 32;

/**
 * The 1 MiB read buffers of all downloads, bounded in bytes: a download takes two while it
 * runs and gives them back for the next one (no allocation, nothing for the collector). When
 * every buffer is out, a download gets two 64 KiB buffers of its own instead of waiting, so a
 * thousand slow readers cost ~128 MiB, not 2 GiB.
 */
class SendBuffers {
  private readonly free: Buffer[] = [];
  private out = 0;

  /** Pool buffers downloads hold now (tests: every download gives its buffers back). */
  get inUse(): number {
    return this.out;
  }

  take(): [Buffer, Buffer] {
    if (this.out + 2 > SEND_POOL_BUFFERS) return [Buffer.allocUnsafe(SMALL_SEND_CHUNK), Buffer.allocUnsafe(SMALL_SEND_CHUNK)];
    this.out += 2;
    return [this.free.pop() ?? Buffer.allocUnsafe(SEND_CHUNK), this.free.pop() ?? Buffer.allocUnsafe(SEND_CHUNK)];
  }

  /**
   * Returns buffers taken from the pool. Only after every write from them completed: a buffer
   * whose write may still be queued in the socket is dropped (`reusable` false), since reusing
   * it would change bytes not yet sent.
   */
  give(buffers: Buffer[], reusable: boolean): void {
    if (buffers[0]?.length !== SEND_CHUNK) return;
    this.out -= buffers.length;
    if (reusable) this.free.push(...buffers);
  }
}

const sendBuffers = new SendBuffers();

/** How many pooled send buffers running downloads hold. */
export function sendBuffersInUse(): number {
  return sendBuffers.inUse;
}

/**
 * `target.write(chunk)` as a promise that settles once the chunk was handed to the OS, or the
 * target closed first. A response whose socket was destroyed before its own 'close' came drops
 * a write without ever calling its callback (Node 20): waiting for the callback alone would
 * hang the download, and keep its pool buffers, forever.
 */
function written(target: Writable, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    if (target.destroyed) {
      reject(new Error('the download target closed'));
      return;
    }
    const onClose = (): void => reject(new Error('the download target closed before a write completed'));
    target.once('close', onClose);
    target.write(chunk, (err) => {
      target.off('close', onClose);
      if (err) reject(err);
      else resolve();
    });
  });
}

/**
 * Writes the bytes of an opened revision (or `range` of them) into `target`, and closes its
 * file whatever happens. The bytes of a file go through two reused buffers
 * from the download pool: one is read into while the other is being written, and a buffer is
 * read into again only once its write completed. Memory stays at 2 MiB whatever the size (128
 * KiB once the pool's 32 MiB are out), and nothing is left for the garbage collector per read
 * (a read stream allocates a buffer per read, which only a collection frees). A file shorter
 * than its row says rejects: the caller must not end `target` as if it were complete.
 */
export async function sendRevision(file: FileVersion, blob: OpenBlob, target: Writable, range?: BlobRange, signal?: AbortSignal): Promise<void> {
  const hash = file.revision.blob_hash;
  const start = range?.start ?? 0;
  const end = range?.end ?? file.revision.size - 1;
  if ('inline' in blob) {
    if (end >= start) await written(target, blob.inline.subarray(start, end + 1));
    return;
  }
  const { reader } = blob;
  if (end < start) {
    await reader.close();
    return;
  }
  if (reader.kind === 'stream') {
    await sendStream(hash, reader.body, end - start + 1, target, signal).finally(() => reader.close());
    return;
  }
  const buffers = sendBuffers.take();
  const chunk = (buffers[0] as Buffer).length;
  const pending: Array<Promise<void> | undefined> = [undefined, undefined];
  let finished = false;
  try {
    for (let position = start, turn = 0; position <= end; turn ^= 1) {
      signal?.throwIfAborted();
      await pending[turn];
      const buffer = buffers[turn] as Buffer;
      const bytesRead = await reader.readAt(buffer, Math.min(chunk, end - position + 1), position);
      if (bytesRead === 0) throw new Error(`blob ${hash} ends at ${position}, before byte ${end}`);
      const write = written(target, buffer.subarray(0, bytesRead));
      // Settled on its own: a failed write must not be an unhandled rejection while waiting for the other buffer.
      write.catch(() => undefined);
      pending[turn] = write;
      position += bytesRead;
    }
    await Promise.all(pending);
    finished = true;
  } finally {
    sendBuffers.give(buffers, finished);
    await reader.close();
  }
}

/**
 * Writes a remote blob's body (the range it was opened with, `length` bytes) into `target`, one
 * chunk at a time as each write completes. A body shorter than `length` rejects, like a short file.
 */
async function sendStream(hash: string, body: Readable, length: number, target: Writable, signal?: AbortSignal): Promise<void> {
  let sent = 0;
  for await (const raw of body) {
    signal?.throwIfAborted();
    const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array);
    await written(target, chunk);
    sent += chunk.length;
  }
  if (sent !== length) throw new Error(`blob ${hash} gave ${sent} bytes, not ${length}`);
}
