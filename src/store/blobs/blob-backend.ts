/**
 * The one interface every blob backend implements (the local folder, S3): content-addressed, so
 * a write of the same bytes is idempotent and any instance may serve any blob. Nothing outside
 * src/store/blobs/ opens, uploads or deletes a blob's bytes; operations hold a backend and never
 * a path or a bucket key. Small blobs (staging.ts INLINE_MAX_BYTES) live in their database row
 * whatever the backend: staging hands them back and the backend never sees them.
 *
 * A write is two steps around the metadata transaction: `commit(staged)` makes the bytes
 * readable at their address and pins them, the caller commits the row that refers to them,
 * then `release(hash)` ends the pin (whether the row was committed or not). Deletion is only
 * ever "remove if unreferenced", re-checked by the backend at the last moment, so a purge or
 * the garbage collector never takes bytes an upload of the same content is about to refer to.
 *
 * Which rows refer to a blob, and which uploads are under way, the backend asks a BlobLedger
 * (storage/revisions.ts storageBlobLedger): the backends move bytes and never touch the database themselves.
 *
 * Removal waits for durability, in the one place every path goes through (remove(), the start's
 * sweep): after the check that nothing refers to the blob, `BlobLedger.durable()` makes every
 * commit that check saw survive a power cut, and only then do the bytes go. Without it a purge,
 * retention, the collector or a repair could unlink bytes that a power cut then brings their
 * rows back for (SQLite's commits reach the disk at the next WAL fsync: durability.ts).
 */
import type { Readable } from 'node:stream';
import type { StagedBlob, StagingSweep } from './staging.js';

/** Bytes `start..end` of a blob, both inclusive (as HTTP ranges). */
export interface BlobRange {
  start: number;
  end: number;
}

/** What a backend knows of one stored blob. */
export interface BlobInfo {
  hash: string;
  sizeBytes: number;
  /** When the bytes were written (file mtime, object LastModified): the GC's grace period counts from it. */
  modifiedMs: number;
}

/**
 * An opened blob, or the range of it asked for. A local file is `file`: positional reads into
 * the caller's buffers (ops/download.ts sendRevision reuses two 1 MiB buffers, nothing per read
 * for the collector) or a stream of the range; a remote object is `stream`, its body as it
 * arrives. `close()` releases either (safe to call twice, and after the stream ended).
 */
export type BlobReader = FileBlobReader | StreamBlobReader;

export interface FileBlobReader {
  readonly kind: 'file';
  /** Reads up to `length` bytes at `position` of the blob into `buffer`; 0 past its end. */
  readAt(buffer: Buffer, length: number, position: number): Promise<number>;
  /** The range given to get() (or the whole blob) as a stream that closes the file at its end. */
  stream(): Readable;
  close(): Promise<void>;
}

export interface StreamBlobReader {
  readonly kind: 'stream';
  /** The range given to get() (or the whole blob). */
  readonly body: Readable;
  close(): Promise<void>;
}

/** get() of a blob the backend does not hold: its rows point at nothing (logged as an error; 500). */
export class BlobMissingError extends Error {
  constructor(readonly hash: string, options?: ErrorOptions) {
    super(`blob ${hash} is missing from the blob backend`, options);
  }
}

/**
 * The backend could not be reached or failed on its side (S3: a network error, a timeout, a 5xx
 * after the SDK's retries): worth retrying later, a 503 with Retry-After (envelope.ts).
 */
export class BlobUnavailableError extends Error {
  override name = 'BlobUnavailableError';
}

export interface GarbageReport {
  /** Blobs the backend holds that were looked at. */
  seen: number;
  /** Unreferenced, older than the grace period, and removed. */
  removed: number;
  /** Upload intents past their expiry that were cleaned up (aborted uploads, orphan objects). */
  expiredUploads: number;
}

