/**
 * The PartStore contract (test/contract/part-store.ts) over each store of upload parts: a folder
 * (contracts/local-part-store.ts: a bridge in front of a foreign store), the assembled file
 * beside a local blob backend (store/blobs/staged-parts.ts) and the bucket of an S3 blob backend
 * (store/blobs/s3-parts.ts, s3rver on loopback, its ledger in a SQLite database).
 */
import path from 'node:path';
import { LocalPartStore } from '../../../src/contracts/local-part-store.js';
import { createLogger } from '../../../src/common/logger.js';
import { LocalBlobBackend } from '../../../src/store/blobs/local.js';
import { S3BlobBackend } from '../../../src/store/blobs/s3.js';
import { StagedPartStore } from '../../../src/store/blobs/staged-parts.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { storageBlobLedger } from '../../../src/store/storage/revisions.js';
import { describePartStore } from '../../contract/part-store.js';
import { freshS3Bucket, S3RVER_CREDENTIALS } from '../../helpers/s3-server.js';
import { MiB } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

describePartStore('a folder (local-part-store.ts)', () => {
  const tmp = makeTmpDir('driveway-parts-');
  return { open: async () => new LocalPartStore(path.join(tmp.dir, 'uploads')), close: async () => tmp.remove() };
});

describePartStore('the assembled file beside the local blob backend (staged-parts.ts)', () => {
  const tmp = makeTmpDir('driveway-parts-');
  let blobs: LocalBlobBackend | undefined;
  return {
    async open() {
      blobs = new LocalBlobBackend(path.join(tmp.dir, 'blobs'));
      await blobs.init();
      return new StagedPartStore(path.join(tmp.dir, 'uploads'), blobs);
    },
    async close() {
      await blobs?.close();
      tmp.remove();
    },
  };
});

describePartStore('the S3 blob backend’s bucket (s3-parts.ts)', () => {
  const tmp = makeTmpDir('driveway-parts-');
  let storage: SqliteStorage | undefined;
  return {
    async open() {
      const { endpoint, bucket } = await freshS3Bucket();
      storage = new SqliteStorage(openDatabase(path.join(tmp.dir, 'ledger.sqlite')));
      const backend = new S3BlobBackend({
        bucket,
        endpoint,
        region: 'us-east-1',
        prefix: 'parts/',
        forcePathStyle: true,
        partSizeBytes: 5 * MiB,
        uploadIntentTtlMs: 3_600_000,
        stagingDir: path.join(tmp.dir, 'staging'),
        ledger: storageBlobLedger(storage.sql, async () => undefined),
        now: Date.now,
        log: createLogger('silent'),
        credentials: S3RVER_CREDENTIALS,
      });
      return backend.partStore(3_600_000);
    },
    // s3rver/lib/stores/filesystem.js putObject writes the object's file as the body arrives.
    keepsCutWrites: 's3rver keeps what an aborted PutObject sent; S3 stores an object only once its body is whole',
    async close() {
      await storage?.close();
      tmp.remove();
    },
  };
});
