/**
 * Where a bridge fixture keeps the parts of uploads not yet assembled (bridge/uploads/), for the
 * suites that check a refused or finished upload left none behind, or nothing past the quota:
 * the store's bucket when it serves a store on S3 in-process (PostgreSQL + S3), else the folder
 * `<dataDir>/uploads`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3BlobBackend } from '../../src/store/blobs/s3.js';
import { TEST_TRANSPORT, type BridgeFixture } from './start-bridge.js';

/** The sessions holding parts right now, sorted. */
export async function partSessions(f: BridgeFixture): Promise<string[]> {
  const blobs = f.store.ctx.blobs;
  if (TEST_TRANSPORT === 'local' && blobs instanceof S3BlobBackend) {
    const prefix = `${blobs.prefix}uploads/`;
    const listed = await blobs.client.send(new ListObjectsV2Command({ Bucket: f.store.config.store.blobs.s3.bucket, Prefix: prefix }));
    return [...new Set((listed.Contents ?? []).map((o) => (o.Key ?? '').slice(prefix.length).split('/')[0] as string))].sort();
  }
  const dir = path.join(f.store.config.dataDir, 'uploads');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/**
 * What the parts of the sessions `keys` weigh: the bytes their files (or bucket objects) take
 * (`bytes`: a file's blocks, a sparse file's included) and the largest apparent size of one
 * (`largest`: a sparse file's length, which is what a 12 TB "file" shows in `ls`).
 */
export async function partFootprint(f: BridgeFixture, keys: readonly string[]): Promise<{ bytes: number; largest: number }> {
  const blobs = f.store.ctx.blobs;
  if (TEST_TRANSPORT === 'local' && blobs instanceof S3BlobBackend) {
    const sizes: number[] = [];
    for (const key of keys) {
      const listed = await blobs.client.send(new ListObjectsV2Command({ Bucket: f.store.config.store.blobs.s3.bucket, Prefix: `${blobs.prefix}uploads/${key}/` }));
      sizes.push(...(listed.Contents ?? []).map((o) => o.Size ?? 0));
    }
    return { bytes: sizes.reduce((a, b) => a + b, 0), largest: Math.max(0, ...sizes) };
  }
  const footprint = { bytes: 0, largest: 0 };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else {
        const stat = statSync(file);
        footprint.bytes += stat.blocks * 512;
        footprint.largest = Math.max(footprint.largest, stat.size);
      }
    }
  };
  for (const key of keys) {
    const dir = path.join(f.store.config.dataDir, 'uploads', key);
    if (existsSync(dir)) walk(dir);
  }
  return footprint;
}
