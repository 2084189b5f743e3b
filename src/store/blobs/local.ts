/**
 * The local blob backend: content-addressed files on local disk, `<root>/blobs/ab/cd/<hash>`.
 * A blob is staged into `<root>/tmp/` (staging.ts: hashed while streaming, fsynced), then
 * renamed into place (and the directory fsynced) before any metadata row refers to it, so a
 * crash never leaves a half-written blob. Small blobs never touch a file: staging hands their
 * bytes back to go into their database row, in the same transaction as the row that refers to
 * them. Reference counts live in the database (storage/blob-refs.ts); this module only moves bytes and
 * asks the `isReferenced` callback it was built with.
 *
 * get() hands out the opened file itself (BlobReader `file`): the in-process GET reads it into
 * reused 1 MiB buffers (ops/download.ts sendRevision), the fastest way to a socket.
 *
 * Races inside one process: an upload renames its blob into place, then commits the row that
 * refers to it; a purge commits the release of the last reference, then unlinks the file. With
 * identical content both meet at one path. So commit and remove of one hash run one after
 * the other (a per-blob queue), an upload pins its blob from commit until its transaction has
 * settled (`release`), and remove keeps a pinned or still-referenced blob. One folder serves one
 * instance: several instances share blobs through the S3 backend (s3.ts).
 *
 * An unlink waits for the ledger's `durable()` after its check (blob-backend.ts): the commit that
 * released the blob is on disk before the file goes.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { makePrivateDir, narrowToOwner } from '../../common/private-files.js';
import { BlobMissingError, type BlobBackend, type BlobInfo, type BlobLedger, type BlobRange, type FileBlobReader, type GarbageReport } from './blob-backend.js';
import { BlobStaging, INLINE_MAX_BYTES, isBlobHash, type ContentDigest, type StagedBlob, type StagingSweep } from './staging.js';
import { KeyedQueue } from '../../common/keyed-queue.js';

const READ_CHUNK = 1 << 20;

/** What the local backend asks of the database: whether a row refers to a blob, and durability before an unlink. */
export type LocalBlobLedger = Pick<BlobLedger, 'isReferenced' | 'durable'>;

/**
 * The ledger of a folder no database manages (a backup's blobs, a migration's source): every blob
 * counts as referenced, so nothing in it is ever removed, and there is nothing to make durable.
 */
export const UNMANAGED_FOLDER: LocalBlobLedger = {
  isReferenced: async () => true,
  durable: async () => undefined,
};

export class LocalBlobBackend implements BlobBackend {
  readonly kind = 'local';
  readonly blobDir: string;
  readonly tmpDir: string;
  private readonly staging: BlobStaging;
  /** Uploads between commit() and release(): their row is about to exist (or they clean up). */
  private readonly pins = new Map<string, number>();
  /** Fan-out folders (`ab/cd`, at most 65,536) known to exist: a small upload skips the mkdir. */
  private readonly knownDirs = new Set<string>();
  /** Tail of the queue of file operations per hash. */
  private readonly queues = new KeyedQueue();

  constructor(
    readonly root: string,
    private readonly ledger: LocalBlobLedger = UNMANAGED_FOLDER,
  ) {
    this.blobDir = path.join(root, 'blobs');
    this.tmpDir = path.join(root, 'tmp');
    this.staging = new BlobStaging(this.tmpDir);
  }

  /** Runs `work` after every earlier commit/remove of the same blob has finished. */
  private serialize<T>(hash: string, work: () => Promise<T>): Promise<T> {
    return this.queues.run(hash, work);
  }

  /**
   * Creates the folders (0700) and takes ownership of what this process stages in tmp/. A
   * `blobs/` an earlier release made 0755 is narrowed; the fan-out folders and files under it are
   * not walked (private-files.ts says why).
   */
  async init(): Promise<void> {
    await makePrivateDir(this.blobDir);
    narrowToOwner(this.blobDir, 'dir');
    await this.staging.init();
  }

  async probe(): Promise<void> {
    await fs.access(this.blobDir);
  }

  pathOf(hash: string): string {
    if (!isBlobHash(hash)) throw new Error(`not a blob hash: ${hash}`);
    return path.join(this.blobDir, hash.slice(0, 2), hash.slice(2, 4), hash);
  }

  stage(source: Readable | Buffer, maxBytes = Number.POSITIVE_INFINITY, signal?: AbortSignal, inlineMax = INLINE_MAX_BYTES, md5LaterBytes?: number): Promise<StagedBlob> {
    return this.staging.stage(source, maxBytes, signal, inlineMax, md5LaterBytes);
  }

  /**
   * Moves a staged blob to its content address; if the blob exists already the temp is dropped.
   * Pins the blob until `release(hash)`, which the caller must call once the transaction that
   * refers to it has committed or failed (also when commit itself throws).
   */
  async commit(staged: StagedBlob): Promise<void> {
    this.pins.set(staged.hash, (this.pins.get(staged.hash) ?? 0) + 1);
    await this.serialize(staged.hash, () => this.moveIntoPlace(staged));
  }

  /** Ends the pin taken by commit(). */
  async release(hash: string): Promise<void> {
    const count = (this.pins.get(hash) ?? 0) - 1;
    if (count > 0) this.pins.set(hash, count);
    else this.pins.delete(hash);
  }

