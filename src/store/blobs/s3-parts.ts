/**
 * Upload parts as objects in the store's S3 bucket (`<prefix>uploads/<session key>/<part key>`):
 * the PartStore (common/upload-sessions.ts) of a bridge in-process with a store on S3, so a chunk
 * sent through one instance is assembled through any other, and nothing of a part stays on an
 * instance's disk. One PutObject per part (atomic: a cut upload leaves no object), so a part's
 * size must be known first (`needsLength`: the front door answers 411 without a Content-Length).
 * Owns the `uploads/` keys only; the blob collector (s3.ts) lists `blobs/` and never sees them.
 */
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { countingStream, type PartStore, type UploadPart } from '../../common/upload-sessions.js';

/** Keys are made by the bridge (UUIDs); anything else is refused rather than joined into a key. */
const SAFE_KEY = /^[A-Za-z0-9-]{1,64}$/;

function checkKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error(`not a part store key: ${JSON.stringify(key)}`);
  return key;
}

export interface S3PartStoreOptions {
  client: S3Client;
  bucket: string;
  /** The blob backend's prefix ('' or ending in '/'). */
  prefix: string;
}

export class S3PartStore implements PartStore {
  readonly needsLength = true;

  constructor(private readonly options: S3PartStoreOptions) {}

  private sessionPrefix(sessionKey: string): string {
    return `${this.options.prefix}uploads/${checkKey(sessionKey)}/`;
  }

  private keyOf(sessionKey: string, partKey: string): string {
    return this.sessionPrefix(sessionKey) + checkKey(partKey);
  }

  async write(sessionKey: string, partKey: string, body: Readable, sizeBytes: number | undefined, signal?: AbortSignal): Promise<number> {
    if (sizeBytes === undefined) throw new Error('an S3 part needs its size before its bytes');
    const seen = { bytes: 0 };
    await this.options.client.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(sessionKey, partKey), Body: countingStream(body, seen), ContentLength: sizeBytes }),
      signal ? { abortSignal: signal } : {},
    );
    return seen.bytes;
  }

  async read(sessionKey: string, { partKey }: Pick<UploadPart, 'partKey'>): Promise<Readable> {
    const answer = await this.options.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(sessionKey, partKey) }));
    return answer.Body as Readable;
  }

  async removePart(sessionKey: string, partKey: string): Promise<void> {
    await this.options.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(sessionKey, partKey) }));
  }

  async removeSession(sessionKey: string): Promise<void> {
    const prefix = this.sessionPrefix(sessionKey);
    // Object by object (one DeleteObject each): every S3-compatible server has it, not all DeleteObjects.
    for (;;) {
      const page = await this.options.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: prefix, MaxKeys: 1000 }));
      const keys = (page.Contents ?? []).map((o) => o.Key).filter((k): k is string => k !== undefined);
      for (const key of keys) await this.options.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
      if (keys.length === 0 || !page.IsTruncated) return;
    }
  }
}
