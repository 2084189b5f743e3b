/**
 * Content-addressed blobs on local disk: `<root>/blobs/ab/cd/<hash>`. A blob is written to
 * `<root>/tmp/`, hashed while streaming, fsynced, then renamed into place (and the directory
 * fsynced) before any metadata row refers to it, so a crash never leaves a half-written blob.
 * Small blobs (INLINE_MAX_BYTES) never touch a file: stage() hands their bytes back to go into
 * their database row, in the same transaction as the row that refers to them.
 * Reference counts live in SQLite (db/blobs.ts); this module only moves bytes and never
 * touches the database: it asks the `isReferenced` callback it was built with.
 *
 * Races inside one process: an upload renames its blob into place, then commits the row that
 * refers to it; a purge commits the release of the last reference, then unlinks the file. With
 * identical content both meet at one path. So commit and remove of one hash run one after
 * the other (a per-blob queue), an upload pins its blob from commit until its transaction has
 * settled (`release`), and remove keeps a pinned or still-referenced blob.
 *
 * The content hash is BLAKE3 (256 bits, hex), through @napi-rs/blake-hash's native build: about
 * 10x cheaper than Node's SHA-256 on CPUs without SHA extensions, where SHA-256 alone held uploads
 * under 300 MiB/s, and still cryptographic, so nobody can craft a file that lands on another
 * user's blob. Blobs stored before migration 003 keep their SHA-256 names: an address is only a
 * key (64 hex digits either way), never recomputed, so both kinds live side by side.
 */
import { Blake3Hasher } from '@napi-rs/blake-hash';
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The hasher of content addresses (BLAKE3); `digest('hex')` is the address. */
export function createContentHasher(): Blake3Hasher {
  return new Blake3Hasher();
}

/** The content address of some bytes: what stage() computes while streaming. */
export function contentHashOf(data: string | Buffer): string {
  return createContentHasher().update(data).digest('hex');
}

export interface StagedBlob {
  hash: string;
  sizeBytes: number;
  /** The fsynced temp file of a blob kept as a file. */
  tempPath?: string;
  /** The bytes of a small blob, to be stored in its database row (db/blobs.ts addBlobRef). */
  inline?: Buffer;
}

/**
 * Blobs up to this size are kept in the database row rather than in a file: a 4 KiB file then
 * costs no file writes or fsyncs of its own, only its share of the WAL fsync of its commit
 * (durability.ts). Large enough for the small files that dominate a file count, small enough
 * that the WAL does not carry bulk data.
 */
export const INLINE_MAX_BYTES = 64 * 1024;

export class BlobTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`blob exceeds ${limitBytes} bytes`);
  }
}

const HASH_RE = /^[0-9a-f]{64}$/;
const READ_CHUNK = 1 << 20;

export class BlobStore {
  readonly blobDir: string;
  readonly tmpDir: string;
  /** Uploads between commit() and release(): their row is about to exist (or they clean up). */
  private readonly pins = new Map<string, number>();
  /** Fan-out folders (`ab/cd`, at most 65,536) known to exist: a small upload skips the mkdir. */
  private readonly knownDirs = new Set<string>();
  /** Tail of the queue of file operations per hash. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    readonly root: string,
    private readonly isReferenced: (hash: string) => boolean = () => false,
  ) {
    this.blobDir = path.join(root, 'blobs');
    this.tmpDir = path.join(root, 'tmp');
  }

  /** Runs `work` after every earlier commit/remove of the same blob has finished. */
  private async serialize<T>(hash: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(hash) ?? Promise.resolve();
    const run = previous.then(work);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(hash, tail);
    try {
      return await run;
    } finally {
      if (this.queues.get(hash) === tail) this.queues.delete(hash);
    }
  }

  /** Creates the folders and removes whatever a crashed upload left in tmp/. */
  async init(): Promise<void> {
    await fs.mkdir(this.blobDir, { recursive: true });
    await fs.rm(this.tmpDir, { recursive: true, force: true });
    await fs.mkdir(this.tmpDir, { recursive: true });
  }

  pathOf(hash: string): string {
    if (!HASH_RE.test(hash)) throw new Error(`not a blob hash: ${hash}`);
    return path.join(this.blobDir, hash.slice(0, 2), hash.slice(2, 4), hash);
  }

