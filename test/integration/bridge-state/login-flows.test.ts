/**
 * The Nextcloud clients' login flows (contracts/login-flows.ts) where the bridge keeps them, held
 * to the contract suite (test/contract/login-flow-repository.ts): the store's SQLite database, the
 * bridge's own state file, and PostgreSQL, where two instances (two pools) race for one granted
 * flow (exactly one gets it) and for an address's last place (exactly one opens it). PostgreSQL is
 * a database of the run's throwaway cluster: skipped with a warning without it, failed when CI=true.
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { openBridgeStateFile } from '../../../src/store/storage/dav-state.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { SqlLoginFlowRepository } from '../../../src/store/storage/login-flows.js';
import { describeLoginFlowRepository, flow, LIMITS, T0 } from '../../contract/login-flow-repository.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { migratedPostgresPools } from '../../helpers/postgres-pools.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

describeLoginFlowRepository('the store’s SQLite database', async () => {
  const tmp = makeTmpDir('driveway-login-flows-');
  const storage = new SqliteStorage(openDatabase(path.join(tmp.dir, 'driveway.sqlite')));
  return {
    repository: new SqlLoginFlowRepository(storage.sql),
    async close() {
      await storage.close();
      tmp.remove();
    },
  };
});

describeLoginFlowRepository('the bridge’s state file', async () => {
  const tmp = makeTmpDir('driveway-login-flows-');
  const state = openBridgeStateFile(path.join(tmp.dir, 'bridge.sqlite'));
  return {
    repository: new SqlLoginFlowRepository(state.sql),
    async close() {
      await state.close();
      tmp.remove();
    },
  };
});

const postgres = requirePostgres();

postgres.describe('on PostgreSQL', () => {
  const pool = migratedPostgresPools('dav_login_flows');

  describeLoginFlowRepository('PostgreSQL', async () => ({ repository: new SqlLoginFlowRepository((await pool()).sql), close: async () => undefined }));

  it('two instances polling one granted flow at once: exactly one gets it; opening an address\'s last place at once: exactly one does', async () => {
    const instances = [new SqlLoginFlowRepository((await pool()).sql), new SqlLoginFlowRepository((await pool()).sql)];
    for (let round = 0; round < 10; round++) {
      const f = flow(`race-${round}`, `198.51.100.${round}`);
      await instances[round % 2]?.open(f, LIMITS, T0);
      await instances[(round + 1) % 2]?.grant(f.loginKey, 'ada', 'sealed', T0);
      const taken = await Promise.all(instances.flatMap((r) => [r.take(f.pollKey, T0), r.take(f.pollKey, T0)]));
      expect(taken.filter((t) => t !== undefined), `round ${round}`).toHaveLength(1);
    }
    const address = '203.0.113.9';
    for (const n of [1, 2]) await instances[0]?.open(flow(`bound-${n}`, address), LIMITS, T0);
    const opened = await Promise.all(instances.flatMap((r, i) => [r.open(flow(`last-${i}-a`, address), LIMITS, T0), r.open(flow(`last-${i}-b`, address), LIMITS, T0)]));
    expect(opened.filter(Boolean)).toHaveLength(1);
  });
});
