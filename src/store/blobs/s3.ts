/**
 * The S3 blob backend (@aws-sdk/client-s3): a blob is the object `<prefix>blobs/<hash>` of one
 * bucket, which any number of instances share. A body is staged locally first (staging.ts:
 * hashed, so its key is known, and fsynced), then uploaded in one PUT up to `partSizeBytes`, or
 * as a multipart upload of parts of that size; an object already there with the same size is
 * not uploaded again (content addressing).
 *
 * Nothing is written before its intent is (BlobLedger, db table blob_intents): the hash and key,
 * then the multipart upload id as soon as S3 gave one, with an expiry pushed on while parts go
 * out. The intent is cleared only once the row that refers to the blob settled (release()), so
 * an upload a crash abandoned is visible, and collectGarbage() cleans it up after its expiry:
 * it aborts the multipart upload and deletes the object unless a row refers to it. Deletion
 * records a marker in the same transaction that checks that no row and no live upload refers to
 * the blob, and an upload of the same bytes waits while a marker stands: an instance never
 * counts on an object that another one is deleting.
 *
 * What the backend avoids because S3-compatible servers differ: suffix ranges (a range is
 * always start-end), ListObjectsV2 continuation tokens (paging uses StartAfter), conditional
 * requests, and the SDK's default flexible checksums (requested only where S3 requires them).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../common/logger.js';
import { BlobMissingError, BlobUnavailableError, type BlobBackend, type BlobInfo, type BlobLedger, type BlobRange, type GarbageReport, type StreamBlobReader, type UploadIntent } from './blob-backend.js';
import { BlobStaging, INLINE_MAX_BYTES, isBlobHash, type StagedBlob, type StagingSweep } from './staging.js';
import { KeyedQueue } from '../../common/keyed-queue.js';
import { S3PartStore } from './s3-parts.js';

/** S3's smallest part (but the last): 5 MiB. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** How long a delete marker holds uploads of its hash back; a delete takes milliseconds. */
const DELETE_MARKER_MS = 5 * 60_000;
/** How often, and how long at most, an upload waits for a delete of the same bytes to finish. */
const DELETE_WAIT_MS = 50;
const DELETE_WAIT_TRIES = 200;
/** Expired intents handled per collectGarbage() run. */
const INTENT_BATCH = 100;
const LIST_PAGE = 1000;

export interface S3BackendOptions {
  bucket: string;
  /** e.g. http://127.0.0.1:9000 for a server that is not AWS; AWS's own when unset. */
  endpoint?: string | undefined;
  region: string;
  /** Prepended to every key ('' or ending in '/'), so one bucket can hold several stores. */
  prefix: string;
  /** `http://endpoint/bucket/key` rather than `http://bucket.endpoint/key` (most self-hosted servers). */
  forcePathStyle: boolean;
  /** Bodies above this are uploaded in parts of this size (at least 5 MiB). */
  partSizeBytes: number;
  /** An upload's intent expires this long after its last sign of life (its last part). */
  uploadIntentTtlMs: number;
  /** The local staging folder (`<dataDir>/tmp`): nothing in it is shared with other instances. */
  stagingDir: string;
  ledger: BlobLedger;
  now: () => number;
  log: Logger;
  /** How long a connection to S3 may take to open (ms, default 3000). */
  connectTimeoutMs?: number;
  /** How long a request may wait for S3's next byte (ms, default 30000). */
  requestTimeoutMs?: number;
  /** Tries per request, the SDK's retries with backoff included (default 3). */
  maxAttempts?: number;
  /** Credentials for tests; the app leaves them to the SDK (AWS_ACCESS_KEY_ID, profiles, roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** The S3 error names that mean "this server cannot do it": retrying will not help. */
const UNSUPPORTED = new Set(['NotImplemented', 'MethodNotAllowed']);

function errorName(err: unknown): string | undefined {
  return err instanceof S3ServiceException ? err.name : (err as { name?: string } | undefined)?.name;
}

/** Node's socket errors: S3 is not there (yet, or any more). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND', 'ECONNABORTED', 'UND_ERR_SOCKET']);
const UNAVAILABLE_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'ServiceUnavailable', 'SlowDown', 'InternalError', 'ThrottlingException']);

/** A network failure, a timeout or a 5xx (after the SDK's own retries): S3 is unavailable, not the request wrong. */
export function isS3Unavailable(err: unknown): boolean {
  if (err instanceof BlobUnavailableError) return true;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  const name = errorName(err);
  if (name !== undefined && UNAVAILABLE_NAMES.has(name)) return true;
  const status = httpStatusOf(err);
  return status !== undefined && status >= 500 && status !== 501;
}

function httpStatusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

export class S3BlobBackend implements BlobBackend {
  readonly kind = 's3';
  readonly client: S3Client;
  readonly prefix: string;
  private readonly staging: BlobStaging;
  /** Uploads between commit() and release(), and the intents release() clears. */
  private readonly pins = new Map<string, string[]>();
  private readonly queues = new KeyedQueue();
  /** Whether the last call reached S3 (noteReachable). */
  private reachable = true;

