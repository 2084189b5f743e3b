/**
 * Upload parts written where they will lie in the assembled file: the PartStore of a bridge
 * in-process with a store on the local blob backend (store/bridge-store.ts), so that assembling
 * an upload writes no byte a second time (issue 23; docs/bridge-design.md "Assembly").
 *
 * Each session has one file, `<dataDir>/uploads/<session key>/data`, on the blob backend's
 * filesystem. A part whose place is known before its bytes (a Nextcloud v1 `start-end` name, a
 * tus PATCH's offset, a v2 chunk number times the session's chunk size), within the upload's
 * declared total or quota (PartToPlace.withinBytes) and free (no part row or write under way
 * covers it) is written at that offset, in parallel with the others and in any
 * order, under the part key `at<offset>-<uuid>`. Any other part (a re-sent chunk whose place is
 * taken, a body of unknown length, a v2 chunk of another size) is a file of its own beside it
 * (contracts/local-part-store.ts), written into its place at assembly: a copy of that part only.
 *
 * Hashing follows the file: once the parts from byte 0 on are complete, a PrefixDigests reads
 * them back from the page cache (SHA-1 and MD5 on the checksum worker, BLAKE3 here) while the
 * rest arrives, so assembly waits only for the last part's hashing. What this process does not
 * know (parts written before a restart) is read and hashed at assembly.
 *
 * Assembly (AssembledFile.stageInPlace, called by ops/upload.ts storeFile) hands the store the
 * file by a hard link in the blob staging folder (LocalBlobBackend.adopt): the commit renames
 * the link to the content address, a refusal (OC-Checksum, quota) removes only the link and the
 * upload stays whole for another try. Until the session is removed the file and the blob share
 * their bytes, so nothing writes into a file with a second link: it is first copied (unshared),
 * which only a crash between the commit and the session's removal ever makes necessary.
 *
 * One process writes a session's file: the local backend serves one instance (local.ts).
 */
import { randomUUID } from 'node:crypto';
import { constants, createReadStream, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KeyedQueue } from '../../common/keyed-queue.js';
import { LocalPartStore } from '../../contracts/local-part-store.js';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../../common/private-files.js';
import { countingStream, type PartStore, type PartToPlace, type UploadPart } from '../../contracts/upload-sessions.js';
import { FileChecksums } from './checksum-worker.js';
import type { LocalBlobBackend } from './local.js';
import { BlobTooLargeError, createContentHasher, INLINE_MAX_BYTES, type ContentDigest, type StagedBlob } from './staging.js';

const PLACED_KEY = /^at(\d{1,16})-/;
/**
 * Past this a part is a file of its own, whatever its place: ext4 holds no file larger (16 TiB with
 * 4 KiB blocks), so a write there failed with EFBIG, and a part named that far (a v1 chunk of an
 * account without quota) would leave a sparse file of that apparent size.
 */
const MAX_PLACED_END = 2 ** 44;
const DATA_FILE = 'data';
const READ_CHUNK = 1 << 20;

/** The offset a part key places its part at, undefined for a part of its own file. */
export function placeOf(partKey: string): number | undefined {
  const match = PLACED_KEY.exec(partKey);
  return match ? Number(match[1]) : undefined;
}

interface Range {
  start: number;
  end: number;
}

const overlaps = (a: Range, b: Range): boolean => a.start < b.end && b.start < a.end;

/**
 * BLAKE3, SHA-1 and MD5 of a file's first bytes, following them as they are completed: `advance`
 * says the first `bytes` are written for good. SHA-1 and MD5 run on the checksum worker; BLAKE3
 * (about 7 GiB/s) reads here, 1 MiB at a time. Memory: one buffer, whatever the size.
 */
class PrefixDigests {
  private readonly sums: FileChecksums;
  private readonly blake3 = createContentHasher();
  private wanted = 0;
  private hashed = 0;
  private pumping: Promise<void> | undefined;
  private failure: Error | undefined;

  constructor(private readonly file: string) {
    this.sums = new FileChecksums(file);
  }

  /** How far the bytes are known complete. */
  get frontier(): number {
    return this.wanted;
  }

  advance(bytes: number): void {
    if (bytes <= this.wanted) return;
    this.wanted = bytes;
    this.sums.advance(bytes);
    this.kick();
  }

