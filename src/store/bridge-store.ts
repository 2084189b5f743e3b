/**
 * What the in-process bridge (`npm start`) gets from the embedded store: the store as a
 * StoreClient, the store's database (locks and dead properties: storage/dav-state.ts), and over
 * PostgreSQL a Basic-login limiter counted in that database, so every instance counts together
 * (a bridge alone, `--only bridge`, keeps its own in memory), and its change feed over
 * PostgreSQL (other instances' writes reach the bridge's caches), and with the S3 blob backend
 * the PartStore of chunked uploads in its bucket (on the local backend, one that writes parts
 * where the assembled file lies: blobs/staged-parts.ts). run.ts and the test harness both
 * build the bridge's store from here.
 */
import type { ChangeFeed } from '../common/change-feed.js';
import type { LoginLimiterOptions } from '../common/login-limiter.js';
import type { StoreClient } from '../store-client/contract.js';
import type { PartStore } from '../contracts/upload-sessions.js';
import path from 'node:path';
import { LocalBlobBackend } from './blobs/local.js';
// A type only: the AWS SDK (~35 MiB of RSS) loads when an S3 backend is configured (create-blob-backend.ts), never for the local one.
import type { S3BlobBackend } from './blobs/s3.js';
import { StagedPartStore } from './blobs/staged-parts.js';
import type { StoreContext } from './context.js';
import { createLocalClient } from './local-client.js';
import { sharedLoginLimiter } from './storage/limits.js';
import type { Storage } from './storage/sql.js';
import { bridgeStorage, sqliteFolderFeed } from './storage/dialects/sqlite-changes.js';

export interface InProcessStore {
  client: StoreClient;
  name: string;
  storage: Storage;
  limiter: (options: LoginLimiterOptions) => ReturnType<typeof sharedLoginLimiter>;
  /** Over PostgreSQL: what other instances changed (storage/dialects/postgres-changes.ts); over SQLite, the folders this process changed (storage/dialects/sqlite-changes.ts). */
  changes?: ChangeFeed;
  /** Chunked uploads' parts: in the S3 bucket (every instance reaches them), or in the local backend's `uploads/` at their place in the assembled file. */
  parts?: PartStore;
}

export function inProcessStore(ctx: StoreContext, name = 'embedded, in-process'): InProcessStore {
  const { storage } = ctx;
  // SQLite: the folders this process changes, its REST API's writes (the web app's) apart from the bridge's own.
  const changes = storage.changes ?? sqliteFolderFeed(storage.sql);
  return {
    // The bridge waits for the change feed at the start of every request (bridge/server.ts).
    client: createLocalClient({ ...ctx, storage: bridgeStorage(storage) }, { behindFeedBarrier: true }),
    name,
    storage,
    limiter: (options) => sharedLoginLimiter(storage, { ...options, scope: 'bridge' }),
    ...(changes ? { changes } : {}),
    ...(ctx.blobs.kind === 's3' ? { parts: (ctx.blobs as S3BlobBackend).partStore(ctx.config.bridge.uploadExpirySec * 1000) } : {}),
    // On the local backend, parts are written where the assembled file will lie (no second copy).
    ...(ctx.blobs instanceof LocalBlobBackend ? { parts: new StagedPartStore(path.join(ctx.blobs.root, 'uploads'), ctx.blobs) } : {}),
  };
}
