/**
 * The rename-away memos (contracts/renamed-away.ts) where the bridge keeps them: the store's SQLite
 * database (every migration, as `npm start` opens it), the bridge's own state file (`--only
 * bridge`, upgraded from the version before them), and PostgreSQL, where two instances (two
 * pools) race for one memo and exactly one gets it. PostgreSQL is a database of the run's
 * throwaway cluster: skipped with a warning without it, failed when CI=true.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RenameAwayMemo, RenameAwayRepository } from '../../../src/contracts/renamed-away.js';
import { openBridgeStateFile, STATE_FILE_VERSION } from '../../../src/store/storage/dav-state.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { migrate } from '../../../src/store/storage/migrations.js';
import { SqlRenameAwayRepository } from '../../../src/store/storage/renamed-away.js';
import type { Storage } from '../../../src/store/storage/sql.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const T0 = 1_800_000_000_000;
const away = (name: string, atMs: number, nodeId = `node-${name}`): RenameAwayMemo => ({
  kind: 'away',
  userId: 'alice',
  folder: 'folder-1',
  name,
  nodeId,
  otherName: '~WRL0001.tmp',
  revision: 3,
  atMs,
});

function describeMemos(where: string, open: () => Promise<{ repository: RenameAwayRepository; close(): Promise<void> }>): void {
  describe(`rename-away memos in ${where}`, () => {
    it('gives a memo back once, to its user, folder, name and kind only', async () => {
      const { repository, close } = await open();
      try {
        await repository.remember(away('a.docx', T0), T0 - 60_000);
        expect(await repository.take('away', 'bob', 'folder-1', 'a.docx', T0 - 60_000)).toBeUndefined();
        expect(await repository.take('away', 'alice', 'folder-2', 'a.docx', T0 - 60_000)).toBeUndefined();
        expect(await repository.take('restored', 'alice', 'folder-1', 'a.docx', T0 - 60_000)).toBeUndefined();
        expect(await repository.take('away', 'alice', 'folder-1', 'a.docx', T0 - 60_000)).toEqual(away('a.docx', T0));
        expect(await repository.take('away', 'alice', 'folder-1', 'a.docx', T0 - 60_000)).toBeUndefined();
      } finally {
        await close();
      }
    });

    it('a later memo for the name replaces the earlier; one made before `since` is not given; stale ones are swept', async () => {
      const { repository, close } = await open();
      try {
        await repository.remember(away('b.docx', T0, 'first'), T0 - 60_000);
        await repository.remember(away('b.docx', T0 + 1, 'second'), T0 - 60_000);
        expect((await repository.take('away', 'alice', 'folder-1', 'b.docx', T0))?.nodeId).toBe('second');
        await repository.remember(away('c.docx', T0), T0 - 60_000);
        expect(await repository.take('away', 'alice', 'folder-1', 'c.docx', T0 + 1)).toBeUndefined();
        await repository.remember(away('d.docx', T0), T0 - 60_000);
        // Remembering a minute later sweeps d.docx's memo: not even an old `since` finds it.
        await repository.remember(away('e.docx', T0 + 61_000), T0 + 1_000);
        expect(await repository.take('away', 'alice', 'folder-1', 'd.docx', 0)).toBeUndefined();
      } finally {
        await close();
      }
    });
  });
}

describeMemos('the store’s SQLite database', async () => {
  const tmp = makeTmpDir('driveway-renamed-away-');
  const storage = new SqliteStorage(openDatabase(path.join(tmp.dir, 'driveway.sqlite')));
  return {
    repository: new SqlRenameAwayRepository(storage.sql),
    async close() {
      await storage.close();
      tmp.remove();
    },
  };
});

describeMemos('the bridge’s state file, upgraded from version 3', async () => {
  const tmp = makeTmpDir('driveway-renamed-away-');
  const file = path.join(tmp.dir, 'bridge.sqlite');
  // Version 3: migration 012's tables only, as the release before the memos left it.
  const old = openBridgeStateFile(file);
  await old.sql.exec('DROP TABLE dav_renamed_away');
  await old.sql.exec('DROP TABLE dav_upload_parts');
  await old.sql.exec('DROP TABLE dav_uploads');
  await old.sql.exec('PRAGMA user_version = 3');
  await old.close();
  const state = openBridgeStateFile(file);
  expect(await state.sql.get<{ user_version: number }>('PRAGMA user_version')).toEqual({ user_version: STATE_FILE_VERSION });
  return {
    repository: new SqlRenameAwayRepository(state.sql),
    async close() {
      await state.close();
      tmp.remove();
    },
  };
});

const postgres = requirePostgres();

postgres.describe('on PostgreSQL', () => {
  const storages: Storage[] = [];
  let url: string | undefined;
  const pool = async (): Promise<PostgresStorage> => {
    url ??= await freshPostgresDatabase();
    const storage = new PostgresStorage(url, { maxConnections: 8 });
    storages.push(storage);
    await migrate(storage, 'the test database');
    await storage.sql.exec('TRUNCATE dav_renamed_away');
    return storage;
  };
  afterAll(async () => {
    await Promise.all(storages.map((s) => s.close()));
  });

  describeMemos('PostgreSQL', async () => ({ repository: new SqlRenameAwayRepository((await pool()).sql), close: async () => undefined }));

  it('two instances taking one memo at once: exactly one gets it, again and again', async () => {
    const instances = [new SqlRenameAwayRepository((await pool()).sql), new SqlRenameAwayRepository((await pool()).sql)];
    for (let round = 0; round < 20; round++) {
      const name = `race-${round}.docx`;
      await instances[round % 2]?.remember(away(name, T0), T0 - 60_000);
      const taken = await Promise.all(instances.flatMap((r) => [r.take('away', 'alice', 'folder-1', name, T0), r.take('away', 'alice', 'folder-1', name, T0)]));
      expect(taken.filter((m) => m !== undefined), `round ${round}`).toHaveLength(1);
    }
  });
});