  /**
   * Reads `source` (a stream, or bytes held whole) while hashing it. Up to `inlineMax` bytes (INLINE_MAX_BYTES) stay in memory
   * and come back as `inline`; a longer body is streamed into a temp file (what was read so far
   * first), which is fsynced. Rejects (removing the temp file) when the source errors, is
   * aborted, or passes `maxBytes`.
   */
  async stage(source: Readable | Buffer, maxBytes = Number.POSITIVE_INFINITY, signal?: AbortSignal, inlineMax = INLINE_MAX_BYTES): Promise<StagedBlob> {
    if (Buffer.isBuffer(source)) return this.stageBuffer(source, maxBytes, inlineMax);
    const hasher = createContentHasher();
    let sizeBytes = 0;
    const count = (chunk: Buffer): void => {
      sizeBytes += chunk.length;
      if (sizeBytes > maxBytes) throw new BlobTooLargeError(maxBytes);
      hasher.update(chunk);
    };
    // The source may have been destroyed before anyone read it (a client that hung up):
    // iterating it would then wait forever instead of failing.
    if (source.destroyed) throw source.errored ?? new Error('the source closed before it was read');
    const head: Buffer[] = [];
    let spilled = false;
    // destroyOnReturn false: leaving the loop to spill hands the rest of the source to pipeline().
    for await (const raw of source.iterator({ destroyOnReturn: false })) {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array);
      count(chunk);
      head.push(chunk);
      if (sizeBytes > inlineMax) {
        spilled = true;
        break;
      }
    }
    if (!spilled) return { hash: hasher.digest('hex'), sizeBytes, inline: Buffer.concat(head, sizeBytes) };

    const meter = new Transform({
      transform(chunk: Buffer, _enc, callback) {
        try {
          count(chunk);
          callback(null, chunk);
        } catch (err) {
          callback(err as Error);
        }
      },
    });
    const tempPath = await this.writeTemp(async (handle) => {
      if (source.destroyed && !source.readableEnded) throw source.errored ?? new Error('the source closed before it was read');
      const out = createWriteStream('', { fd: handle.fd, autoClose: false, highWaterMark: 1 << 20 });
      for (const chunk of head) out.write(chunk);
      await pipeline(source, meter, out, signal ? { signal } : {});
    });
    return { hash: hasher.digest('hex'), sizeBytes, tempPath };
  }

  /** stage() for bytes the caller holds whole: no stream to read, the same outcome. */
  private async stageBuffer(bytes: Buffer, maxBytes: number, inlineMax: number): Promise<StagedBlob> {
    if (bytes.length > maxBytes) throw new BlobTooLargeError(maxBytes);
    const hash = contentHashOf(bytes);
    if (bytes.length <= inlineMax) return { hash, sizeBytes: bytes.length, inline: bytes };
    const tempPath = await this.writeTemp((handle) => handle.writeFile(bytes));
    return { hash, sizeBytes: bytes.length, tempPath };
  }

  /**
   * A new temp file filled by `write`, then fsynced and closed: its path. On any failure the
   * file is closed and removed, and the failure thrown.
   */
  private async writeTemp(write: (handle: fs.FileHandle) => Promise<void>): Promise<string> {
    const tempPath = path.join(this.tmpDir, `${randomUUID()}.part`);
    const handle = await fs.open(tempPath, 'wx', 0o600);
    try {
      await write(handle);
      await handle.sync();
      await handle.close();
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fs.rm(tempPath, { force: true });
      throw err;
    }
    return tempPath;
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
  release(hash: string): void {
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
      await fs.mkdir(dir, { recursive: true });
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
      await fs.mkdir(dir, { recursive: true });
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
    if (staged.tempPath !== undefined) await fs.rm(staged.tempPath, { force: true });
  }

  /**
   * Opens a blob for reading, optionally a byte range (inclusive end, as HTTP). `inline` is the
   * blob's bytes when its database row holds them (db/blobs.ts inlineBlob); the file otherwise,
   * read in 1 MiB pieces (the fewest system calls and event-loop turns per byte sent).
   */
  open(hash: string, range?: { start: number; end: number }, inline?: Buffer): Readable {
    if (inline) return Readable.from([range ? inline.subarray(range.start, range.end + 1) : inline], { objectMode: false });
    return createReadStream(this.pathOf(hash), range ? { start: range.start, end: range.end, highWaterMark: READ_CHUNK } : { highWaterMark: READ_CHUNK });
  }

  /**
   * Unlinks a blob that lost its last reference. Keeps it when an upload has pinned it or a row
   * refers to it again by the time this runs (a concurrent upload or copy of the same bytes).
   * Returns whether the file was removed.
   */
  async remove(hash: string): Promise<boolean> {
    const target = this.pathOf(hash);
    return this.serialize(hash, async () => {
      if (this.pins.has(hash) || this.isReferenced(hash)) return false;
      await fs.rm(target, { force: true });
      return true;
    });
  }

  /** Deletes blob files no row refers to (left by a crash between rename and commit). */
  async sweepOrphans(isReferenced: (hash: string) => boolean): Promise<number> {
    let removed = 0;
    const level1 = await fs.readdir(this.blobDir).catch(() => [] as string[]);
    for (const a of level1) {
      const level2 = await fs.readdir(path.join(this.blobDir, a)).catch(() => [] as string[]);
      for (const b of level2) {
        const dir = path.join(this.blobDir, a, b);
        for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
          if (!HASH_RE.test(name) || !isReferenced(name)) {
            await fs.rm(path.join(dir, name), { force: true });
            removed += 1;
          }
        }
      }
    }
    return removed;
  }
}
