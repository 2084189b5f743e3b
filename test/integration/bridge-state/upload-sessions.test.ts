/**
 * The upload-session contract suite (test/contract/upload-session-repository.ts) on every place
 * the bridge keeps its upload sessions: the store's SQLite database (every migration, as `npm
 * start` opens it), the bridge's own state file (`--only bridge`), and PostgreSQL, where two
 * instances (two pools over one database) race for the scope's last bytes. PostgreSQL is a
 * database of the run's throwaway cluster: skipped with a warning without it, failed when CI=true.
 */
import path from 'node:path';
import { afterAll } from 'vitest';
import { openBridgeStateFile } from '../../../src/store/storage/dav-state.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { migrate } from '../../../src/store/storage/migrations.js';
import type { Storage } from '../../../src/store/storage/sql.js';
import { SqlUploadSessionRepository } from '../../../src/store/storage/upload-sessions.js';
import { describeUploadSessionRepository } from '../../contract/upload-session-repository.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

describeUploadSessionRepository('SQLite (the store database)', () => {
  const tmp = makeTmpDir('driveway-uploads-');
  let storage: SqliteStorage | undefined;
  return {
    async open() {
      storage = new SqliteStorage(openDatabase(path.join(tmp.dir, 'driveway.sqlite')));
      return new SqlUploadSessionRepository(storage.sql);
    },
    async close() {
      await storage?.close();
      tmp.remove();
    },
  };
});

describeUploadSessionRepository('a bridge.sqlite of its own', () => {
  const tmp = makeTmpDir('driveway-uploads-');
  let storage: SqliteStorage | undefined;
  return {
    async open() {
      storage = openBridgeStateFile(path.join(tmp.dir, 'bridge.sqlite'));
      return new SqlUploadSessionRepository(storage.sql);
    },
    async close() {
      await storage?.close();
      tmp.remove();
    },
  };
});

const postgres = requirePostgres();

postgres.describe('on PostgreSQL', () => {
  const opened: Storage[] = [];
  let url: string | undefined;
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  describeUploadSessionRepository('PostgreSQL, two instances over one database', () => {
    const mine: Storage[] = [];
    const connect = (): PostgresStorage => {
      const storage = new PostgresStorage(url as string, { maxConnections: 8 });
      mine.push(storage);
      opened.push(storage);
      return storage;
    };
    return {
      async open() {
        url ??= await freshPostgresDatabase();
        const storage = connect();
        await migrate(storage, 'the test database');
        await storage.sql.exec('TRUNCATE dav_uploads, dav_upload_parts');
        return new SqlUploadSessionRepository(storage.sql);
      },
      async another() {
        return new SqlUploadSessionRepository(connect().sql);
      },
      async close() {
        for (const storage of mine.splice(0)) {
          opened.splice(opened.indexOf(storage), 1);
          await storage.close();
        }
      },
    };
  });
});
