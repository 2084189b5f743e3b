/**
 * Starts a real store for a test suite: fresh SQLite file and blob folder in a temp dir,
 * listening on 127.0.0.1 with an OS-chosen port, a ManualClock the test can advance.
 *
 * `storage: 'postgres'` (or env DRIVEWAY_TEST_STORAGE=postgres, what the integration-pg project
 * sets) gives it instead a fresh database of the run's PostgreSQL cluster and a fresh bucket of
 * this worker's s3rver as its blob backend; the data dir then holds only the JWT secret. A
 * restart on the same data dir gets the same database and bucket again.
 */
import { ManualClock } from '../../src/common/clock.js';
import { loadConfig, type Config } from '../../src/common/config.js';
import { createLogger, type Logger } from '../../src/common/logger.js';
import type { Metrics } from '../../src/common/metrics.js';
import { startStore, type RunningStore } from '../../src/store/server.js';
import { makeTmpDir } from './tmp-dir.js';
import { freshPostgresDatabase } from './postgres.js';
import { freshS3Bucket, S3RVER_CREDENTIALS } from './s3-server.js';

export const ADMIN_PASSWORD = 'Admin-Passw0rd';

export interface TestStore extends RunningStore {
  clock: ManualClock;
  dataDir: string;
  config: Config;
  adminPassword: string;
}

export interface TestStoreOptions {
  edition?: '3.0' | '1.0';
  /** Reuse a data dir (restart tests); it is then not removed on close. */
  dataDir?: string;
  flags?: Record<string, unknown>;
  /** Logger for the store (e.g. one writing to a captured stream); default: level DRIVEWAY_TEST_LOG or silent. */
  logger?: Logger;
  /** The database and blob backend: SQLite + the data dir (default), or PostgreSQL + S3. Default: DRIVEWAY_TEST_STORAGE, else sqlite. */
  storage?: TestStorageKind;
  /** Count the store's requests there (metrics.enabled); the bridge fixture gives its bridge the same. */
  metrics?: Metrics;
}

export type TestStorageKind = 'sqlite' | 'postgres';

/** The storage the run asks for (DRIVEWAY_TEST_STORAGE): `postgres` or the default `sqlite`. */
export function testStorageKind(): TestStorageKind {
  const kind = process.env.DRIVEWAY_TEST_STORAGE ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`DRIVEWAY_TEST_STORAGE must be sqlite or postgres, not ${kind}`);
  return kind;
}

/** Database and bucket per data dir, so that a restart on the same data dir finds its data. */
const postgresTargets = new Map<string, Promise<Record<string, unknown>>>();

/** Config flags for a fresh PostgreSQL database and S3 bucket (the same ones again for a known data dir). */
export function postgresStorageFlags(dataDir: string): Promise<Record<string, unknown>> {
  let flags = postgresTargets.get(dataDir);
  if (!flags) {
    flags = (async () => {
      const [url, s3] = await Promise.all([freshPostgresDatabase(), freshS3Bucket()]);
      return {
        'database.url': url,
        'store.blobs.backend': 's3',
        'store.blobs.s3.bucket': s3.bucket,
        'store.blobs.s3.endpoint': s3.endpoint,
        'store.blobs.s3.forcePathStyle': true,
      };
    })();
    postgresTargets.set(dataDir, flags);
  }
  // The AWS SDK's usual source of credentials, as an operator would set them (s3rver's account).
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  return flags;
}

export async function startTestStore(options: TestStoreOptions = {}): Promise<TestStore> {
  const tmp = options.dataDir ? undefined : makeTmpDir();
  const dataDir = options.dataDir ?? (tmp as { dir: string }).dir;
  const storageFlags = (options.storage ?? testStorageKind()) === 'postgres' ? await postgresStorageFlags(dataDir) : {};
  const config = loadConfig({
    env: {},
    flags: {
      dataDir,
      host: '127.0.0.1',
      logLevel: process.env.DRIVEWAY_TEST_LOG ?? 'silent',
      'store.port': 0,
      'store.adminPassword': ADMIN_PASSWORD,
      'store.scryptCost': 1024,
      'store.edition': options.edition ?? '3.0',
      ...storageFlags,
      ...options.flags,
    },
  });
  const clock = new ManualClock();
  const running = await startStore({ config, clock, logger: options.logger ?? createLogger(config.logLevel), checkStorageUse: true, ...(options.metrics ? { metrics: options.metrics } : {}) });
  return {
    ...running,
    clock,
    dataDir,
    config,
    adminPassword: ADMIN_PASSWORD,
    close: async () => {
      await running.close();
      tmp?.remove();
      if (tmp) postgresTargets.delete(dataDir);
    },
  };
}
