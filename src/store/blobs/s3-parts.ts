/**
 * Upload parts in the store's S3 bucket: the PartStore (contracts/upload-sessions.ts) of a bridge
 * in-process with a store on S3, so a chunk sent through one instance is assembled through any
 * other, and nothing of a part stays on an instance's disk (docs/bridge-design.md "Assembly").
 *
 * A part of at least 5 MiB whose place is known before its bytes (a v2 chunk number, a v1 name's
 * or a tus PATCH's offset) is a part of the session's multipart upload to
 * `<prefix>adopted/<session key>`, numbered by that place (v2: the chunk number; v1, tus:
 * offset / 5 MiB + 1, increasing with the offset since every such part has 5 MiB or more); its
 * key says number and ETag (`mp<n>-<etag>`), which is what completing it takes, on any instance.
 * Any other part is an object of its own, `<prefix>uploads/<session key>/<part key>` (one
 * PutObject, atomic: a cut upload leaves no object), uploaded as its part at assembly: a copy of
 * that part only. Parts are written only with their size known (`needsLength`: else 411).
 *
 * Assembly (AssembledFile.stageInPlace, ops/upload.ts storeFile) checks the quota, completes the
 * multipart upload, reads the object back once for its hashes, and hands the store a staged
 * blob that names the object: the backend adopts it as the blob (s3.ts adoptObject), no byte is
 * uploaded again. A session without placed parts is streamed as before.
 *
 * The multipart upload is named by an upload intent of fixed id (`mp-<session key>`, ledger
 * blob_intents, pushed on by every part), so the collector aborts it and deletes its object
 * unless adopted if everything else is lost; removeSession does the same at once. Owns the
 * `uploads/` and `adopted/` keys of sessions; an adopted object is the blob's (s3.ts).
 */
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { KeyedQueue } from '../../common/keyed-queue.js';
import { countingStream, UploadCompletedError, type PartStore, type PartToPlace, type UploadPart } from '../../contracts/upload-sessions.js';
import type { BlobLedger, UploadIntent } from './blob-backend.js';
import { AssembledFile } from './staged-parts.js';
import { BlobTooLargeError, ContentDigests, type StagedBlob } from './staging.js';

/** S3's smallest part but the last (s3.ts MIN_PART_BYTES), and its most parts. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;
const PART_KEY = /^mp(\d{1,5})-([A-Za-z0-9]{1,56})$/;

/** The multipart part number and ETag a part key names; undefined for a part of its own object. */
export function multipartOf(partKey: string): { number: number; etag: string } | undefined {
  const match = PART_KEY.exec(partKey);
  return match ? { number: Number(match[1]), etag: match[2] as string } : undefined;
}

/** Keys are made by the bridge (UUIDs); anything else is refused rather than joined into a key. */
const SAFE_KEY = /^[A-Za-z0-9-]{1,64}$/;

function checkKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error(`not a part store key: ${JSON.stringify(key)}`);
  return key;
}

/** What the parts ask of the S3 blob backend that makes them (s3.ts): one path for its calls, and aborts. */
export interface S3PartCalls {
  /** An S3 call through the backend's availability tracking. */
  send<T>(request: () => Promise<T>): Promise<T>;
  /** Aborts a multipart upload; false when that failed and must be tried again later. */
  abort(key: string, uploadId: string): Promise<boolean>;
}

export interface S3PartStoreOptions {
  client: S3Client;
  bucket: string;
  /** The blob backend's prefix ('' or ending in '/'). */
  prefix: string;
  ledger: BlobLedger;
  now: () => number;
  /** bridge.uploadExpirySec: a multipart upload's intent outlives its session by as much again. */
  sessionTtlMs: number;
  /** For availability tracking and aborts. */
  backend: S3PartCalls;
}

export class S3PartStore implements PartStore {
  readonly needsLength = true;
  /** Creating a session's multipart upload, one at a time in this process. */
  private readonly creating = new KeyedQueue();
  /** Part numbers written here now, per session (a second write of one goes to an object of its own). */
  private readonly writing = new Map<string, Set<number>>();

  constructor(private readonly options: S3PartStoreOptions) {}

  private sessionPrefix(sessionKey: string): string {
    return `${this.options.prefix}uploads/${checkKey(sessionKey)}/`;
  }

  private keyOf(sessionKey: string, partKey: string): string {
    return this.sessionPrefix(sessionKey) + checkKey(partKey);
  }

  /** The key the session's multipart upload completes to, adopted as the blob. */
  adoptedKey(sessionKey: string): string {
    return `${this.options.prefix}adopted/${checkKey(sessionKey)}`;
  }

