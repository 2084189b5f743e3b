/**
 * Upload parts written at their place in the assembled file (src/store/blobs/staged-parts.ts),
 * over a real local blob backend in a temp folder: where each part goes (v1 and tus offsets, v2
 * numbers times the chunk size, a taken place), the digests of a file followed as it grew and of
 * one this process never saw (a restart) alike, and the file made the blob without a copy, which
 * a later write into the upload (after a crash between the commit and the session's removal)
 * never changes, and whose staged link the sweep of old staged parts leaves alone.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadPart } from '../../../src/contracts/upload-sessions.js';
import { LocalBlobBackend } from '../../../src/store/blobs/local.js';
import { AssembledFile, placeOf, StagedPartStore } from '../../../src/store/blobs/staged-parts.js';
import { contentHashOf } from '../../../src/store/blobs/staging.js';
import { MiB, patternBytes, readAll } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const tmp = makeTmpDir('driveway-staged-parts-');
let blobs: LocalBlobBackend;

beforeAll(async () => {
  blobs = new LocalBlobBackend(tmp.dir);
  await blobs.init();
});
afterAll(async () => {
  await blobs.close();
  tmp.remove();
});

const partsStore = (): StagedPartStore => new StagedPartStore(path.join(tmp.dir, 'uploads'), blobs);

/**
 * Sends `bytes` as the part `name` the way UploadService.putPart does: reserve, write, then the
 * row. Without a start byte `seq` is a v2 chunk number unless `chunkNumber` says otherwise (a v1 name).
 */
async function putPart(store: StagedPartStore, session: string, rows: UploadPart[], name: string, seq: number, startByte: number | undefined, bytes: Buffer, placement: { chunkNumber?: boolean; withinBytes?: number } = {}): Promise<UploadPart> {
  const place = store.reserve(session, { seq, startByte, sizeBytes: bytes.length, chunkNumber: startByte === undefined, ...placement }, rows);
  try {
    const sizeBytes = await store.write(session, place.partKey, Readable.from([bytes]), bytes.length);
    const part: UploadPart = { name, seq, startByte, sizeBytes, partKey: place.partKey };
    rows.push(part);
    return part;
  } finally {
    place.release();
  }
}

async function stageAll(store: StagedPartStore, session: string, rows: UploadPart[]) {
  const body = store.assemble(session, [...rows].sort((a, b) => a.seq - b.seq));
  expect(body).toBeInstanceOf(AssembledFile);
  const staged = await (body as AssembledFile).stageInPlace(Number.POSITIVE_INFINITY);
  if (!staged) throw new Error('not staged in place');
  return staged;
}