  constructor(private readonly options: S3BackendOptions) {
    if (options.partSizeBytes < MIN_PART_BYTES) throw new Error(`partSizeBytes must be at least ${MIN_PART_BYTES}`);
    this.prefix = options.prefix === '' || options.prefix.endsWith('/') ? options.prefix : `${options.prefix}/`;
    this.staging = new BlobStaging(options.stagingDir);
    this.client = new S3Client({
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // The SDK's default CRC trailers are refused by many S3-compatible servers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Bounded: an S3 that stopped answering makes a request fail (503 upstream), never hang.
      maxAttempts: options.maxAttempts ?? 3,
      requestHandler: { connectionTimeout: options.connectTimeoutMs ?? 3000, requestTimeout: options.requestTimeoutMs ?? 30_000 },
    });
  }

  /**
   * Every call to S3 goes through here: an unreachable S3 becomes BlobUnavailableError, and
   * whether S3 answers is followed, so that its loss and its return are logged once each.
   */
  private async s3<T>(request: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await request();
    } catch (err) {
      if (isS3Unavailable(err)) {
        const reason = err instanceof BlobUnavailableError ? err.message : `S3 unavailable: ${errorName(err) ?? (err as { code?: string }).code ?? 'error'}`;
        this.noteReachable(false, reason);
        throw err instanceof BlobUnavailableError ? err : new BlobUnavailableError(reason, { cause: err });
      }
      // Any answer of S3's own (a missing key, a refusal) shows it is there.
      if (httpStatusOf(err) !== undefined) this.noteReachable(true);
      throw err;
    }
    this.noteReachable(true);
    return result;
  }

  /** One warn line when S3 stops answering, one info line when it answers again; nothing per request. */
  private noteReachable(reachable: boolean, reason?: string): void {
    if (reachable === this.reachable) return;
    this.reachable = reachable;
    if (reachable) this.options.log.info('S3 answers again');
    else this.options.log.warn({ cause: reason }, 'S3 stopped answering: uploads and downloads of files kept there answer 503 until it is back');
  }

