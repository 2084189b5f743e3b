/**
 * Staging of incoming blobs, shared by every backend: the body is read while hashed (BLAKE3, the
 * content address); up to INLINE_MAX_BYTES it stays in memory and goes into its database row,
 * a longer one is streamed into an fsynced temp file under `<dataDir>/tmp/`, which the backend
 * then moves (local) or uploads (S3) to its content address. Staging knows no backend and no
 * database.
 *
 * Leftovers. A killed process leaves its parts, and a staging folder may be used by more than one
 * process at a time (the server and `driveway restore` into PostgreSQL, a migration's
 * `tmp/migrate`), so no process may simply empty it. Each BlobStaging is an owner: it holds the
 * lock of `<owner>.owner` in the folder (storage/instance-lock.ts tryLockFile: a kernel lock that
 * dies with the process, however it dies) from its first part on, and names its parts
 * `<owner>.<uuid>.part`. `sweep()` removes the parts of owners whose lock it can take (dead ones)
 * or whose lock file is gone, parts of no owner (written before owners existed), and, given an
 * age, this owner's own parts untouched that long; it never touches another live owner's parts.
 * An owner's lock file exists, locked, before any of its parts, and is removed only by its owner
 * (at close) or by a sweep that holds its lock, so a sweep that finds a part's owner file missing
 * knows that owner is gone.
 *
 * The content hash is BLAKE3 (256 bits, hex), through @napi-rs/blake-hash's native build: about
 * 10x cheaper than Node's SHA-256 on CPUs without SHA extensions, where SHA-256 alone held uploads
 * under 300 MiB/s, and still cryptographic, so nobody can craft a file that lands on another
 * user's blob. Blobs stored before migration 003 keep their SHA-256 names: an address is only a
 * key (64 hex digits either way), never recomputed, so both kinds live side by side.
 *
 * SHA-1 and MD5 are computed while the body is written: clients (rclone, ownCloud/Nextcloud)
 * compare files by them (docs/extensions.md "Checksums"). A body kept inline is hashed here
 * (64 KiB at most); a longer one by a worker thread that follows its part as it grows, reading
 * back from the page cache what was just written (checksum-worker.ts), since on this thread MD5
 * and SHA-1 doubled the CPU of a large PUT. A read of the stored blob after the upload would
 * have cost a disk or S3 pass per upload.
 */
