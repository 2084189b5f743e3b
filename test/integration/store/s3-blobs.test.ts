/**
 * The store with `store.blobs.backend: s3` against s3rver on loopback: uploads (a small file kept
 * in its row, a 12 MiB one as a multipart upload in 5 MiB parts), view with Range and download
 * over HTTP, the in-process download (a streamed S3 body through sendTo), delete to trash and
 * purge (the object deleted, the bucket left with what rows refer to), disk_used exact
 * throughout, and no upload intent left behind.
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_VERSION, nodeId, type HttpStoreClient, type NodeId } from '../../../src/store-client/index.js';
import { S3BlobBackend } from '../../../src/store/blobs/s3.js';
import type { AssembledFile } from '../../../src/store/blobs/staged-parts.js';
import { UploadCompletedError } from '../../../src/contracts/upload-sessions.js';
import { contentHashOf, type StagedBlob } from '../../../src/store/blobs/staging.js';
import { addBlobRef, releaseBlobRef } from '../../../src/store/storage/blob-refs.js';
import { createLocalClient } from '../../../src/store/local-client.js';
import { S3RVER_CREDENTIALS, startS3Server, type TestS3Server } from '../../helpers/s3-server.js';
import { blobHashOf, readBlobRefs, createSeeder, readDiskUsed, uploadFile, type SeededUser } from '../../helpers/seed.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { MiB, patternBytes } from '../../helpers/stream-helpers.js';

let s3: TestS3Server;
let store: TestStore;
let client: HttpStoreClient;
let ann: SeededUser;

const SMALL = Buffer.from('a small file, kept in its database row');
const BIG = patternBytes(3, 12 * MiB);

async function fetchBytes(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const res = await request(store.url + path, { headers });
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
}

async function objectKeys(): Promise<string[]> {
  const backend = store.ctx.blobs as S3BlobBackend;
  const page = await backend.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: backend.prefix }));
  return (page.Contents ?? []).map((o) => o.Key as string).sort();
}

async function intentCount(): Promise<number> {
  return ((await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM blob_intents')) as { n: number }).n;
}

beforeAll(async () => {
  s3 = await startS3Server();
  // The AWS SDK's usual source of credentials, as an operator would set them.
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  store = await startTestStore({
    flags: {
      'store.blobs.s3.bucket': s3.bucket,
      'store.blobs.s3.endpoint': s3.endpoint,
      'store.blobs.s3.forcePathStyle': true,
      'store.blobs.s3.prefix': 'store-a',
      'store.blobs.s3.partSizeBytes': 5 * MiB,
    },
  });
  const seeder = await createSeeder(store);
  client = seeder.client;
  ann = await seeder.user('Ann Bucket');
});

afterAll(async () => {
  await store?.close();
  await s3?.close();
});

describe('the store over S3', () => {
  let small: NodeId;
  let big: NodeId;

  it('picks the S3 backend because a bucket is configured', () => {
    expect(store.ctx.blobs.kind).toBe('s3');
  });

  it('stores a small file in its row and a 12 MiB one as an object, disk_used exact', async () => {
    small = await uploadFile(client, ann.session, 'home', 'small.txt', SMALL);
    big = await uploadFile(client, ann.session, 'home', 'big.bin', BIG);
    expect(await readDiskUsed(store, ann.uuid)).toBe(SMALL.length + BIG.length);
    expect(await objectKeys()).toEqual([`store-a/blobs/${blobHashOf(BIG)}`]);
    expect(await intentCount()).toBe(0);
  });

  it('serves a Range of the object in view mode, and the whole in download mode', async () => {
    const view = client.downloadPath(ann.session, big, 'big.bin', LATEST_VERSION, 'view');
    const ranged = await fetchBytes(view, { range: `bytes=${5 * MiB - 10}-${5 * MiB + 9}` });
    expect(ranged.status).toBe(206);
    expect(ranged.headers['content-range']).toBe(`bytes ${5 * MiB - 10}-${5 * MiB + 9}/${BIG.length}`);
    expect(ranged.body.equals(BIG.subarray(5 * MiB - 10, 5 * MiB + 10))).toBe(true);
    const whole = await fetchBytes(client.downloadPath(ann.session, big, 'big.bin', LATEST_VERSION, 'download'));
    expect(whole.status).toBe(200);
    expect(whole.body.equals(BIG)).toBe(true);
    const smallOne = await fetchBytes(client.downloadPath(ann.session, small, 'small.txt', LATEST_VERSION, 'download'));
    expect(smallOne.body).toEqual(SMALL);
  });

  it('streams the object in-process through sendTo, whole and ranged', async () => {
    const local = createLocalClient(store.ctx);
    const session = await local.login(ann.email, 'Secret-Passw0rd');
    const entry = (await local.listFolder(session, nodeId('home'))).find((e) => e.name === 'big.bin');
    if (!entry) throw new Error('big.bin not listed');
    for (const range of [undefined, { start: 7 * MiB, end: 7 * MiB + 4095 }]) {
      const download = await local.download(session, entry.id, 'big.bin', range ? { range } : {});
      const sink = new PassThrough();
      const chunks: Buffer[] = [];
      sink.on('data', (chunk: Buffer) => chunks.push(chunk));
      if (!download.sendTo) throw new Error('the in-process download has no sendTo');
      await download.sendTo(sink);
      const expected = range ? BIG.subarray(range.start, range.end + 1) : BIG;
      expect(Buffer.concat(chunks).equals(expected)).toBe(true);
    }
  });

  it('keeps the object through trash, deletes it on purge, and frees disk_used exactly', async () => {
    await client.remove(ann.session, big);
    expect(await readDiskUsed(store, ann.uuid)).toBe(SMALL.length + BIG.length);
    expect(await objectKeys()).toHaveLength(1);
    await client.remove(ann.session, big);
    expect(await readDiskUsed(store, ann.uuid)).toBe(SMALL.length);
    expect(await readBlobRefs(store, blobHashOf(BIG))).toBe(0);
    expect(await objectKeys()).toEqual([]);
    expect(await intentCount()).toBe(0);
  });

  it('uploads the same bytes again after the purge (a new object, not a dangling row)', async () => {
    const again = await uploadFile(client, ann.session, 'home', 'again.bin', BIG);
    expect(await objectKeys()).toEqual([`store-a/blobs/${blobHashOf(BIG)}`]);
    const whole = await fetchBytes(client.downloadPath(ann.session, again, 'again.bin', LATEST_VERSION, 'download'));
    expect(whole.body.equals(BIG)).toBe(true);
    expect(await readDiskUsed(store, ann.uuid)).toBe(SMALL.length + BIG.length);
  });
});

describe('a blob adopted from an object away from its address (a completed chunked upload: s3-parts.ts)', () => {
  /** An object put at `adopted/<name>` and committed as the blob of its bytes, with one row referring to it. */
  async function adopt(name: string, bytes: Buffer): Promise<StagedBlob> {
    const backend = store.ctx.blobs as S3BlobBackend;
    const key = `${backend.prefix}adopted/${name}`;
    await backend.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: bytes, ContentLength: bytes.length }));
    const staged: StagedBlob = { hash: contentHashOf(bytes), sha1: createHash('sha1').update(bytes).digest('hex'), md5: createHash('md5').update(bytes).digest('hex'), sizeBytes: bytes.length, objectKey: key };
    await backend.commit(staged);
    await addBlobRef(store.ctx.storage.sql, staged.hash, staged.sizeBytes);
    await backend.release(staged.hash);
    return staged;
  }

  const readAll = async (hash: string, range?: { start: number; end: number }): Promise<Buffer> => {
    const reader = await store.ctx.blobs.get(hash, range);
    if (reader.kind !== 'stream') throw new Error('an S3 blob is a stream');
    const chunks: Buffer[] = [];
    for await (const chunk of reader.body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  it('is read, ranged and headed where it lies, and removed with its last row (object and record)', async () => {
    const bytes = patternBytes(41, 6 * MiB + 5);
    const staged = await adopt('session-one', bytes);
    const backend = store.ctx.blobs as S3BlobBackend;
    expect(await objectKeys()).not.toContain(`store-a/blobs/${staged.hash}`);
    expect((await readAll(staged.hash)).equals(bytes)).toBe(true);
    expect((await readAll(staged.hash, { start: 10, end: 19 })).equals(bytes.subarray(10, 20))).toBe(true);
    expect((await backend.head(staged.hash))?.sizeBytes).toBe(bytes.length);
    // The same bytes adopted again from another object: the first stays the blob's.
    await adopt('session-two', bytes);
    expect(await store.ctx.storage.sql.all('SELECT key FROM blob_objects WHERE hash = ?', [staged.hash])).toEqual([{ key: 'store-a/adopted/session-one' }]);
    expect(await releaseBlobRef(store.ctx.storage.sql, staged.hash)).toBe(false);
    expect(await releaseBlobRef(store.ctx.storage.sql, staged.hash)).toBe(true);
    expect(await backend.remove(staged.hash)).toBe(true);
    expect(await objectKeys()).not.toContain('store-a/adopted/session-one');
    expect(await store.ctx.storage.sql.all('SELECT key FROM blob_objects')).toEqual([]);
    expect(await intentCount()).toBe(0);
  });

  it('is collected when its last row went without the removal (a crash after the commit)', async () => {
    const bytes = patternBytes(42, 5 * MiB + 1);
    const staged = await adopt('session-three', bytes);
    expect(await releaseBlobRef(store.ctx.storage.sql, staged.hash)).toBe(true);
    const report = await store.ctx.blobs.collectGarbage(0);
    expect(report.removed).toBeGreaterThanOrEqual(1);
    expect(await objectKeys()).not.toContain('store-a/adopted/session-three');
    expect(await store.ctx.storage.sql.all('SELECT key FROM blob_objects')).toEqual([]);
  });
});