  async probe(signal: AbortSignal): Promise<void> {
    await this.s3(() => this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: signal }));
  }

  /** The object key of a blob. */
  keyOf(hash: string): string {
    if (!isBlobHash(hash)) throw new Error(`not a blob hash: ${hash}`);
    return `${this.prefix}blobs/${hash}`;
  }

  private get bucket(): string {
    return this.options.bucket;
  }

  /**
   * The object that holds `hash`: its content address, or the object of a chunked upload that
   * was adopted as the blob (ledger.objects, table blob_objects).
   */
  private async objectOf(hash: string): Promise<{ key: string; adopted: boolean }> {
    const adopted = await this.options.ledger.objects?.keyOf(hash);
    return adopted === undefined ? { key: this.keyOf(hash), adopted: false } : { key: adopted, adopted: true };
  }

  /** Where the bridge keeps chunked uploads' parts beside this backend: `<prefix>uploads/` of the bucket. */
  partStore(sessionTtlMs: number): S3PartStore {
    return new S3PartStore({ client: this.client, bucket: this.bucket, prefix: this.prefix, ledger: this.options.ledger, now: this.options.now, sessionTtlMs, backend: this });
  }

  /** An S3 call through the backend's availability tracking (s3-parts.ts uses it too). */
  send<T>(request: () => Promise<T>): Promise<T> {
    return this.s3(request);
  }

  async init(): Promise<void> {
    await this.staging.init();
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      throw new Error(`S3 bucket ${this.bucket} is not reachable${this.options.endpoint ? ` at ${this.options.endpoint}` : ''}: ${errorName(err) ?? String(err)}`, { cause: err });
    }
  }

  /** Runs `work` after every earlier commit/remove of the same blob has finished. */
  private serialize<T>(hash: string, work: () => Promise<T>): Promise<T> {
    return this.queues.run(hash, work);
  }

  stage(source: Readable | Buffer, maxBytes = Number.POSITIVE_INFINITY, signal?: AbortSignal, inlineMax = INLINE_MAX_BYTES, md5LaterBytes?: number): Promise<StagedBlob> {
    return this.staging.stage(source, maxBytes, signal, inlineMax, md5LaterBytes);
  }

  async discard(staged: StagedBlob): Promise<void> {
    await this.staging.discard(staged);
  }

  async commit(staged: StagedBlob): Promise<void> {
    const intents = this.pins.get(staged.hash) ?? [];
    this.pins.set(staged.hash, intents);
    // A small blob goes into its database row with the commit: nothing to upload, no intent.
    intents.push('');
    if (staged.objectKey !== undefined) {
      await this.serialize(staged.hash, () => this.adoptObject(staged, staged.objectKey as string, intents));
      return;
    }
    if (staged.tempPath === undefined) return;
    try {
      await this.serialize(staged.hash, () => this.upload(staged, intents));
    } finally {
      await this.staging.discard(staged);
    }
  }

  /**
   * Takes an object already in the bucket (a completed chunked upload) as the blob, under an
   * intent as an upload is: recorded as the blob's object unless the blob has one already (then
   * the object stays its upload's, removed with the upload's session: s3-parts.ts).
   */
  private async adoptObject(staged: StagedBlob, key: string, intents: string[]): Promise<void> {
    const objects = this.options.ledger.objects;
    if (!objects) throw new Error('this ledger cannot record adopted objects');
    const intent = await this.beginUpload(staged.hash, key);
    intents[intents.lastIndexOf('')] = intent;
    const there = await this.head(staged.hash);
    if (there?.sizeBytes === staged.sizeBytes) return;
    // Another instance adopting the same bytes at once wins; a record whose object is gone gives way.
    const standing = await objects.adopt(staged.hash, key);
    if (standing !== key && there === undefined) await objects.adopt(staged.hash, key, standing);
  }

  /** Records the intent, then uploads unless the object is there already. */
  private async upload(staged: StagedBlob, intents: string[]): Promise<void> {
    const key = this.keyOf(staged.hash);
    const intent = await this.beginUpload(staged.hash, key);
    // The pin's slot (pushed by commit) now names the intent release() clears.
    intents[intents.lastIndexOf('')] = intent;
    const there = await this.head(staged.hash);
    if (there?.sizeBytes === staged.sizeBytes) return;
    const tempPath = staged.tempPath as string;
    if (staged.sizeBytes <= this.options.partSizeBytes) {
      await this.s3(() => this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: createReadStream(tempPath), ContentLength: staged.sizeBytes }),
      ));
      return;
    }
    await this.uploadParts(staged, key, intent, intents);
  }

  private async beginUpload(hash: string, key: string): Promise<string> {
    for (let attempt = 0; attempt < DELETE_WAIT_TRIES; attempt += 1) {
      const now = this.options.now();
      const id = await this.options.ledger.beginUpload(hash, key, now, now + this.options.uploadIntentTtlMs);
      if (id !== undefined) return id;
      await sleep(DELETE_WAIT_MS);
    }
    throw new Error(`blob ${hash}: a delete of the same bytes did not finish in time`);
  }

  private async uploadParts(staged: StagedBlob, key: string, intent: string, intents: string[]): Promise<void> {
    const { partSizeBytes, ledger, uploadIntentTtlMs } = this.options;
    const created = await this.s3(() => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key })));
    const uploadId = created.UploadId;
    if (!uploadId) throw new Error(`S3 gave no upload id for ${key}`);
    await ledger.updateUpload(intent, { uploadId });
    try {
      const parts: CompletedPart[] = [];
      for (let start = 0, number = 1; start < staged.sizeBytes; start += partSizeBytes, number += 1) {
        const end = Math.min(start + partSizeBytes, staged.sizeBytes) - 1;
        const part = await this.s3(() => this.client.send(
          new UploadPartCommand({
            Bucket: this.bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber: number,
            Body: createReadStream(staged.tempPath as string, { start, end, highWaterMark: 1 << 20 }),
            ContentLength: end - start + 1,
          }),
        ));
        parts.push({ PartNumber: number, ETag: part.ETag });
        // A lease: the intent of an upload that still sends parts does not expire.
        await ledger.updateUpload(intent, { expiresMs: this.options.now() + uploadIntentTtlMs });
      }
      await this.s3(() => this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } })));
    } catch (err) {
      if (!(await this.abort(key, uploadId))) {
        // Left to the sweep: release() must not clear the intent that names the upload.
        intents[intents.lastIndexOf(intent)] = '';
      }
      throw err;
    }
  }

  /** Aborts a multipart upload; false when that failed and must be tried again later. */
  async abort(key: string, uploadId: string): Promise<boolean> {
    try {
      await this.s3(() => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })));
      return true;
    } catch (err) {
      const name = errorName(err);
      if (name === 'NoSuchUpload') return true;
      if (name !== undefined && UNSUPPORTED.has(name)) {
        this.options.log.warn({ key, uploadId, error: name }, 'the S3 server cannot abort a multipart upload; its parts stay until a lifecycle rule removes them');
        return true;
      }
      this.options.log.warn({ err, key, uploadId }, 'could not abort a multipart upload; tried again after its intent expires');
      return false;
    }
  }

  async release(hash: string): Promise<void> {
    const intents = this.pins.get(hash);
    const intent = intents?.pop();
    if (intents?.length === 0) this.pins.delete(hash);
    if (intent) await this.options.ledger.endUpload(intent);
  }

  async get(hash: string, range?: BlobRange): Promise<StreamBlobReader> {
    const { key } = await this.objectOf(hash);
    try {
      const answer = await this.s3(() => this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      ));
      const body = answer.Body as Readable;
      return {
        kind: 'stream',
        body,
        close: async () => {
          body.destroy();
        },
      };
    } catch (err) {
      if (errorName(err) === 'NoSuchKey' || httpStatusOf(err) === 404) throw new BlobMissingError(hash, { cause: err });
      throw err;
    }
  }

  async head(hash: string): Promise<BlobInfo | undefined> {
    const { key } = await this.objectOf(hash);
    try {
      const answer = await this.s3(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })));
      return { hash, sizeBytes: answer.ContentLength ?? 0, modifiedMs: answer.LastModified?.getTime() ?? 0 };
    } catch (err) {
      if (errorName(err) === 'NotFound' || httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async remove(hash: string): Promise<boolean> {
    return this.serialize(hash, async () => {
      if (this.pins.has(hash)) return false;
      const { key, adopted } = await this.objectOf(hash);
      return this.deleteUnreferenced(hash, key, adopted);
    });
  }

  /**
   * Deletes `key` (the object of `hash`) under a delete marker, if the ledger allows it now; an
   * adopted object's record goes with it (after the object: a crash in between leaves a record
   * of a missing object, which the collector forgets, never an object nobody names).
   */
  private async deleteUnreferenced(hash: string, key: string, adopted = false): Promise<boolean> {
    const now = this.options.now();
    const marker = await this.options.ledger.beginDelete(hash, now, now + DELETE_MARKER_MS);
    if (marker === undefined) return false;
    try {
      // The commit that released the blob survives a power cut before its object goes.
      await this.options.ledger.durable();
      await this.s3(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
      if (adopted) await this.options.ledger.objects?.forget(hash);
    } finally {
      await this.options.ledger.endDelete(marker);
    }
    return true;
  }

  /** Objects under `<prefix>blobs/` in key order, paged with StartAfter (not continuation tokens). */
  async *list(after = ''): AsyncIterable<BlobInfo> {
    const base = `${this.prefix}blobs/`;
    let startAfter = after === '' ? undefined : base + after;
    for (;;) {
      const page = await this.s3(() => this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: base, MaxKeys: LIST_PAGE, ...(startAfter ? { StartAfter: startAfter } : {}) }),
      ));
      const contents = page.Contents ?? [];
      for (const object of contents) {
        const hash = (object.Key ?? '').slice(base.length);
        if (isBlobHash(hash)) yield { hash, sizeBytes: object.Size ?? 0, modifiedMs: object.LastModified?.getTime() ?? 0 };
      }
      const last = contents.at(-1)?.Key;
      if (!page.IsTruncated || last === undefined) return;
      startAfter = last;
    }
  }

  async collectGarbage(graceMs: number): Promise<GarbageReport> {
    const report: GarbageReport = { seen: 0, removed: 0, expiredUploads: await this.sweepExpiredUploads() };
    const cutoff = this.options.now() - graceMs;
    for await (const blob of this.list()) {
      report.seen += 1;
      if (blob.modifiedMs > cutoff || this.pins.has(blob.hash) || (await this.options.ledger.isReferenced(blob.hash))) continue;
      if (await this.remove(blob.hash)) report.removed += 1;
    }
    // Adopted objects live outside `blobs/`: their records say which lost their last row.
    // One still held by its upload session (a MOVE refused after the completion: tried again) stays.
    const objects = this.options.ledger.objects;
    for (const { hash, key } of (await objects?.unreferenced(LIST_PAGE)) ?? []) {
      report.seen += 1;
      const session = key.startsWith(`${this.prefix}adopted/`) ? key.slice(`${this.prefix}adopted/`.length) : undefined;
      if (session !== undefined && (await objects?.upload(`mp-${session}`)) !== undefined) continue;
      if (await this.remove(hash)) report.removed += 1;
    }
    return report;
  }

  /** Cleans up one batch of expired upload intents: abort, delete the object unless referenced, clear. */
  async sweepExpiredUploads(): Promise<number> {
    const expired = await this.options.ledger.expiredUploads(this.options.now(), INTENT_BATCH);
    let cleaned = 0;
    for (const intent of expired) {
      if (await this.cleanUp(intent)) cleaned += 1;
    }
    return cleaned;
  }

  private async cleanUp(intent: UploadIntent): Promise<boolean> {
    if (intent.uploadId !== undefined && !(await this.abort(intent.key, intent.uploadId))) return false;
    await this.serialize(intent.hash, async () => {
      if (this.pins.has(intent.hash)) return;
      // An adopted object is its blob's: deleted only as that blob's (unreferenced) object.
      const adoptedFor = await this.options.ledger.objects?.hashOf(intent.key);
      if (adoptedFor === undefined) await this.deleteUnreferenced(intent.hash, intent.key);
      else if (adoptedFor === intent.hash) await this.deleteUnreferenced(intent.hash, intent.key, true);
    });
    await this.options.ledger.endUpload(intent.id);
    this.options.log.info({ hash: intent.hash, key: intent.key, uploadId: intent.uploadId }, 'cleaned up an upload abandoned before its row was written');
    return true;
  }

  /** Expired intents are the start's business too: a crash of this instance left them. */
  async sweepAtStart(): Promise<number> {
    return this.sweepExpiredUploads();
  }

  sweepStaging(ownOlderThanMs?: number): Promise<StagingSweep> {
    return this.staging.sweep(ownOlderThanMs);
  }

  async close(): Promise<void> {
    this.client.destroy();
    await this.staging.close();
  }
}