import { blake3, Blake3Hasher } from '@napi-rs/blake-hash';
import { createHash, hash as hashOnce, randomBytes, randomUUID, type Hash } from 'node:crypto';
import { createWriteStream, existsSync, promises as fs, rmSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { makePrivateDir, makePrivateDirSync, PRIVATE_FILE_MODE } from '../../common/private-files.js';
import { tryLockFile, type FileLock } from '../storage/instance-lock.js';
import { FileChecksums, type LaterMd5 } from './checksum-worker.js';

/** The hasher of content addresses (BLAKE3); `digest('hex')` is the address. */
export function createContentHasher(): Blake3Hasher {
  return new Blake3Hasher();
}

/** The hashes stage() computes in one pass: the content address and the clients' checksums. */
export interface ContentDigest {
  /** BLAKE3, the content address. */
  hash: string;
  sha1: string;
  md5: string;
}

/** Feeds every chunk to BLAKE3, SHA-1 and MD5 at once. */
export class ContentDigests {
  private readonly blake3 = createContentHasher();
  private readonly sha1: Hash = createHash('sha1');
  private readonly md5: Hash = createHash('md5');

  update(chunk: Buffer): this {
    this.blake3.update(chunk);
    this.sha1.update(chunk);
    this.md5.update(chunk);
    return this;
  }

  digest(): ContentDigest {
    return { hash: this.blake3.digest('hex'), sha1: this.sha1.digest('hex'), md5: this.md5.digest('hex') };
  }
}

/**
 * The three hashes of some bytes held whole, by the one-shot functions: for a small file (every
 * bridge PUT up to 64 KiB) three hasher objects and their digest calls cost a fifth more than
 * the hashing itself (4 KiB: 12.7 against 10.4 us here). The same values as ContentDigests.
 */
export function digestOf(data: Buffer): ContentDigest {
  return { hash: blake3(data).toString('hex'), sha1: hashOnce('sha1', data), md5: hashOnce('md5', data) };
}

/** The content address of some bytes: what stage() computes while streaming. */
export function contentHashOf(data: string | Buffer): string {
  return createContentHasher().update(data).digest('hex');
}

const HASH_RE = /^[0-9a-f]{64}$/;

/** Whether `name` is a content address (64 lowercase hex digits). */
export function isBlobHash(name: string): boolean {
  return HASH_RE.test(name);
}

export interface StagedBlob {
  hash: string;
  /** SHA-1 of the bytes (hex), computed in the same pass as `hash`. */
  sha1: string;
  /** MD5 of the bytes (hex): computed in the same pass, unless it comes later (`md5Later`). */
  md5?: string | undefined;
  /**
   * The MD5 of a large body whose stage() was given `md5LaterBytes`: the checksum worker goes on
   * computing it after stage() returned (ops/upload.ts records it after the commit).
   */
  md5Later?: LaterMd5 | undefined;
  sizeBytes: number;
  /** The fsynced temp file of a blob kept by the backend. */
  tempPath?: string;
  /** The bytes of a small blob, to be stored in its database row (storage/blob-refs.ts addBlobRef). */
  inline?: Buffer;
  /** An S3 object that holds the bytes already (a completed chunked upload): adopted, not uploaded. */
  objectKey?: string;
}

/**
 * Blobs up to this size are kept in the database row rather than by the backend: a 4 KiB file
 * then costs no file writes or fsyncs of its own, only its share of the WAL fsync of its commit
 * (durability.ts). Large enough for the small files that dominate a file count, small enough
 * that the WAL does not carry bulk data.
 */
export const INLINE_MAX_BYTES = 64 * 1024;

export class BlobTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`blob exceeds ${limitBytes} bytes`);
  }
}

/** What a sweep removed. */
export interface StagingSweep {
  parts: number;
  bytes: number;
}

const OWNER_SUFFIX = '.owner';
const PART_SUFFIX = '.part';
/** Tries at taking a fresh owner name (each loses only to a sweep that took the same file first). */
const OWNER_TRIES = 5;

interface Owner {
  id: string;
  file: string;
  lock: FileLock;
}

/** The owner a part's name gives (`<owner>.<uuid>.part`), '' for a part of no owner (`<uuid>.part`). */
function ownerOfPart(name: string): string {
  const dot = name.indexOf('.');
  return dot === name.length - PART_SUFFIX.length ? '' : name.slice(0, dot);
}

export class BlobStaging {
  private owner: Owner | undefined;

  constructor(readonly tmpDir: string) {}

  /** Creates the folder (0700) and takes ownership of what this process stages in it. */
  async init(): Promise<void> {
    await makePrivateDir(this.tmpDir);
    this.own();
  }

  /**
   * This process's owner name in the folder, taken at the first need: a fresh `<pid>-<random>`
   * whose lock file is made and locked before any part bears the name. A sweep that took the
   * file between its making and its locking has removed it: then another name.
   */
  private own(): Owner {
    if (this.owner) return this.owner;
    makePrivateDirSync(this.tmpDir);
    for (let attempt = 0; attempt < OWNER_TRIES; attempt += 1) {
      const id = `${process.pid}-${randomBytes(4).toString('hex')}`;
      const file = path.join(this.tmpDir, `${id}${OWNER_SUFFIX}`);
      const lock = tryLockFile(file, { create: true });
      if (typeof lock === 'string') continue;
      if (existsSync(file)) {
        this.owner = { id, file, lock };
        return this.owner;
      }
      lock.release();
    }
    throw new Error(`could not take an owner's lock in the staging folder ${this.tmpDir}`);
  }