  /** Starts reading unless a read is under way; a read that ends short of `wanted` starts the next. */
  private kick(): void {
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
      // advance() may have come between the loop's last check and here.
      if (this.hashed < this.wanted && !this.failure) this.kick();
    });
  }

  private async pump(): Promise<void> {
    const handle = await fs.open(this.file, 'r');
    const buffer = Buffer.allocUnsafe(READ_CHUNK);
    try {
      while (this.hashed < this.wanted && !this.failure) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(READ_CHUNK, this.wanted - this.hashed), this.hashed);
        if (bytesRead === 0) throw new Error(`the assembled file ended at ${this.hashed} bytes, before the ${this.wanted} written to it`);
        this.blake3.update(buffer.subarray(0, bytesRead));
        this.hashed += bytesRead;
      }
    } catch (err) {
      this.failure = err as Error;
    } finally {
      await handle.close();
    }
  }

  /** The digests of the first `totalBytes` bytes (all of them complete now). */
  async digest(totalBytes: number): Promise<ContentDigest> {
    this.advance(totalBytes);
    this.kick();
    while (this.pumping) await this.pumping;
    if (this.hashed < totalBytes && !this.failure) this.failure = new Error(`hashed ${this.hashed} of ${totalBytes} bytes`);
    if (this.failure) {
      this.sums.abort();
      throw this.failure;
    }
    const { sha1, md5 } = await this.sums.digestBoth(totalBytes);
    return { hash: this.blake3.digest('hex'), sha1, md5 };
  }

  abort(): void {
    this.failure ??= new Error('aborted');
    this.sums.abort();
  }
}

/** What this process knows of a session: places taken by writes under way, completed places, the hashing. */
interface SessionState {
  reserved: Map<number, Range>;
  /** Placed parts known complete here, start -> end. */
  done: Map<number, number>;
  /** A v2 session's chunk size: chunk n goes at (n - 1) * stride. */
  stride: number | undefined;
  digests: PrefixDigests | undefined;
  /** Resolves whenever a reservation is released (assembly waits for writes under way). */
  drained: Array<() => void>;
  /**
   * An assembly is making the file a blob: a part that comes meanwhile (its request passed the
   * busy check just before the MOVE) goes to a file of its own, since a write at its place could
   * land in the file after it is linked as the blob.
   */
  assembling: number;
}

export class StagedPartStore implements PartStore {
  readonly needsLength = false;
  private readonly sides: LocalPartStore;
  private readonly sessions = new Map<string, SessionState>();
  /** File operations that change a session's file's identity (unshare), one at a time. */
  private readonly queue = new KeyedQueue();
  private nextReservation = 0;

  constructor(
    readonly dir: string,
    private readonly blobs: LocalBlobBackend,
  ) {
    this.sides = new LocalPartStore(dir);
  }

  private dataFile(sessionKey: string): string {
    return path.join(this.sides.sessionDir(sessionKey), DATA_FILE);
  }

  private state(sessionKey: string): SessionState {
    let state = this.sessions.get(sessionKey);
    if (!state) {
      state = { reserved: new Map(), done: new Map(), stride: undefined, digests: undefined, drained: [], assembling: 0 };
      this.sessions.set(sessionKey, state);
    }
    return state;
  }

  reserve(sessionKey: string, part: PartToPlace, rows: readonly UploadPart[]): { partKey: string; release(): void } {
    const state = this.state(sessionKey);
    const placed = rows.flatMap((row) => {
      const start = placeOf(row.partKey);
      return start === undefined ? [] : [{ row, range: { start, end: start + row.sizeBytes } }];
    });
    // Rows written before a restart are complete too: the hashing may follow them.
    for (const { range } of placed) if (!state.done.has(range.start)) this.complete(sessionKey, state, range);
    const start = part.startByte ?? (part.chunkNumber ? this.strideOf(state, placed.map((p) => p.row), part) : undefined);
    // Never past the upload's declared total or its quota (withinBytes): v2 chunk 10000 after a
    // 200 KiB chunk 1 would otherwise make a 2 GB sparse file for a user of 256 KiB.
    const range = start === undefined || start + part.sizeBytes > Math.min(MAX_PLACED_END, part.withinBytes ?? Infinity) ? undefined : { start, end: start + part.sizeBytes };
    // Taken: a row's range, a write under way, or a write just done whose row `rows` (read before) may miss.
    const taken = [...placed.map((p) => p.range), ...state.reserved.values(), ...[...state.done].map(([doneStart, end]) => ({ start: doneStart, end }))];
    const free = range !== undefined && state.assembling === 0 && !taken.some((r) => overlaps(r, range));
    if (!free) return { partKey: randomUUID(), release: () => undefined };
    const id = this.nextReservation++;
    state.reserved.set(id, range);
    return {
      partKey: `at${range.start}-${randomUUID()}`,
      release: () => {
        state.reserved.delete(id);
        for (const wake of state.drained.splice(0)) wake();
      },
    };
  }

