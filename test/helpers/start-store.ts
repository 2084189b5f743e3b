/**
 * Starts a real store for a test suite: fresh SQLite file and blob folder in a temp dir,
 * listening on 127.0.0.1 with an OS-chosen port, a ManualClock the test can advance.
 */
import { ManualClock } from '../../src/common/clock.js';
import { loadConfig, type Config } from '../../src/common/config.js';
import { createLogger, type Logger } from '../../src/common/logger.js';
import { startStore, type RunningStore } from '../../src/store/server.js';
import { makeTmpDir } from './tmp-dir.js';

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
}

export async function startTestStore(options: TestStoreOptions = {}): Promise<TestStore> {
  const tmp = options.dataDir ? undefined : makeTmpDir();
  const dataDir = options.dataDir ?? (tmp as { dir: string }).dir;
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
      ...options.flags,
    },
  });
  const clock = new ManualClock();
  const running = await startStore({ config, clock, logger: options.logger ?? createLogger(config.logLevel), checkStorageUse: true });
  return {
    ...running,
    clock,
    dataDir,
    config,
    adminPassword: ADMIN_PASSWORD,
    close: async () => {
      await running.close();
      tmp?.remove();
    },
  };
}
