/** What every store route receives: the database, blobs, configuration, clock and logger. */
import type { Config } from '../common/config.js';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { BlobStore } from './blobs/blob-store.js';
import type { Db } from './db/database.js';
import type { SessionKeys } from './sessions.js';

export interface StoreContext {
  db: Db;
  blobs: BlobStore;
  config: Config;
  clock: Clock;
  log: Logger;
  keys: SessionKeys;
}