  /**
   * Where v2 chunk `seq` goes: (seq - 1) times the session's chunk size, taken from a placed row
   * (or the first chunk seen); undefined for a chunk larger than that size. Clients send equal
   * chunks but the last; any other layout only makes more parts files of their own.
   */
  private strideOf(state: SessionState, rows: readonly UploadPart[], part: PartToPlace): number | undefined {
    if (state.stride === undefined) {
      const later = rows.find((row) => row.seq > 1);
      const first = rows.find((row) => row.seq === 1);
      state.stride = later ? (placeOf(later.partKey) as number) / (later.seq - 1) : (first?.sizeBytes ?? part.sizeBytes);
    }
    if (part.sizeBytes > state.stride || !Number.isSafeInteger(state.stride)) return undefined;
    return (part.seq - 1) * state.stride;
  }

  /** Notes a placed range as complete and lets the hashing follow what is now complete from byte 0. */
  private complete(sessionKey: string, state: SessionState, range: Range): void {
    state.done.set(range.start, range.end);
    let frontier = 0;
    for (let end = state.done.get(frontier); end !== undefined && end > frontier; end = state.done.get(frontier)) frontier = end;
    if (frontier === 0) return;
    state.digests ??= new PrefixDigests(this.dataFile(sessionKey));
    state.digests.advance(frontier);
  }

  /** The bytes of `range` changed or went: what was hashed of them no longer counts. */
  private forget(state: SessionState, start: number): void {
    state.done.delete(start);
    if (state.digests && start < state.digests.frontier) {
      state.digests.abort();
      state.digests = undefined;
    }
  }

  /**
   * Makes the session's file its own again when a commit linked it to a blob (a crash between
   * the commit and the session's removal): a copy, so writing into it never changes the blob.
   */
  private unshare(sessionKey: string): Promise<void> {
    return this.queue.run(sessionKey, async () => {
      const file = this.dataFile(sessionKey);
      const stat = await fs.stat(file).catch(() => undefined);
      if (!stat || stat.nlink <= 1) return;
      const copy = `${file}.unshared`;
      await fs.copyFile(file, copy);
      await fs.rename(copy, file);
    });
  }

  async write(sessionKey: string, partKey: string, body: Readable, sizeBytes: number | undefined, signal?: AbortSignal): Promise<number> {
    const start = placeOf(partKey);
    if (start === undefined) return this.sides.write(sessionKey, partKey, body, sizeBytes, signal);
    if (sizeBytes === undefined) throw new Error('a placed part needs its size');
    const state = this.state(sessionKey);
    const file = this.dataFile(sessionKey);
    await makePrivateDir(path.dirname(file));
    await this.unshare(sessionKey);
    const handle = await fs.open(file, constants.O_RDWR | constants.O_CREAT, PRIVATE_FILE_MODE);
    const seen = { bytes: 0 };
    try {
      // Never past its place: a longer body would overwrite the next part's bytes.
      const bounded = new Transform({
        transform(chunk: Buffer, _enc, done) {
          done(seen.bytes > sizeBytes ? new Error(`the part passes its ${sizeBytes} bytes`) : null, chunk);
        },
      });
      const out = createWriteStream('', { fd: handle.fd, start, autoClose: false, highWaterMark: READ_CHUNK });
      await pipeline(countingStream(body, seen), bounded, out, signal ? { signal } : {});
    } finally {
      await handle.close();
    }
    this.complete(sessionKey, state, { start, end: start + seen.bytes });
    return seen.bytes;
  }

  async read(sessionKey: string, part: Pick<UploadPart, 'partKey' | 'sizeBytes'>): Promise<Readable> {
    const start = placeOf(part.partKey);
    if (start === undefined) return this.sides.read(sessionKey, part);
    if (part.sizeBytes === 0) return Readable.from([]);
    return createReadStream(this.dataFile(sessionKey), { start, end: start + part.sizeBytes - 1 });
  }

  async removePart(sessionKey: string, partKey: string): Promise<void> {
    const start = placeOf(partKey);
    // A placed part's bytes stay in the file (nothing reads them without a row) until overwritten.
    if (start === undefined) await this.sides.removePart(sessionKey, partKey);
    else this.forget(this.state(sessionKey), start);
  }