  private intentId(sessionKey: string): string {
    return `mp-${checkKey(sessionKey)}`;
  }

  private send<T>(request: () => Promise<T>): Promise<T> {
    return this.options.backend.send(request);
  }

  /** Where a part goes in the multipart upload: its number, or undefined for an object of its own. */
  private numberOf(part: PartToPlace): number | undefined {
    const number = part.startByte === undefined ? part.seq : Math.floor(part.startByte / MIN_PART_BYTES) + 1;
    return Number.isSafeInteger(number) && number >= 1 && number <= MAX_PARTS ? number : undefined;
  }

  reserve(sessionKey: string, part: PartToPlace, rows: readonly UploadPart[]): { partKey: string; release(): void } {
    const number = part.sizeBytes >= MIN_PART_BYTES && this.options.ledger.objects ? this.numberOf(part) : undefined;
    const writing = this.writing.get(sessionKey) ?? new Set<number>();
    // Taken: a row holds that number (a re-sent chunk), or a write of it is under way here.
    const taken = number === undefined || writing.has(number) || rows.some((row) => multipartOf(row.partKey)?.number === number);
    if (taken) return { partKey: randomUUID(), release: () => undefined };
    writing.add(number);
    this.writing.set(sessionKey, writing);
    return {
      partKey: `mp${number}-pending`,
      release: () => {
        writing.delete(number);
        if (writing.size === 0) this.writing.delete(sessionKey);
      },
    };
  }

  /**
   * Claims the session's intent (fixed id) or renews it, before any step that needs its multipart
   * upload or object to stay. An intent past its expiry is refused, never revived: the collector
   * may have listed it and be aborting the upload and deleting the object now (sweepExpiredUploads
   * in s3.ts), so a completion or a commit after it would name a deleted object.
   */
  private async holdIntent(sessionKey: string): Promise<UploadIntent> {
    const objects = this.options.ledger.objects;
    if (!objects) throw new Error('this ledger keeps no multipart uploads');
    const id = this.intentId(sessionKey);
    const now = this.options.now();
    const expires = now + 2 * this.options.sessionTtlMs;
    await objects.claimUpload(id, `upload:${sessionKey}`, this.adoptedKey(sessionKey), now, expires);
    const held = await objects.renewUpload(id, now, expires);
    if (!held) throw new Error(`the multipart upload of ${sessionKey} expired and is being removed: the upload must be sent again`);
    return held;
  }

  /** The session's multipart upload, created by the first part that needs it (once, whichever instance). */
  private async multipartUpload(sessionKey: string): Promise<string> {
    const objects = this.options.ledger.objects;
    if (!objects) throw new Error('this ledger keeps no multipart uploads');
    const id = this.intentId(sessionKey);
    const key = this.adoptedKey(sessionKey);
    const intent = await this.holdIntent(sessionKey);
    if (intent.uploadId !== undefined) return intent.uploadId;
    return this.creating.run(sessionKey, async () => {
      const again = await objects.upload(id);
      if (again?.uploadId !== undefined) return again.uploadId;
      const created = await this.send(() => this.options.client.send(new CreateMultipartUploadCommand({ Bucket: this.options.bucket, Key: key })));
      if (!created.UploadId) throw new Error(`S3 gave no upload id for ${key}`);
      const standing = await objects.setUploadId(id, created.UploadId);
      // Another instance created one first: this one goes, theirs is the session's.
      if (standing !== created.UploadId) await this.options.backend.abort(key, created.UploadId);
      if (standing === undefined) throw new Error(`the upload intent of ${sessionKey} went while its first part arrived`);
      return standing;
    });
  }

