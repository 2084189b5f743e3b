/**
 * The rename-away memos (contracts/renamed-away.ts) where the bridge keeps them, held to the
 * contract suite (test/contract/rename-away-repository.ts): the store's SQLite database (every
 * migration, as `npm start` opens it), the bridge's own state file (`--only bridge`, upgraded from
 * the version before them), and PostgreSQL, where two instances (two pools) race for one memo and
 * exactly one gets it. PostgreSQL is a database of the run's
 * throwaway cluster: skipped with a warning without it, failed when CI=true.
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { openBridgeStateFile, STATE_FILE_VERSION } from '../../../src/store/storage/dav-state.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { SqlRenameAwayRepository } from '../../../src/store/storage/renamed-away.js';
import { away, describeRenameAwayRepository, T0 } from '../../contract/rename-away-repository.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { migratedPostgresPools } from '../../helpers/postgres-pools.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

describeRenameAwayRepository('the store’s SQLite database', async () => {
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

describeRenameAwayRepository('the bridge’s state file, upgraded from version 3', async () => {
  const tmp = makeTmpDir('driveway-renamed-away-');
  const file = path.join(tmp.dir, 'bridge.sqlite');
  // Version 3: migration 012's tables only, as the release before the memos left it.
  const old = openBridgeStateFile(file);
  await old.sql.exec('DROP TABLE dav_renamed_away');
  await old.sql.exec('DROP TABLE dav_upload_parts');
  await old.sql.exec('DROP TABLE dav_uploads');
  await old.sql.exec('DROP TABLE dav_file_ids');
  await old.sql.exec('DROP TABLE dav_instance');
  await old.sql.exec('DROP TABLE dav_login_flows');
  await old.sql.exec('DROP TABLE dav_push_tokens');
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
  const pool = migratedPostgresPools('dav_renamed_away');

  describeRenameAwayRepository('PostgreSQL', async () => ({ repository: new SqlRenameAwayRepository((await pool()).sql), close: async () => undefined }));

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