  async removeSession(sessionKey: string): Promise<void> {
    this.sessions.get(sessionKey)?.digests?.abort();
    this.sessions.delete(sessionKey);
    await this.sides.removeSession(sessionKey);
  }

  assemble(sessionKey: string, parts: readonly UploadPart[]): Readable {
    return new AssembledFile(parts, (part) => this.read(sessionKey, part), (maxBytes, signal) => this.stageInPlace(sessionKey, parts, maxBytes, signal));
  }

  /**
   * The session's file as a staged blob, its side parts written into their places, cut to the
   * parts' total, hashed and fsynced: undefined when the parts do not lie where the file has them
   * (then the store reads the AssembledFile as a stream, as any other store would).
   */
  private async stageInPlace(sessionKey: string, parts: readonly UploadPart[], maxBytes: number, signal?: AbortSignal): Promise<StagedBlob | undefined> {
    const totalBytes = parts.reduce((sum, part) => sum + part.sizeBytes, 0);
    // Small ones go into their row (staging.ts INLINE_MAX_BYTES); nothing placed: the stream costs no more.
    if (totalBytes <= INLINE_MAX_BYTES || !parts.some((part) => placeOf(part.partKey) !== undefined)) return undefined;
    const state = this.state(sessionKey);
    state.assembling += 1;
    try {
      return await this.stageAssembling(sessionKey, state, parts, totalBytes, maxBytes, signal);
    } finally {
      state.assembling -= 1;
    }
  }

  private async stageAssembling(sessionKey: string, state: SessionState, parts: readonly UploadPart[], totalBytes: number, maxBytes: number, signal?: AbortSignal): Promise<StagedBlob | undefined> {
    // New parts go to files of their own (reserve); writes that began before end first.
    while (state.reserved.size > 0) await new Promise<void>((wake) => state.drained.push(wake));
    let offset = 0;
    const sides: Array<{ part: UploadPart; at: number }> = [];
    for (const part of parts) {
      const at = placeOf(part.partKey);
      if (at === undefined) sides.push({ part, at: offset });
      else if (at !== offset) return undefined;
      offset += part.sizeBytes;
    }
    if (totalBytes > maxBytes) throw new BlobTooLargeError(maxBytes);
    const file = this.dataFile(sessionKey);
    await this.unshare(sessionKey);
    const handle = await fs.open(file, 'r+');
    try {
      for (const { part, at } of sides) {
        signal?.throwIfAborted();
        this.forget(state, at);
        await pipeline(await this.sides.read(sessionKey, part), createWriteStream('', { fd: handle.fd, start: at, autoClose: false, highWaterMark: READ_CHUNK }));
        this.complete(sessionKey, state, { start: at, end: at + part.sizeBytes });
      }
      const { size } = await handle.stat();
      if (size < totalBytes) throw new Error(`the assembled file holds ${size} of its parts' ${totalBytes} bytes`);
      if (size > totalBytes) await handle.truncate(totalBytes);
      const digests = state.digests ?? new PrefixDigests(file);
      state.digests = undefined;
      // Hashing what is left while the bytes reach the disk.
      const [digest] = await Promise.all([digests.digest(totalBytes), handle.sync()]);
      return await this.blobs.adopt(file, digest, totalBytes);
    } finally {
      await handle.close();
    }
  }
}

/**
 * An upload's parts in order: a stream of their bytes (each part opened when the one before has
 * been read), which the store in-process takes as the file itself instead (stageInPlace).
 */
export class AssembledFile extends Readable {
  private chunks: AsyncIterator<Buffer> | undefined;

  constructor(
    private readonly parts: readonly UploadPart[],
    private readonly open: (part: UploadPart) => Promise<Readable>,
    /** The session's file as a staged blob, or undefined when it must be read as a stream. */
    readonly stageInPlace: (maxBytes: number, signal?: AbortSignal) => Promise<StagedBlob | undefined>,
  ) {
    super({ highWaterMark: READ_CHUNK });
  }

  private async *partsInOrder(): AsyncGenerator<Buffer> {
    for (const part of this.parts) {
      for await (const chunk of await this.open(part)) yield chunk as Buffer;
    }
  }

  override _read(): void {
    this.chunks ??= this.partsInOrder();
    this.chunks.next().then(
      ({ done, value }) => this.push(done ? null : value),
      (err: unknown) => this.destroy(err as Error),
    );
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    void this.chunks?.return?.(undefined);
    callback(err);
  }
}
