/**
 * LocalBlobBackend (the local blob backend) on a real temp folder: content addressing with BLAKE3, identical bytes stored once,
 * the size limit enforced while streaming, a fan-out folder removed behind the store's back
 * (it remembers which exist) made again rather than failing the upload, and small blobs kept in
 * memory for their database row (no file at all) while a larger one spills to a file whole;
 * bytes held whole (a Buffer) staged the same way.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalBlobBackend } from '../../../src/store/blobs/local.js';
import { BlobTooLargeError, contentHashOf, INLINE_MAX_BYTES } from '../../../src/store/blobs/staging.js';
import { stagedParts } from '../../helpers/blobs.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

/** The clients' checksums staging computes beside the address. */
const sums = (bytes: string | Buffer) => ({ sha1: createHash('sha1').update(bytes).digest('hex'), md5: createHash('md5').update(bytes).digest('hex') });

let tmp: ReturnType<typeof makeTmpDir>;
let blobs: LocalBlobBackend;

beforeEach(async () => {
  tmp = makeTmpDir('driveway-blobs-');
  blobs = new LocalBlobBackend(tmp.dir);
  await blobs.init();
});
afterEach(async () => {
  await blobs.close();
  tmp.remove();
});

/** Stores `content` as a file (inline limit 0), the path these first cases are about. */
async function store(content: string): Promise<string> {
  const staged = await blobs.stage(Readable.from([Buffer.from(content)]), Number.POSITIVE_INFINITY, undefined, 0);
  await blobs.commit(staged);
  await blobs.release(staged.hash);
  return staged.hash;
}

describe('LocalBlobBackend', () => {
  it('names a blob by the BLAKE3 of its bytes and fans it out by its first four hex digits', async () => {
    const hash = await store('hello');
    // BLAKE3("hello") as an independent implementation (hash-wasm) computes it.
    expect(hash).toBe('ea8f163db38682925e4491c5e58d4bb3506ef8c14eb78a86e908c5624a67200f');
    expect(contentHashOf('hello')).toBe(hash);
    expect(blobs.pathOf(hash)).toBe(path.join(tmp.dir, 'blobs', 'ea', '8f', hash));
    expect(readFileSync(blobs.pathOf(hash), 'utf8')).toBe('hello');
    expect(stagedParts(blobs.tmpDir)).toEqual([]);
  });

  it('keeps one file for identical bytes and leaves no temp file behind', async () => {
    const first = await store('same bytes');
    const second = await store('same bytes');
    expect(second).toBe(first);
    expect(readdirSync(path.dirname(blobs.pathOf(first)))).toEqual([first]);
    expect(stagedParts(blobs.tmpDir)).toEqual([]);
  });

  it('refuses a blob over the limit while streaming and removes its temp file', async () => {
    await expect(blobs.stage(Readable.from([Buffer.alloc(10)]), 9)).rejects.toBeInstanceOf(BlobTooLargeError);
    await expect(blobs.stage(Readable.from([Buffer.alloc(INLINE_MAX_BYTES), Buffer.alloc(INLINE_MAX_BYTES)]), INLINE_MAX_BYTES + 5)).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(stagedParts(blobs.tmpDir)).toEqual([]);
  });

  it('keeps a small blob in memory for its row: the bytes, their hash, and no file anywhere', async () => {
    const parts = [Buffer.from('small '), Buffer.from('file')];
    const staged = await blobs.stage(Readable.from(parts));
    expect(staged).toEqual({ hash: contentHashOf('small file'), ...sums('small file'), sizeBytes: 10, inline: Buffer.from('small file') });
    await blobs.commit(staged);
    await blobs.release(staged.hash);
    expect(existsSync(blobs.pathOf(staged.hash))).toBe(false);
    expect(stagedParts(blobs.tmpDir)).toEqual([]);
    // The backend holds no bytes of it: they live in the row.
    await expect(blobs.get(staged.hash)).rejects.toThrow(/missing/);
  });

  it('spills a blob past the inline limit to a file, the bytes read before the limit first', async () => {
    const parts = Array.from({ length: 5 }, (_, i) => Buffer.alloc(30_000, i + 1));
    const whole = Buffer.concat(parts);
    const staged = await blobs.stage(Readable.from(parts));
    expect(staged.inline).toBeUndefined();
    // SHA-1 and MD5 of a spilled body come from the worker thread, the bytes before the limit included.
    expect(staged).toMatchObject({ hash: contentHashOf(whole), ...sums(whole), sizeBytes: whole.length });
    await blobs.commit(staged);
    await blobs.release(staged.hash);
    expect(readFileSync(blobs.pathOf(staged.hash)).equals(whole)).toBe(true);
    expect(stagedParts(blobs.tmpDir)).toEqual([]);
  });

  it('stages bytes held whole as it stages a stream of them: inline when small, a file past the limit, refused past maxBytes', async () => {
    const small = Buffer.from('whole small file');
    expect(await blobs.stage(small)).toEqual({ hash: contentHashOf(small), ...sums(small), sizeBytes: small.length, inline: small });

    const large = Buffer.alloc(INLINE_MAX_BYTES + 1, 9);
    const streamed = await blobs.stage(Readable.from([large]));
    await blobs.discard(streamed);
    const staged = await blobs.stage(large);
    expect(streamed).toMatchObject(sums(large));
    expect(staged).toMatchObject({ hash: streamed.hash, ...sums(large), sizeBytes: large.length });
    expect(staged.inline).toBeUndefined();
    expect(readFileSync(staged.tempPath as string).equals(large)).toBe(true);
    await blobs.commit(staged);
    await blobs.release(staged.hash);
    expect(readFileSync(blobs.pathOf(staged.hash)).equals(large)).toBe(true);

    await expect(blobs.stage(Buffer.alloc(11), 10)).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(stagedParts(blobs.tmpDir)).toEqual([]);
  });

  it('makes a fan-out folder again when it was removed while the store ran', async () => {
    const hash = await store('first');
    rmSync(path.join(tmp.dir, 'blobs', hash.slice(0, 2)), { recursive: true });
    expect(await store('first')).toBe(hash);
    expect(existsSync(blobs.pathOf(hash))).toBe(true);
  });
});
