/**
 * The bridge's numeric file ids (store/storage/dav-file-ids.ts) where several instances share
 * them: PostgreSQL, two pools (two instances) numbering the same keys at once agree on every
 * number, give each key one, and none twice; the instance's names are the same for both. And the
 * bridge's own state file, as `--only bridge` opens it. PostgreSQL is a database of the run's
 * throwaway cluster: skipped with a warning without it, failed when CI=true.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BRIDGE_FILE_ID_BASE } from '../../../src/contracts/file-ids.js';
import { SqlFileIdRepository } from '../../../src/store/storage/dav-file-ids.js';
import { openBridgeStateFile } from '../../../src/store/storage/dav-state.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { migrate } from '../../../src/store/storage/migrations.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const keys = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(from + i).padStart(12, '0')}`);

requirePostgres().describe('numeric file ids shared by two instances over PostgreSQL', () => {
  it('agree on every number when both number the same keys at once; no number is given twice', async () => {
    const url = await freshPostgresDatabase();
    const first = new PostgresStorage(url);
    const second = new PostgresStorage(url);
    try {
      await migrate(first, 'test database');
      const a = new SqlFileIdRepository(first.sql);
      const b = new SqlFileIdRepository(second.sql);
      const wanted = keys(1, 300);
      const rounds = await Promise.all([a.numbersOf(wanted), b.numbersOf([...wanted].reverse()), a.numbersOf(wanted.slice(100, 200)), b.numbersOf(['root:x', ...wanted.slice(0, 50)])]);
      const [fromA, fromB] = rounds;
      for (const key of wanted) expect(fromB.get(key)).toBe(fromA.get(key));
      for (const round of rounds.slice(2)) for (const [key, n] of round) if (key !== 'root:x') expect(n).toBe(fromA.get(key));
      const numbers = [...fromA.values(), rounds[3]?.get('root:x') as number];
      expect(new Set(numbers).size).toBe(301);
      for (const n of numbers) expect(n).toBeGreaterThan(BRIDGE_FILE_ID_BASE);
      expect(await b.keyOf(fromA.get(wanted[7] as string) as number)).toBe(wanted[7]);
      const [namesA, namesB] = await Promise.all([a.instance(), b.instance()]);
      expect(namesB).toEqual(namesA);
      // A new instance (nothing in memory) reads the same numbers.
      expect([...(await new SqlFileIdRepository(second.sql).numbersOf(wanted.slice(0, 5))).values()]).toEqual(wanted.slice(0, 5).map((k) => fromA.get(k)));
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('number the same keys in opposite orders at once without a deadlock, 40 times', { timeout: 60_000 }, async () => {
    // Each batch is one INSERT: two of them taking the same keys in other orders deadlocked
    // (7 of 80 inserts here before the keys were sorted), and PostgreSQL ended one with an error.
    const url = await freshPostgresDatabase();
    const first = new PostgresStorage(url);
    const second = new PostgresStorage(url);
    try {
      await migrate(first, 'test database');
      const failed: string[] = [];
      for (let round = 0; round < 40; round += 1) {
        const wanted = keys(10_000 + round * 1_000, 300);
        const answers = await Promise.allSettled([new SqlFileIdRepository(first.sql).numbersOf(wanted), new SqlFileIdRepository(second.sql).numbersOf([...wanted].reverse())]);
        for (const answer of answers) if (answer.status === 'rejected') failed.push(String(answer.reason));
        if (answers[0].status === 'fulfilled' && answers[1].status === 'fulfilled') expect([...answers[1].value.entries()].sort()).toEqual([...answers[0].value.entries()].sort());
      }
      expect(failed).toEqual([]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});

describe("numeric file ids in the bridge's own state file", () => {
  it('keeps numbers across a reopen and gives new keys higher ones', async () => {
    const tmp = makeTmpDir('driveway-file-ids-');
    const file = path.join(tmp.dir, 'bridge.sqlite');
    try {
      let state = openBridgeStateFile(file);
      const before = await new SqlFileIdRepository(state.sql).numbersOf(keys(1, 10));
      await state.close();
      state = openBridgeStateFile(file);
      const repository = new SqlFileIdRepository(state.sql);
      expect(await repository.numbersOf(keys(1, 10))).toEqual(before);
      const [fresh] = (await repository.numbersOf(keys(11, 1))).values();
      expect(fresh).toBeGreaterThan(Math.max(...before.values()));
      await state.close();
    } finally {
      tmp.remove();
    }
  });
});