describe('staged parts (local backend)', () => {
  it('places v2 chunks at (n - 1) x the chunk size, the smaller last one too, and a larger or re-sent one in a file of its own', async () => {
    const store = partsStore();
    const rows: UploadPart[] = [];
    const chunk = patternBytes(1, MiB);
    expect(placeOf((await putPart(store, 'v2', rows, '2', 2, undefined, chunk)).partKey)).toBe(MiB);
    expect(placeOf((await putPart(store, 'v2', rows, '1', 1, undefined, chunk)).partKey)).toBe(0);
    expect(placeOf((await putPart(store, 'v2', rows, '4', 4, undefined, chunk.subarray(0, 10))).partKey)).toBe(3 * MiB);
    expect(placeOf((await putPart(store, 'v2', rows, '3', 3, undefined, Buffer.concat([chunk, chunk]))).partKey)).toBeUndefined();
    expect(placeOf((await putPart(store, 'v2', rows, '1', 1, undefined, chunk)).partKey)).toBeUndefined();
    await store.removeSession('v2');
  });

  it('places no part ending past the upload’s bound (its total or quota), nor a v1 chunk named by one number: files of their own, no sparse file', async () => {
    const store = partsStore();
    const rows: UploadPart[] = [];
    const chunk = patternBytes(2, 200 * 1024);
    const within = { withinBytes: 256 * 1024 };
    expect(placeOf((await putPart(store, 'bounded', rows, '1', 1, undefined, chunk, within)).partKey)).toBe(0);
    // v2 chunk 10000 at 9999 x 200 KiB: before, a 2 GB sparse file for a user of 256 KiB.
    expect(placeOf((await putPart(store, 'bounded', rows, '10000', 10_000, undefined, chunk.subarray(0, 10), within)).partKey)).toBeUndefined();
    const data = path.join(tmp.dir, 'uploads', 'bounded', 'data');
    expect(statSync(data).size).toBe(chunk.length);
    // v1 numbers are ordinals or offsets (Nextcloud desktop): none is a place.
    expect(placeOf((await putPart(store, 'v1-numbers', [], '1048576', 1_048_576, undefined, chunk, { chunkNumber: false })).partKey)).toBeUndefined();
    expect(existsSync(path.join(tmp.dir, 'uploads', 'v1-numbers', 'data'))).toBe(false);
    await store.removeSession('bounded');
    await store.removeSession('v1-numbers');
  });

  it('hands the parts over as a stream when a placed one is not where the order puts it (v2 chunks of other sizes)', async () => {
    const store = partsStore();
    const rows: UploadPart[] = [];
    const two = patternBytes(7, MiB);
    const one = patternBytes(8, MiB / 2);
    // Chunk 2 first sets the chunk size; chunk 1 is smaller, so chunk 2 belongs at MiB / 2, not MiB.
    expect(placeOf((await putPart(store, 'odd', rows, '2', 2, undefined, two)).partKey)).toBe(MiB);
    expect(placeOf((await putPart(store, 'odd', rows, '1', 1, undefined, one)).partKey)).toBe(0);
    const body = store.assemble('odd', [...rows].sort((a, b) => a.seq - b.seq)) as AssembledFile;
    expect(await body.stageInPlace(Number.POSITIVE_INFINITY)).toBeUndefined();
    expect((await readAll(body)).equals(Buffer.concat([one, two]))).toBe(true);
    await store.removeSession('odd');
  });

  it('digests the same whether it followed the parts or reads them after a restart, and the file becomes the blob itself', async () => {
    const starts = [0, 1, 2, 3, 4, 5].map((i) => i * MiB);
    for (const restart of [false, true]) {
      // Other bytes each time: a blob already there would keep its own file.
      const content = patternBytes(restart ? 5 : 2, 5 * MiB + 321);
      const expected = { hash: contentHashOf(content), sha1: createHash('sha1').update(content).digest('hex'), md5: createHash('md5').update(content).digest('hex'), sizeBytes: content.length };
      const session = `digest-${restart}`;
      let store = partsStore();
      const rows: UploadPart[] = [];
      // Out of order: the hashing follows only once bytes 0.. are complete.
      for (const start of [...starts].reverse()) await putPart(store, session, rows, String(start), start, start, content.subarray(start, start + MiB));
      if (restart) store = partsStore();
      const staged = await stageAll(store, session, rows);
      expect({ hash: staged.hash, sha1: staged.sha1, md5: staged.md5, sizeBytes: staged.sizeBytes }).toEqual(expected);
      const data = path.join(tmp.dir, 'uploads', session, 'data');
      expect(statSync(staged.tempPath as string).ino).toBe(statSync(data).ino);
      await blobs.commit(staged);
      await blobs.release(staged.hash);
      expect(statSync(blobs.pathOf(staged.hash)).ino).toBe(statSync(data).ino);
      await store.removeSession(session);
    }
  });

  it('keeps the staged link from the sweep of old staged parts though the chunks were written long ago', async () => {
    const content = patternBytes(6, MiB + 5);
    const rows: UploadPart[] = [];
    const store = partsStore();
    for (const start of [0, MiB]) await putPart(store, 'late', rows, String(start), start, start, content.subarray(start, start + MiB));
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(path.join(tmp.dir, 'uploads', 'late', 'data'), hourAgo, hourAgo);
    const staged = await stageAll(store, 'late', rows);
    // The store's periodic sweep (store.blobs.stagingMaxAgeSec) runs between staging and commit.
    await blobs.sweepStaging(60_000);
    await blobs.commit(staged);
    await blobs.release(staged.hash);
    expect(contentHashOf(readFileSync(blobs.pathOf(staged.hash)))).toBe(staged.hash);
    await store.removeSession('late');
  });

  it('copies a file committed as a blob before writing into it again, so the blob never changes', async () => {
    const content = patternBytes(3, 2 * MiB);
    const rows: UploadPart[] = [];
    let store = partsStore();
    for (const start of [0, MiB]) await putPart(store, 'shared', rows, String(start), start, start, content.subarray(start, start + MiB));
    const staged = await stageAll(store, 'shared', rows);
    await blobs.commit(staged);
    await blobs.release(staged.hash);
    // A crash here: the session was not removed, and a client goes on writing into it.
    store = partsStore();
    const more = await putPart(store, 'shared', rows, String(2 * MiB), 2 * MiB, 2 * MiB, patternBytes(4, MiB));
    expect(placeOf(more.partKey)).toBe(2 * MiB);
    const blob = readFileSync(blobs.pathOf(staged.hash));
    expect(blob.length).toBe(content.length);
    expect(contentHashOf(blob)).toBe(staged.hash);
    expect(statSync(path.join(tmp.dir, 'uploads', 'shared', 'data')).nlink).toBe(1);
    await store.removeSession('shared');
    expect(contentHashOf(readFileSync(blobs.pathOf(staged.hash)))).toBe(staged.hash);
  });
  it('writes no part into the file while it is being made the blob (a chunk that passed the busy check just before the MOVE)', async () => {
    const content = patternBytes(5, 2 * MiB);
    const rows: UploadPart[] = [];
    const store = partsStore();
    for (const start of [0, MiB]) await putPart(store, 'racing', rows, String(start), start, start, content.subarray(start, start + MiB));
    const staging = (store.assemble('racing', [...rows]) as AssembledFile).stageInPlace(Number.POSITIVE_INFINITY);
    // The chunk's place is reserved once the assembly has started (its wait for writes under way is over).
    const late = patternBytes(6, MiB);
    const place = store.reserve('racing', { seq: 2 * MiB, startByte: 2 * MiB, sizeBytes: late.length }, rows);
    const body = new PassThrough();
    const writing = store.write('racing', place.partKey, body, late.length);
    const staged = await staging;
    if (!staged?.tempPath) throw new Error('not staged in place');
    body.end(late);
    await writing;
    place.release();
    // Before, the chunk went at its place into the file now linked as the blob: the blob grew by it.
    const blob = readFileSync(staged.tempPath);
    expect(blob.length).toBe(content.length);
    expect(contentHashOf(blob)).toBe(staged.hash);
    await blobs.discard(staged);
    await store.removeSession('racing');
  });
});
