/** What every store route receives: the database, blobs, configuration, clock, logger and mailer. */
import type { Config } from '../common/config.js';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { BlobStore } from './blobs/blob-store.js';
import type { Db } from './db/database.js';
import type { SessionKeys } from './sessions.js';
import type { Mailer } from './ops/mail.js';

export interface StoreContext {
  db: Db;
  blobs: BlobStore;
  config: Config;
  clock: Clock;
  log: Logger;
  keys: SessionKeys;
  /** Outgoing email; undefined when `mail.host` is not configured. */
  mailer: Mailer | undefined;
}
