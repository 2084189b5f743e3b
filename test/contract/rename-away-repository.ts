/**
 * One suite for every RenameAwayRepository (contracts/renamed-away.ts): a memo given back once, to
 * its user, folder, name and kind only; a later one replacing the earlier; `since` and the sweep
 * of stale memos. Run over the store's SQLite database, the bridge's own state file and PostgreSQL
 * (test/integration/bridge-state/renamed-away.test.ts, which also races two instances for one memo).
 */
import { describe, expect, it } from 'vitest';
import type { RenameAwayMemo, RenameAwayRepository } from '../../src/contracts/renamed-away.js';

export const T0 = 1_800_000_000_000;
export const away = (name: string, atMs: number, nodeId = `node-${name}`): RenameAwayMemo => ({
  kind: 'away',
  userId: 'alice',
  folder: 'folder-1',
  name,
  nodeId,
  otherName: '~WRL0001.tmp',
  revision: 3,
  atMs,
});

/** Opens a fresh, empty repository for one test, and how to let it go. */
export type RenameAwayRepositoryFactory = () => Promise<{ repository: RenameAwayRepository; close(): Promise<void> }>;

export function describeRenameAwayRepository(name: string, open: RenameAwayRepositoryFactory): void {
  describe(`RenameAwayRepository contract: ${name}`, () => {
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

    it('of takes of one memo at once, exactly one gets it', async () => {
      const { repository, close } = await open();
      try {
        await repository.remember(away('f.docx', T0), T0 - 60_000);
        const taken = await Promise.all([1, 2, 3, 4].map(() => repository.take('away', 'alice', 'folder-1', 'f.docx', T0)));
        expect(taken.filter((memo) => memo !== undefined)).toEqual([away('f.docx', T0)]);
      } finally {
        await close();
      }
    });
  });
}
