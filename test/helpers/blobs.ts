/**
 * The blob backend of a test store, seen from a test: the local folder's paths (tests that look
 * at files on disk), and a blob's bytes wherever they are kept (row, file or bucket).
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { vi } from 'vitest';
import { LocalBlobBackend } from '../../src/store/blobs/local.js';
import type { StoreContext } from '../../src/store/context.js';
import { inlineBlob } from '../../src/store/storage/blob-refs.js';
import { filesIn } from './stream-helpers.js';

/** The store's local backend; throws when the store runs another one. */
export function localBlobs(store: { ctx: StoreContext }): LocalBlobBackend {
  const { blobs } = store.ctx;
  if (!(blobs instanceof LocalBlobBackend)) throw new Error(`the store runs the ${blobs.kind} blob backend, not the local one`);
  return blobs;
}

/**
 * The folder a store stages uploads in, whatever its backend: the local backend's `tmp` under its
 * blob folder, S3's `<dataDir>/tmp` (as create-blob-backend.ts configures it).
 */
export function stagingDir(store: { ctx: StoreContext; dataDir: string }): string {
  const { blobs } = store.ctx;
  return blobs instanceof LocalBlobBackend ? blobs.tmpDir : path.join(store.dataDir, 'tmp');
}

/**
 * The staged parts (`*.part`) in a staging folder: what an upload must not leave behind. The
 * folder also holds its owners' lock files (`*.owner`, blobs/staging.ts), which are not parts.
 */
export function stagedParts(dir: string): string[] {
  return filesIn(dir).filter((name) => name.endsWith('.part'));
}

/** Waits (up to 15 s) until an upload's staged part in `dir` has at least `minBytes`; its path. */
export async function partFileGrowing(dir: string, minBytes: number): Promise<string> {
  return vi.waitFor(
    () => {
      const part = stagedParts(dir)[0];
      if (!part) throw new Error('no staged part yet');
      const full = path.join(dir, part);
      if (statSync(full).size < minBytes) throw new Error('staged part still small');
      return full;
    },
    { timeout: 15_000, interval: 20 },
  );
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** The bytes of a blob (or of `range` of it): its row's for a small one, else the backend's. */
export async function blobBytes(store: { ctx: StoreContext }, hash: string, range?: { start: number; end: number }): Promise<Buffer> {
  const inline = (await inlineBlob(store.ctx.storage.sql, hash));
  if (inline) return range ? inline.subarray(range.start, range.end + 1) : inline;
  const reader = await store.ctx.blobs.get(hash, range);
  return readAll(reader.kind === 'file' ? reader.stream() : reader.body);
}
