/**
 * store.blobs: the local folder unless a bucket is configured, DRIVEWAY_S3_* mapped to their
 * keys, and an S3 backend without a bucket refused naming the key.
 */
import { describe, expect, it } from 'vitest';
import { blobBackendOf, loadConfig } from '../../../src/common/config.js';

describe('store.blobs configuration', () => {
  it('defaults to the local folder', () => {
    const config = loadConfig({ env: {} });
    expect(blobBackendOf(config)).toBe('local');
    expect(config.store.blobs.gcGraceSec).toBe(3600);
  });

  it('reads the S3 settings from DRIVEWAY_S3_* and picks S3 when a bucket is set', () => {
    const config = loadConfig({
      env: {
        DRIVEWAY_S3_BUCKET: 'drive-blobs',
        DRIVEWAY_S3_ENDPOINT: 'http://127.0.0.1:9000',
        DRIVEWAY_S3_REGION: 'eu-central-1',
        DRIVEWAY_S3_PREFIX: 'team-a/',
        DRIVEWAY_S3_FORCE_PATH_STYLE: 'true',
      },
    });
    expect(blobBackendOf(config)).toBe('s3');
    expect(config.store.blobs.s3).toMatchObject({ bucket: 'drive-blobs', endpoint: 'http://127.0.0.1:9000', region: 'eu-central-1', prefix: 'team-a/', forcePathStyle: true, partSizeBytes: 16 * 1024 * 1024 });
  });

  it('refuses the S3 backend without a bucket, naming the key', () => {
    expect(() => loadConfig({ env: { DRIVEWAY_BLOB_BACKEND: 's3' } })).toThrow(/store\.blobs\.s3\.bucket/);
  });

  it('refuses a part size below S3\'s 5 MiB minimum', () => {
    expect(() => loadConfig({ env: {}, flags: { 'store.blobs.s3.partSizeBytes': 1024 } })).toThrow(/partSizeBytes/);
  });
});