describe('a chunked upload whose multipart intent expired (s3-parts.ts) against the collector', () => {
  it('is not assembled: the collector may be deleting its object, and a commit would then name a deleted object', async () => {
    const backend = store.ctx.blobs as S3BlobBackend;
    const parts = backend.partStore(60_000);
    const session = 'expired-intent-session';
    const bytes = patternBytes(43, 5 * MiB + 7);
    const place = parts.reserve(session, { seq: 1, startByte: 0, sizeBytes: bytes.length }, []);
    const written = await parts.write(session, place.partKey, Readable.from([bytes]), bytes.length);
    place.release();
    if (typeof written === 'number') throw new Error('a placed part is a multipart part');
    const rows = [{ name: '1', seq: 1, startByte: 0, sizeBytes: bytes.length, partKey: written.partKey }];
    // A first MOVE completes the object and is refused at the commit (OC-Checksum): the object stays.
    const first = await (parts.assemble(session, rows) as AssembledFile).stageInPlace(Number.MAX_SAFE_INTEGER);
    expect(first?.objectKey).toBe('store-a/adopted/expired-intent-session');
    // The intent's expiry passes while the session lives on (a MOVE refused by the quota touches it).
    await store.ctx.storage.sql.run("UPDATE blob_intents SET expires = 1 WHERE id = 'mp-expired-intent-session'");
    // The MOVE sent again: before, it took the object as it was and the collector deleted that
    // object before the commit recorded it (the blob's row then named a deleted object).
    await expect((parts.assemble(session, rows) as AssembledFile).stageInPlace(Number.MAX_SAFE_INTEGER)).rejects.toThrow(/expired/);
    await backend.sweepExpiredUploads();
    expect(await objectKeys()).not.toContain('store-a/adopted/expired-intent-session');
    expect(await intentCount()).toBe(0);
    await parts.removeSession(session);
  });
});