export interface BlobBackend {
  readonly kind: 'local' | 's3';
  /** Folders, the bucket's reachability, and this process's ownership of what it stages (staging.ts). */
  init(): Promise<void>;
  /** A cheap reachability check for /readyz (S3: HeadBucket; local: the folder is there); throws when unreachable. */
  probe(signal: AbortSignal): Promise<void>;
  /** Reads and hashes a body (staging.ts); a small one comes back inline for its row. */
  /** `md5LaterBytes`: a body that passes it has its MD5 after stage() returns (StagedBlob.md5Later). */
  stage(source: Readable | Buffer, maxBytes?: number, signal?: AbortSignal, inlineMax?: number, md5LaterBytes?: number): Promise<StagedBlob>;
  /** Drops what stage() wrote, for a body that is refused after staging. */
  discard(staged: StagedBlob): Promise<void>;
  /**
   * put: makes a staged blob readable at its content address (nothing for an inline one) and
   * pins it until release(hash). Throws when the bytes could not be stored (the temp is
   * dropped either way); call release() then too.
   */
  commit(staged: StagedBlob): Promise<void>;
  /** Ends the pin commit() took, once the transaction referring to the blob settled. */
  release(hash: string): Promise<void>;
  /** Opens a stored blob or a range of it; throws BlobMissingError when it is not there. */
  get(hash: string, range?: BlobRange): Promise<BlobReader>;
  head(hash: string): Promise<BlobInfo | undefined>;
  /**
   * Deletes a blob when nothing refers to it at this moment: not pinned by an upload here, no
   * row, no upload of the same bytes under way on any instance; and only once the commit that
   * released it is durable (BlobLedger.durable). Returns whether it was removed.
   */
  remove(hash: string): Promise<boolean>;
  /** Every stored blob (not inline ones) in hash order, after `after`: what GC walks. */
  list(after?: string): AsyncIterable<BlobInfo>;
  /**
   * Maintenance while the store runs: cleans up expired upload intents, then removes blobs
   * unreferenced and older than `graceMs` (each re-checked by remove()).
   */
  collectGarbage(graceMs: number): Promise<GarbageReport>;
  /** At start, before anything is served: what must go of a crash's leftovers (local: orphan files). */
  sweepAtStart(): Promise<number>;
  /**
   * Removes staged parts no live process owns (a killed one's: staging.ts), and this process's
   * own parts untouched for longer than `ownOlderThanMs` when given: at start and periodically.
   */
  sweepStaging(ownOlderThanMs?: number): Promise<StagingSweep>;
  /** Ends this process's use; its ownership of the staging folder ends (staging.ts close). */
  close(): Promise<void>;
}

/** An upload's intent: recorded before any byte is written, cleared once its row settled. */
export interface UploadIntent {
  id: string;
  hash: string;
  /** The backend's name for the bytes (an S3 key). */
  key: string;
  /** The multipart upload under way, once created. */
  uploadId: string | undefined;
  expiresMs: number;
}

/**
 * What the backends ask of the database. Each method is one atomic step (SQLite: one
 * statement or transaction), so two instances see one order.
 */
export interface BlobLedger {
  /** Whether a row refers to the blob (inline or not). */
  isReferenced(hash: string): Promise<boolean>;
  /**
   * Resolves once every commit this process's connection has seen is on disk: what a backend
   * awaits between finding a blob unreferenced and removing its bytes. SQLite: an fsync of the
   * WAL when something may not be on disk yet (durability.ts); PostgreSQL: nothing to wait for,
   * its COMMIT returns once flushed.
   */
  durable(): Promise<void>;
  /** Records an intent to write `hash`; undefined while a delete of the same hash is under way (try again). */
  beginUpload(hash: string, key: string, nowMs: number, expiresMs: number): Promise<string | undefined>;
  /** Notes the multipart upload id of an intent, or pushes its expiry on (a lease renewed while streaming). */
  updateUpload(id: string, change: { uploadId?: string; expiresMs?: number }): Promise<void>;
  endUpload(id: string): Promise<void>;
  /** Intents whose expiry passed (a crashed or hung upload), oldest first. */
  expiredUploads(nowMs: number, limit: number): Promise<UploadIntent[]>;
  /**
   * Atomically: when no row refers to `hash` and no unexpired upload intent names it, records a
   * delete marker (which makes beginUpload of the hash wait) and returns its id; else undefined.
   */
  beginDelete(hash: string, nowMs: number, expiresMs: number): Promise<string | undefined>;
  endDelete(id: string): Promise<void>;
  /**
   * Objects that hold a blob away from its content address (S3: a chunked upload's completed
   * multipart object, adopted as the blob; table blob_objects). Optional: a ledger without them
   * knows no such object, and every blob is at its address.
   */
  objects?: AdoptedObjects;
}

export interface AdoptedObjects {
  /** The key of the object that holds `hash`, when it is not the content address. */
  keyOf(hash: string): Promise<string | undefined>;
  /** The blob an object holds, when it was adopted. */
  hashOf(key: string): Promise<string | undefined>;
  /** Records `key` as the object of `hash` unless it has one (or has `replacing`); returns the key that stands. */
  adopt(hash: string, key: string, replacing?: string): Promise<string>;
  /** Forgets the object of `hash` (once it is deleted). */
  forget(hash: string): Promise<void>;
  /** The adopted objects whose blob no row refers to (a collector's work), at most `limit`. */
  unreferenced(limit: number): Promise<Array<{ hash: string; key: string }>>;
  /** Records an upload intent under a fixed id unless one stands; returns the one that stands. */
  claimUpload(id: string, hash: string, key: string, nowMs: number, expiresMs: number): Promise<UploadIntent>;
  /** Notes the multipart upload of a claimed intent unless one is noted; returns the one that stands. */
  setUploadId(id: string, uploadId: string): Promise<string | undefined>;
  /** The intent of that id, if any. */
  upload(id: string): Promise<UploadIntent | undefined>;
  /**
   * Moves the expiry of that intent to `expiresMs` unless it has passed (`nowMs`): an expired
   * intent is the collector's, which may be deleting its object at this moment. Returns the
   * renewed intent, or undefined.
   */
  renewUpload(id: string, nowMs: number, expiresMs: number): Promise<UploadIntent | undefined>;
}