  private async moveIntoPlace(staged: StagedBlob): Promise<void> {
    // A small blob goes into its database row with the commit: nothing to move.
    if (staged.tempPath === undefined) return;
    const target = this.pathOf(staged.hash);
    const dir = path.dirname(target);
    if (!this.knownDirs.has(dir)) {
      await makePrivateDir(dir);
      this.knownDirs.add(dir);
    }
    const { tempPath } = staged;
    try {
      await fs.access(target);
      await fs.rm(tempPath, { force: true });
      return;
    } catch {
      // not there yet: rename below
    }
    try {
      await fs.rename(tempPath, target);
    } catch (err) {
      // The folder was removed behind our back (an operator tidying up): make it again, once.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !this.knownDirs.delete(dir)) throw err;
      await makePrivateDir(dir);
      this.knownDirs.add(dir);
      await fs.rename(tempPath, target);
    }
    const dirHandle = await fs.open(dir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }

  async discard(staged: StagedBlob): Promise<void> {
    await this.staging.discard(staged);
  }

  /**
   * A file whose hashes are known, staged where it lies (an assembled upload: staged-parts.ts)
   * by a hard link in the staging folder (staging.ts link): commit() then renames that link to
   * the content address, and no byte is copied. `file` must be on this backend's filesystem.
   */
  async adopt(file: string, digest: ContentDigest, sizeBytes: number): Promise<StagedBlob> {
    return { ...digest, sizeBytes, tempPath: await this.staging.link(file) };
  }

  /**
   * Opens a blob file (throws BlobMissingError when there is none). Its reader reads at any
   * position, or streams `range` in 1 MiB pieces (the fewest system calls and event-loop turns
   * per byte sent).
   */
  async get(hash: string, range?: BlobRange): Promise<FileBlobReader> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.pathOf(hash), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobMissingError(hash, { cause: err });
      throw err;
    }
    let closed = false;
    return {
      kind: 'file',
      readAt: async (buffer, length, position) => (await handle.read(buffer, 0, length, position)).bytesRead,
      stream: () => {
        closed = true;
        return handle.createReadStream(range ? { start: range.start, end: range.end, highWaterMark: READ_CHUNK } : { highWaterMark: READ_CHUNK });
      },
      close: async () => {
        if (closed) return;
        closed = true;
        await handle.close();
      },
    };
  }

  async head(hash: string): Promise<BlobInfo | undefined> {
    try {
      const stat = await fs.stat(this.pathOf(hash));
      return { hash, sizeBytes: stat.size, modifiedMs: stat.mtimeMs };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /**
   * Unlinks a blob that lost its last reference. Keeps it when an upload has pinned it or a row
   * refers to it again by the time this runs (a concurrent upload or copy of the same bytes).
   * Returns whether the file was removed.
   */
  async remove(hash: string): Promise<boolean> {
    const target = this.pathOf(hash);
    return this.serialize(hash, async () => {
      if (this.pins.has(hash) || (await this.ledger.isReferenced(hash))) return false;
      // An upload of the same bytes that pins it meanwhile moves its file in after this (the queue).
      await this.ledger.durable();
      await fs.rm(target, { force: true });
      return true;
    });
  }

  /** Every blob file in hash order (the fan-out folders sort as the hashes do), after `after`. */
  async *list(after = ''): AsyncIterable<BlobInfo> {
    for (const a of (await readdirOrNone(this.blobDir)).sort()) {
      if (a < after.slice(0, 2)) continue;
      for (const b of (await readdirOrNone(path.join(this.blobDir, a))).sort()) {
        if (a + b < after.slice(0, 4)) continue;
        const dir = path.join(this.blobDir, a, b);
        for (const name of (await readdirOrNone(dir)).sort()) {
          if (!isBlobHash(name) || name <= after) continue;
          const stat = await fs.stat(path.join(dir, name)).catch(() => undefined);
          if (stat) yield { hash: name, sizeBytes: stat.size, modifiedMs: stat.mtimeMs };
        }
      }
    }
  }

  /** Removes blob files unreferenced and older than `graceMs`; a local upload writes no intents. */
  async collectGarbage(graceMs: number): Promise<GarbageReport> {
    const report: GarbageReport = { seen: 0, removed: 0, expiredUploads: 0 };
    const cutoff = Date.now() - graceMs;
    for await (const blob of this.list()) {
      report.seen += 1;
      if (blob.modifiedMs > cutoff || (await this.ledger.isReferenced(blob.hash))) continue;
      if (await this.remove(blob.hash)) report.removed += 1;
    }
    return report;
  }

  /**
   * Deletes blob files no row refers to (left by a crash between rename and commit, or by a purge
   * a power cut undid), and files that are no blob. Only before the store serves anything: no
   * grace period is needed then. The first durable() of a process fsyncs the WAL: what the
   * killed process committed and never fsynced is on disk before a file it released goes.
   */
  async sweepAtStart(): Promise<number> {
    let removed = 0;
    for (const a of await readdirOrNone(this.blobDir)) {
      for (const b of await readdirOrNone(path.join(this.blobDir, a))) {
        const dir = path.join(this.blobDir, a, b);
        for (const name of await readdirOrNone(dir)) {
          if (!isBlobHash(name) || !(await this.ledger.isReferenced(name))) {
            await this.ledger.durable();
            await fs.rm(path.join(dir, name), { force: true });
            removed += 1;
          }
        }
      }
    }
    return removed;
  }

  sweepStaging(ownOlderThanMs?: number): Promise<StagingSweep> {
    return this.staging.sweep(ownOlderThanMs);
  }

  async close(): Promise<void> {
    // Nothing else is held open between requests.
    await this.staging.close();
  }
}

async function readdirOrNone(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => [] as string[]);
}