describe('a chunk sent again after its upload was completed on S3 (a MOVE refused at the commit)', () => {
  it('is refused: the next MOVE takes the completed object as it is, which holds the chunk sent before', async () => {
    const backend = store.ctx.blobs as S3BlobBackend;
    const parts = backend.partStore(60_000);
    const session = 'resent-after-completion';
    const rows = [];
    for (const seq of [1, 2]) {
      const bytes = patternBytes(50 + seq, 5 * MiB);
      const place = parts.reserve(session, { seq, startByte: undefined, sizeBytes: bytes.length, chunkNumber: true }, rows);
      const written = await parts.write(session, place.partKey, Readable.from([bytes]), bytes.length);
      place.release();
      if (typeof written === 'number') throw new Error('a placed part is a multipart part');
      rows.push({ name: String(seq), seq, startByte: undefined, sizeBytes: bytes.length, partKey: written.partKey });
    }
    const first = await (parts.assemble(session, rows) as AssembledFile).stageInPlace(Number.MAX_SAFE_INTEGER);
    expect(first?.objectKey).toBe(`store-a/adopted/${session}`);
    // Chunk 2 sent again with other bytes: before, it was taken (an object of its own) and the
    // next assembly committed the completed object, chunk 2's first bytes and all.
    const again = patternBytes(60, 5 * MiB);
    const place = parts.reserve(session, { seq: 2, startByte: undefined, sizeBytes: again.length }, rows);
    await expect(parts.write(session, place.partKey, Readable.from([again]), again.length)).rejects.toBeInstanceOf(UploadCompletedError);
    place.release();
    await parts.removeSession(session);
    expect(await objectKeys()).not.toContain(`store-a/adopted/${session}`);
  });
});
