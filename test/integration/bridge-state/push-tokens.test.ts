/**
 * The push door's pre-auth tokens (contracts/push-tokens.ts) where the bridge keeps them: the
 * store's SQLite database, the bridge's own state file (format 9) and PostgreSQL. A token is taken
 * once, never after its expiry, and an expired one is dropped by the next put; on PostgreSQL two
 * instances (two pools) racing for one token: exactly one gets it.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PushTokenRepository } from '../../../src/contracts/push-tokens.js';
import { openBridgeStateFile } from '../../../src/store/storage/dav-state.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { SqlPushTokenRepository } from '../../../src/store/storage/push-tokens.js';
import type { Sql } from '../../../src/store/storage/sql.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { migratedPostgresPools } from '../../helpers/postgres-pools.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const T0 = 1_800_000_000_000;
const token = (n: string, expiresMs = T0 + 15_000) => ({ key: `key-${n}`, sealed: `sealed-${n}`, expiresMs });

function contract(name: string, open: () => Promise<{ sql: Sql; close(): Promise<void> }>): void {
  describe(`push tokens: ${name}`, () => {
    it('takes a token once, not after its expiry, and drops expired ones on the next put', async () => {
      const { sql, close } = await open();
      try {
        const repository: PushTokenRepository = new SqlPushTokenRepository(sql);
        await repository.put(token('a'), T0);
        await repository.put(token('b'), T0);
        expect(await repository.take('key-a', T0 + 1000)).toEqual(token('a'));
        expect(await repository.take('key-a', T0 + 1000)).toBeUndefined();
        expect(await repository.take('key-b', T0 + 15_000)).toBeUndefined();
        await repository.put(token('c', T0 + 1000), T0);
        await repository.put(token('d'), T0 + 2000);
        const left = await sql.all<{ token_key: string }>('SELECT token_key FROM dav_push_tokens ORDER BY token_key');
        expect(left.map((row) => row.token_key)).toEqual(['key-d']);
      } finally {
        await close();
      }
    });
  });
}

contract('the store’s SQLite database', async () => {
  const tmp = makeTmpDir('driveway-push-tokens-');
  const storage = new SqliteStorage(openDatabase(path.join(tmp.dir, 'driveway.sqlite')));
  return { sql: storage.sql, close: async () => { await storage.close(); tmp.remove(); } };
});

contract('the bridge’s state file', async () => {
  const tmp = makeTmpDir('driveway-push-tokens-');
  const state = openBridgeStateFile(path.join(tmp.dir, 'bridge.sqlite'));
  return { sql: state.sql, close: async () => { await state.close(); tmp.remove(); } };
});

const postgres = requirePostgres();

postgres.describe('push tokens on PostgreSQL', () => {
  const pool = migratedPostgresPools('dav_push_tokens');

  contract('PostgreSQL', async () => ({ sql: (await pool()).sql, close: async () => undefined }));

  it('two instances taking one token at once: exactly one gets it', async () => {
    const instances = [new SqlPushTokenRepository((await pool()).sql), new SqlPushTokenRepository((await pool()).sql)];
    for (let round = 0; round < 10; round++) {
      await instances[round % 2]?.put(token(`race-${round}`), T0);
      const taken = await Promise.all(instances.flatMap((r) => [r.take(`key-race-${round}`, T0), r.take(`key-race-${round}`, T0)]));
      expect(taken.filter((t) => t !== undefined), `round ${round}`).toHaveLength(1);
    }
  });
});
