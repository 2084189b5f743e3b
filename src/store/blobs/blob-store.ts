/**
 * Content-addressed blobs on local disk: `<root>/blobs/ab/cd/<sha256>`. A blob is written to
 * `<root>/tmp/`, hashed while streaming, fsynced, then renamed into place (and the directory
 * fsynced) before any metadata row refers to it, so a crash never leaves a half-written blob.
 * Reference counts live in SQLite (db/blobs.ts); this module only moves bytes and never
 * touches the database.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

export interface StagedBlob {
  sha256: string;
  sizeBytes: number;
  tempPath: string;
}

export class BlobTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`blob exceeds ${limitBytes} bytes`);
  }
}

const SHA256_RE = /^[0-9a-f]{64}$/;

export class BlobStore {
  readonly blobDir: string;
  readonly tmpDir: string;

  constructor(readonly root: string) {
    this.blobDir = path.join(root, 'blobs');
    this.tmpDir = path.join(root, 'tmp');
  }

  /** Creates the folders and removes whatever a crashed upload left in tmp/. */
  async init(): Promise<void> {
    await fs.mkdir(this.blobDir, { recursive: true });
    await fs.rm(this.tmpDir, { recursive: true, force: true });
    await fs.mkdir(this.tmpDir, { recursive: true });
  }

  pathOf(sha256: string): string {
    if (!SHA256_RE.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    return path.join(this.blobDir, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  /**
   * Streams `source` into a temp file while hashing it; fsyncs it. Rejects (and removes the
   * temp file) when the source errors, is aborted, or passes `maxBytes`.
   */
  async stage(source: Readable, maxBytes = Number.POSITIVE_INFINITY, signal?: AbortSignal): Promise<StagedBlob> {
    const tempPath = path.join(this.tmpDir, `${randomUUID()}.part`);
    const hash = createHash('sha256');
    let sizeBytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, callback) {
        sizeBytes += chunk.length;
        if (sizeBytes > maxBytes) {
          callback(new BlobTooLargeError(maxBytes));
          return;
        }
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    const handle = await fs.open(tempPath, 'wx', 0o600);
    try {
      const out = createWriteStream('', { fd: handle.fd, autoClose: false, highWaterMark: 1 << 20 });
      await pipeline(source, meter, out, signal ? { signal } : {});
      await handle.sync();
      await handle.close();
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fs.rm(tempPath, { force: true });
      throw err;
    }
    return { sha256: hash.digest('hex'), sizeBytes, tempPath };
  }

  /** Moves a staged blob to its content address; if the blob exists already the temp is dropped. */
  async commit(staged: StagedBlob): Promise<void> {
    const target = this.pathOf(staged.sha256);
    const dir = path.dirname(target);
    await fs.mkdir(dir, { recursive: true });
    try {
      await fs.access(target);
      await fs.rm(staged.tempPath, { force: true });
      return;
    } catch {
      // not there yet: rename below
    }
    await fs.rename(staged.tempPath, target);
    const dirHandle = await fs.open(dir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }

  async discard(staged: StagedBlob): Promise<void> {
    await fs.rm(staged.tempPath, { force: true });
  }

  /** Opens a blob for reading, optionally a byte range (inclusive end, as HTTP). */
  open(sha256: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.pathOf(sha256), range ? { start: range.start, end: range.end, highWaterMark: 1 << 20 } : { highWaterMark: 1 << 20 });
  }

  async remove(sha256: string): Promise<void> {
    await fs.rm(this.pathOf(sha256), { force: true });
  }

  /** Deletes blob files no row refers to (left by a crash between rename and commit). */
  async sweepOrphans(isReferenced: (sha256: string) => boolean): Promise<number> {
    let removed = 0;
    const level1 = await fs.readdir(this.blobDir).catch(() => [] as string[]);
    for (const a of level1) {
      const level2 = await fs.readdir(path.join(this.blobDir, a)).catch(() => [] as string[]);
      for (const b of level2) {
        const dir = path.join(this.blobDir, a, b);
        for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
          if (!SHA256_RE.test(name) || !isReferenced(name)) {
            await fs.rm(path.join(dir, name), { force: true });
            removed += 1;
          }
        }
      }
    }
    return removed;
  }
}
