/**
 * Where a bridge fixture keeps the parts of uploads not yet assembled (bridge/uploads/), for the
 * suites that check a refused or finished upload left none behind: the store's bucket when it
 * serves a store on S3 in-process (PostgreSQL + S3), else the folder `<dataDir>/uploads`.
 */
import { existsSync, readdirSync } from 'node:fs';
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