  async write(sessionKey: string, partKey: string, body: Readable, sizeBytes: number | undefined, signal?: AbortSignal): Promise<number | { sizeBytes: number; partKey: string }> {
    if (sizeBytes === undefined) throw new Error('an S3 part needs its size before its bytes');
    await this.refuseIfCompleted(sessionKey);
    const seen = { bytes: 0 };
    // A body that fails (not only a client that hangs up, which `signal` tells) ends the S3 call
    // too: the SDK would wait for the rest of a body that never comes (its requestTimeout only
    // warns), and the write would never settle. The write then rejects with the body's error.
    const cut = new AbortController();
    let failure: unknown;
    const counted = (): Readable => {
      const stream = countingStream(body, seen);
      stream.once('error', (err) => {
        failure = err;
        cut.abort(err);
      });
      return stream;
    };
    const options = { abortSignal: signal ? AbortSignal.any([signal, cut.signal]) : cut.signal };
    try {
      const placed = /^mp(\d{1,5})-pending$/.exec(partKey);
      if (placed) {
        const number = Number(placed[1]);
        const uploadId = await this.multipartUpload(sessionKey);
        const answer = await this.send(() => this.options.client.send(
          new UploadPartCommand({ Bucket: this.options.bucket, Key: this.adoptedKey(sessionKey), UploadId: uploadId, PartNumber: number, Body: counted(), ContentLength: sizeBytes }),
          options,
        ));
        const etag = (answer.ETag ?? '').replace(/"/g, '');
        if (!/^[A-Za-z0-9]{1,56}$/.test(etag)) throw new Error(`S3 answered part ${number} with an ETag this store cannot keep: ${JSON.stringify(answer.ETag)}`);
        return { sizeBytes: seen.bytes, partKey: `mp${number}-${etag}` };
      }
      await this.send(() => this.options.client.send(
        new PutObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(sessionKey, partKey), Body: counted(), ContentLength: sizeBytes }),
        options,
      ));
      return seen.bytes;
    } catch (err) {
      throw failure ?? err;
    }
  }

  /**
   * A part for a session whose multipart upload is completed (a MOVE refused at the commit left
   * the object) would not be in that object, which the next assembly takes as it is: refused.
   */
  private async refuseIfCompleted(sessionKey: string): Promise<void> {
    const intent = await this.options.ledger.objects?.upload(this.intentId(sessionKey));
    if (intent?.uploadId === undefined) return;
    const { bucket, client } = this.options;
    const done = await this.send(() => client.send(new HeadObjectCommand({ Bucket: bucket, Key: this.adoptedKey(sessionKey) }))).catch(() => undefined);
    if (done) throw new UploadCompletedError(`upload ${sessionKey} was completed already: a part sent now would not be in it`);
  }

  async read(sessionKey: string, { partKey }: Pick<UploadPart, 'partKey'>): Promise<Readable> {
    // A multipart part has no bytes to read before its upload completes: assembly never asks.
    if (multipartOf(partKey)) throw new Error(`part ${partKey} is a multipart part, read only as part of the completed object`);
    const answer = await this.send(() => this.options.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(sessionKey, partKey) })));
    return answer.Body as Readable;
  }

  async removePart(sessionKey: string, partKey: string): Promise<void> {
    // A multipart part replaced or removed stays in the upload until it completes or aborts; no row names it.
    if (multipartOf(partKey)) return;
    await this.send(() => this.options.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(sessionKey, partKey) })));
  }

  async removeSession(sessionKey: string): Promise<void> {
    const prefix = this.sessionPrefix(sessionKey);
    // Object by object (one DeleteObject each): every S3-compatible server has it, not all DeleteObjects.
    for (;;) {
      const page = await this.send(() => this.options.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: prefix, MaxKeys: 1000 })));
      const keys = (page.Contents ?? []).map((o) => o.Key).filter((k): k is string => k !== undefined);
      for (const key of keys) await this.send(() => this.options.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key })));
      if (keys.length === 0 || !page.IsTruncated) break;
    }
    await this.removeMultipart(sessionKey);
  }

  /**
   * The multipart upload aborted, its object deleted unless adopted as a blob (then it is the
   * blob's), and its intent ended last: a crash before that leaves the intent to the collector.
   */
  private async removeMultipart(sessionKey: string): Promise<void> {
    const objects = this.options.ledger.objects;
    const intent = await objects?.upload(this.intentId(sessionKey));
    if (!objects || !intent) return;
    if (intent.uploadId !== undefined && !(await this.options.backend.abort(intent.key, intent.uploadId))) {
      throw new Error(`could not abort the multipart upload of ${sessionKey}`);
    }
    if ((await objects.hashOf(intent.key)) === undefined) {
      await this.send(() => this.options.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: intent.key })));
    }
    await this.options.ledger.endUpload(intent.id);
  }

  assemble(sessionKey: string, parts: readonly UploadPart[]): Readable {
    return new AssembledFile(parts, (part) => this.readAssembled(sessionKey, parts, part), (maxBytes, signal) => this.complete(sessionKey, parts, maxBytes, signal));
  }

  /**
   * A part as the stream path reads it: its own object, or (a multipart part, after complete()
   * fell back) its range of the object completed from the multipart parts alone, which lie there
   * in number order.
   */
  private async readAssembled(sessionKey: string, parts: readonly UploadPart[], part: UploadPart): Promise<Readable> {
    const placed = multipartOf(part.partKey);
    if (!placed) return this.read(sessionKey, part);
    const start = parts.filter((p) => (multipartOf(p.partKey)?.number ?? Infinity) < placed.number).reduce((sum, p) => sum + p.sizeBytes, 0);
    if (part.sizeBytes === 0) return Readable.from([]);
    const answer = await this.send(() => this.options.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.adoptedKey(sessionKey), Range: `bytes=${start}-${start + part.sizeBytes - 1}` })));
    return answer.Body as Readable;
  }

  /** Completes the multipart upload from `parts` (number and ETag each), unless its object is there with `sizeBytes`. */
  private async completeUpload(sessionKey: string, parts: CompletedPart[], sizeBytes: number): Promise<void> {
    const { bucket, client } = this.options;
    const key = this.adoptedKey(sessionKey);
    await this.holdIntent(sessionKey);
    const done = await this.send(() => client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).catch(() => undefined);
    if (done?.ContentLength === sizeBytes) return;
    const uploadId = await this.multipartUpload(sessionKey);
    await this.send(() => client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } })));
  }

  /**
   * The parts' multipart upload completed and read back for its hashes, as a staged blob naming
   * its object; undefined when no part is a multipart part (the store then reads the parts as
   * a stream). The quota is checked first: a refusal changes nothing.
   */
  private async complete(sessionKey: string, parts: readonly UploadPart[], maxBytes: number, signal?: AbortSignal): Promise<StagedBlob | undefined> {
    if (!parts.some((part) => multipartOf(part.partKey))) return undefined;
    const totalBytes = parts.reduce((sum, part) => sum + part.sizeBytes, 0);
    if (totalBytes > maxBytes) throw new BlobTooLargeError(maxBytes);
    const numbered = parts.map((part) => ({ part, number: multipartOf(part.partKey)?.number ?? this.numberOf({ seq: part.seq, startByte: part.startByte, sizeBytes: part.sizeBytes }) }));
    const fits = numbered.every(({ part, number }, i) => number !== undefined && number > (numbered[i - 1]?.number ?? 0) && (i === numbered.length - 1 || part.sizeBytes >= MIN_PART_BYTES));
    const key = this.adoptedKey(sessionKey);
    const { bucket, client } = this.options;
    if (!fits) {
      // Parts S3 cannot take in this order (a part under 5 MiB that is not the last, between
      // multipart ones): the multipart parts alone are completed, and the store reads the parts
      // as a stream, those from their range of that object (readAssembled); the bytes go twice.
      const placed = numbered.flatMap(({ part }) => {
        const at = multipartOf(part.partKey);
        return at ? [{ PartNumber: at.number, ETag: `"${at.etag}"`, sizeBytes: part.sizeBytes }] : [];
      }).sort((a, b) => a.PartNumber - b.PartNumber);
      await this.completeUpload(sessionKey, placed.map(({ PartNumber, ETag }) => ({ PartNumber, ETag })), placed.reduce((sum, p) => sum + p.sizeBytes, 0));
      return undefined;
    }
    // A MOVE refused after the completion (OC-Checksum) left the object whole: taken again as it
    // is, under its intent held anew (the object is the collector's once that has expired).
    await this.holdIntent(sessionKey);
    const done = await this.send(() => client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).catch(() => undefined);
    if (done?.ContentLength !== totalBytes) {
      const uploadId = await this.multipartUpload(sessionKey);
      const completed: CompletedPart[] = [];
      for (const { part, number } of numbered) {
        signal?.throwIfAborted();
        const placed = multipartOf(part.partKey);
        if (placed) {
          completed.push({ PartNumber: number, ETag: `"${placed.etag}"` });
          continue;
        }
        // A part of its own object (a re-sent chunk, a small last one) becomes its part: a copy of that part only.
        const body = await this.read(sessionKey, part);
        const answer = await this.send(() => client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: number as number, Body: body, ContentLength: part.sizeBytes })));
        completed.push({ PartNumber: number, ETag: answer.ETag });
      }
      await this.send(() => client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: completed } })));
    }
    // Read back once for the hashes (a read, not a copy): the object is the blob from here on.
    const digests = new ContentDigests();
    let read = 0;
    const answer = await this.send(() => client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), signal ? { abortSignal: signal } : {}));
    for await (const chunk of answer.Body as Readable) {
      digests.update(chunk as Buffer);
      read += (chunk as Buffer).length;
    }
    if (read !== totalBytes) throw new Error(`upload ${sessionKey}: the completed object holds ${read} of its parts' ${totalBytes} bytes`);
    return { ...digests.digest(), sizeBytes: totalBytes, objectKey: key };
  }
}
