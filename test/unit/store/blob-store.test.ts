/**
 * BlobStore on a real temp folder: content addressing with BLAKE3, identical bytes stored once,
 * the size limit enforced while streaming, and a fan-out folder removed behind the store's back
 * (it remembers which exist) made again rather than failing the upload.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobStore, BlobTooLargeError, contentHashOf } from '../../../src/store/blobs/blob-store.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

let tmp: ReturnType<typeof makeTmpDir>;
let blobs: BlobStore;

beforeEach(async () => {
  tmp = makeTmpDir('driveway-blobs-');
  blobs = new BlobStore(tmp.dir);
  await blobs.init();
});
afterEach(() => tmp.remove());

async function store(content: string): Promise<string> {
  const staged = await blobs.stage(Readable.from([Buffer.from(content)]));
  await blobs.commit(staged);
  blobs.release(staged.hash);
  return staged.hash;
}

describe('BlobStore', () => {
  it('names a blob by the BLAKE3 of its bytes and fans it out by its first four hex digits', async () => {
    const hash = await store('hello');
    // BLAKE3("hello") as an independent implementation (hash-wasm) computes it.
    expect(hash).toBe('ea8f163db38682925e4491c5e58d4bb3506ef8c14eb78a86e908c5624a67200f');
    expect(contentHashOf('hello')).toBe(hash);
    expect(blobs.pathOf(hash)).toBe(path.join(tmp.dir, 'blobs', 'ea', '8f', hash));
    expect(readFileSync(blobs.pathOf(hash), 'utf8')).toBe('hello');
    expect(readdirSync(blobs.tmpDir)).toEqual([]);
  });

  it('keeps one file for identical bytes and leaves no temp file behind', async () => {
    const first = await store('same bytes');
    const second = await store('same bytes');
    expect(second).toBe(first);
    expect(readdirSync(path.dirname(blobs.pathOf(first)))).toEqual([first]);
    expect(readdirSync(blobs.tmpDir)).toEqual([]);
  });

  it('refuses a blob over the limit while streaming and removes its temp file', async () => {
    await expect(blobs.stage(Readable.from([Buffer.alloc(10)]), 9)).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(readdirSync(blobs.tmpDir)).toEqual([]);
  });

  it('makes a fan-out folder again when it was removed while the store ran', async () => {
    const hash = await store('first');
    rmSync(path.join(tmp.dir, 'blobs', hash.slice(0, 2)), { recursive: true });
    expect(await store('first')).toBe(hash);
    expect(existsSync(blobs.pathOf(hash))).toBe(true);
  });
});
