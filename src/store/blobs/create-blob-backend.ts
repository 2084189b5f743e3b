/**
 * The blob backend the configuration names (`store.blobs.backend`): the local folder in the
 * data directory (the embedded default), or an S3 bucket. Both stage in `<dataDir>/tmp`.
 */
import path from 'node:path';
import { blobBackendOf, type Config } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import type { BlobBackend, BlobLedger } from './blob-backend.js';
import { LocalBlobBackend } from './local.js';

/** The S3 backend (and the AWS SDK, some 20 MiB of a process's memory) is loaded only when configured. */
export async function createBlobBackend(config: Config, ledger: BlobLedger, now: () => number, log: Logger): Promise<BlobBackend> {
  const { blobs } = config.store;
  if (blobBackendOf(config) === 'local') return new LocalBlobBackend(config.dataDir, ledger);
  const { s3 } = blobs;
  const { S3BlobBackend } = await import('./s3.js');
  return new S3BlobBackend({
    bucket: s3.bucket as string,
    endpoint: s3.endpoint,
    region: s3.region,
    prefix: s3.prefix,
    forcePathStyle: s3.forcePathStyle,
    partSizeBytes: s3.partSizeBytes,
    uploadIntentTtlMs: s3.uploadIntentTtlSec * 1000,
    connectTimeoutMs: s3.connectTimeoutMs,
    requestTimeoutMs: s3.requestTimeoutMs,
    maxAttempts: s3.maxAttempts,
    stagingDir: path.join(config.dataDir, 'tmp'),
    ledger,
    now,
    log,
  });
}

/** How often the collector runs while serving (ms); 0: only at start. */
export function gcIntervalMs(config: Config): number {
  const { blobs } = config.store;
  return (blobs.gcIntervalSec ?? (blobBackendOf(config) === 's3' ? 3600 : 0)) * 1000;
}