  /**
   * Removes what no live process stages: in this folder and the folders under it, the parts of
   * owners that are gone (their lock file missing, or its lock free) and their lock files, and
   * parts of no owner; with `ownOlderThanMs`, also this owner's parts not written to for that
   * long (a staged body is renamed, uploaded or discarded within one request). Never another live
   * owner's parts. Best effort: a file that cannot be removed is left for the next sweep.
   */
  async sweep(ownOlderThanMs?: number): Promise<StagingSweep> {
    const swept: StagingSweep = { parts: 0, bytes: 0 };
    await this.sweepFolder(this.tmpDir, ownOlderThanMs === undefined ? undefined : Date.now() - ownOlderThanMs, swept);
    return swept;
  }

  private async sweepFolder(dir: string, ownBefore: number | undefined, swept: StagingSweep): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const parts = new Map<string, string[]>();
    const owners = new Set<string>();
    for (const entry of entries) {
      if (entry.isDirectory()) await this.sweepFolder(path.join(dir, entry.name), undefined, swept);
      else if (entry.name.endsWith(OWNER_SUFFIX)) owners.add(entry.name.slice(0, -OWNER_SUFFIX.length));
      else if (entry.name.endsWith(PART_SUFFIX)) {
        const owner = ownerOfPart(entry.name);
        parts.set(owner, [...(parts.get(owner) ?? []), entry.name]);
      }
    }
    const mine = dir === this.tmpDir ? this.owner?.id : undefined;
    for (const id of new Set([...owners, ...parts.keys()])) {
      const names = parts.get(id) ?? [];
      if (id === mine) {
        if (ownBefore !== undefined) await removeParts(dir, names, swept, ownBefore);
        continue;
      }
      if (id === '') {
        await removeParts(dir, names, swept);
        continue;
      }
      const file = path.join(dir, `${id}${OWNER_SUFFIX}`);
      const lock = tryLockFile(file, { create: false });
      if (lock === 'busy') continue;
      try {
        await removeParts(dir, names, swept);
        // Removed while its lock is held here: no owner can be taking it meanwhile.
        if (lock !== 'missing') rmSync(file, { force: true });
      } finally {
        if (lock !== 'missing') lock.release();
      }
    }
  }

  /**
   * Ends the ownership: its lock file goes and the lock with it. Parts left (none after a store's
   * drained stop; a failed migration may still have some under way) are then no live owner's,
   * and the next sweep removes them; close() does not, so a part still being read is not cut.
   */
  async close(): Promise<void> {
    const owner = this.owner;
    if (!owner) return;
    this.owner = undefined;
    rmSync(owner.file, { force: true });
    owner.lock.release();
  }

  /**
   * Reads `source` (a stream, or bytes held whole) while hashing it. Up to `inlineMax` bytes stay
   * in memory and come back as `inline`; a longer body is streamed into a temp file (what was
   * read so far first), which is fsynced. Rejects (removing the temp file) when the source
   * errors, is aborted, or passes `maxBytes`. A streamed body that passes `md5LaterBytes` comes
   * back without `md5` but with `md5Later`: only SHA-1 and BLAKE3 are waited for.
   */
  async stage(source: Readable | Buffer, maxBytes = Number.POSITIVE_INFINITY, signal?: AbortSignal, inlineMax = INLINE_MAX_BYTES, md5LaterBytes?: number): Promise<StagedBlob> {
    if (Buffer.isBuffer(source)) return this.stageBuffer(source, maxBytes, inlineMax);
    const hasher = createContentHasher();
    let sizeBytes = 0;
    const count = (chunk: Buffer): void => {
      sizeBytes += chunk.length;
      if (sizeBytes > maxBytes) throw new BlobTooLargeError(maxBytes);
      hasher.update(chunk);
    };
    const deferFrom = md5LaterBytes ?? Number.POSITIVE_INFINITY;
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
    if (!spilled) {
      const inline = Buffer.concat(head, sizeBytes);
      // BLAKE3 was fed while reading; the clients' two in one shot each.
      return { hash: hasher.digest('hex'), sha1: hashOnce('sha1', inline), md5: hashOnce('md5', inline), sizeBytes, inline };
    }

    let sums: FileChecksums | undefined;
    try {
      const tempPath = await this.writeTemp(async (handle, file) => {
        if (source.destroyed && !source.readableEnded) throw source.errored ?? new Error('the source closed before it was read');
        const out = createWriteStream('', { fd: handle.fd, autoClose: false, highWaterMark: 1 << 20 });
        const followed = new FileChecksums(file);
        sums = followed;
        const meter = new Transform({
          transform(chunk: Buffer, _enc, callback) {
            try {
              count(chunk);
            } catch (err) {
              callback(err as Error);
              return;
            }
            // What has reached the file so far may be read back and hashed.
            followed.advance(out.bytesWritten);
            if (sizeBytes >= deferFrom) followed.deferMd5();
            callback(null, chunk);
          },
        });
        for (const chunk of head) out.write(chunk);
        await pipeline(source, meter, out, signal ? { signal } : {});
      });
      try {
        const followed = sums as FileChecksums;
        const { sha1, md5 } = await followed.digest(sizeBytes);
        return { hash: hasher.digest('hex'), sha1, md5, md5Later: followed.later(), sizeBytes, tempPath };
      } catch (err) {
        await fs.rm(tempPath, { force: true });
        throw err;
      }
    } catch (err) {
      (sums as FileChecksums | undefined)?.abort();
      throw err;
    }
  }

  /** stage() for bytes the caller holds whole: no stream to read, the same outcome. */
  private async stageBuffer(bytes: Buffer, maxBytes: number, inlineMax: number): Promise<StagedBlob> {
    if (bytes.length > maxBytes) throw new BlobTooLargeError(maxBytes);
    const digest = digestOf(bytes);
    if (bytes.length <= inlineMax) return { ...digest, sizeBytes: bytes.length, inline: bytes };
    const tempPath = await this.writeTemp((handle) => handle.writeFile(bytes));
    return { ...digest, sizeBytes: bytes.length, tempPath };
  }

  /**
   * A new temp file filled by `write`, then fsynced and closed: its path. On any failure the
   * file is closed and removed, and the failure thrown.
   */
  private async writeTemp(write: (handle: fs.FileHandle, file: string) => Promise<void>): Promise<string> {
    const tempPath = path.join(this.tmpDir, `${this.own().id}.${randomUUID()}${PART_SUFFIX}`);
    const handle = await fs.open(tempPath, 'wx', PRIVATE_FILE_MODE);
    try {
      await write(handle, tempPath);
      await handle.sync();
      await handle.close();
    } catch (err) {
      await handle.close().catch(() => undefined);
      await fs.rm(tempPath, { force: true });
      throw err;
    }
    return tempPath;
  }

  async discard(staged: StagedBlob): Promise<void> {
    if (staged.tempPath !== undefined) await fs.rm(staged.tempPath, { force: true });
  }

  /**
   * Stages a file someone else keeps (an upload's assembled file: staged-parts.ts) by a hard link
   * under this owner's name: commit renames the link into place and discard removes only the
   * link, so the file stays its keeper's whatever happens, and a crash leaves a part the sweep
   * removes. The keeper must not write into the file while it has more than one link.
   */
  async link(file: string): Promise<string> {
    const tempPath = path.join(this.tmpDir, `${this.own().id}.${randomUUID()}${PART_SUFFIX}`);
    await fs.link(file, tempPath);
    // The file may have been last written long ago (a client assembling hours after its last
    // chunk): the sweep of this owner's parts untouched for stagingMaxAgeSec must not take it.
    const now = new Date();
    await fs.utimes(tempPath, now, now);
    return tempPath;
  }
}

/** Removes `names` in `dir` (those last written before `before`, when given), counting what went. */
async function removeParts(dir: string, names: readonly string[], swept: StagingSweep, before?: number): Promise<void> {
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      const stat = await fs.lstat(file);
      if (before !== undefined && stat.mtimeMs >= before) continue;
      await fs.rm(file, { force: true });
      swept.parts += 1;
      swept.bytes += stat.size;
    } catch {
      // Gone meanwhile (renamed into place, discarded), or not ours to remove: the next sweep sees.
    }
  }
}
