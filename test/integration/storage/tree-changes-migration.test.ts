/**
 * Migration 026 on a tree that existed before it: every folder gets one tree_changes row holding
 * its recursive size (the latest revision of every file below it), so tree_size is exact from the
 * first start and every folder has a tree_etag. SQLite and PostgreSQL.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { migrationsOf } from '../../../src/store/storage/migrations.js';
import type { Storage } from '../../../src/store/storage/sql.js';
import { treeStatesOf } from '../../../src/store/storage/tree-changes.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const TREE_CHANGES = 26;

/** Applies the dialect's migrations below `before`, as migrate() would have on an older driveway. */
async function migrateBelow(storage: Storage, before: number): Promise<void> {
  for (const migration of migrationsOf(storage.dialect)) {
    if (migration.version >= before) continue;
    await storage.sql.transaction((tx) => tx.exec(migration.sql));
  }
}

async function applyOnly(storage: Storage, version: number): Promise<void> {
  const migration = migrationsOf(storage.dialect).find((m) => m.version === version);
  if (!migration) throw new Error(`no migration ${version}`);
  await storage.sql.transaction((tx) => tx.exec(migration.sql));
}

/** home/{top.txt 5 B, a/{x.bin 100 B, b/{y.bin 20 B}}, empty/}, trash/{gone.bin 7 B}. */
async function seedTree(storage: Storage): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  let n = 0;
  const add = async (name: string, parent: string | null, type: 'Dir' | 'File', size = 0, top: string | null = null): Promise<string> => {
    const uuid = `00000000-0000-4000-8000-${String((n += 1)).padStart(12, '0')}`;
    await storage.sql.run(
      `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated, revision, size) VALUES (?, ?, 'User', ?, ?, ?, ?, 0, 0, ?, ?)`,
      [uuid, 'owner', parent, top, name, type, type === 'File' ? 1 : null, size],
    );
    ids[name] = uuid;
    return uuid;
  };
  const home = await add('home', null, 'Dir', 0, 'home');
  const trash = await add('trash', null, 'Dir', 0, 'trash');
  await add('top.txt', home, 'File', 5);
  const a = await add('a', home, 'Dir');
  await add('x.bin', a, 'File', 100);
  const b = await add('b', a, 'Dir');
  await add('y.bin', b, 'File', 20);
  await add('empty', home, 'Dir');
  await add('gone.bin', trash, 'File', 7);
  return ids;
}

async function expectInitialSizes(storage: Storage): Promise<void> {
  await migrateBelow(storage, TREE_CHANGES);
  const ids = await seedTree(storage);
  await applyOnly(storage, TREE_CHANGES);
  const states = await treeStatesOf(storage.sql, ['home', 'a', 'b', 'empty', 'trash'].map((name) => ids[name] as string));
  const sizes = Object.fromEntries(['home', 'a', 'b', 'empty', 'trash'].map((name) => [name, states.get(ids[name] as string)?.bytes]));
  expect(sizes).toEqual({ home: 125, a: 120, b: 20, empty: 0, trash: 7 });
  const etags = [...states.values()].map((s) => s.etag);
  expect(new Set(etags).size).toBe(5);
}

describe('migration 026 on SQLite', () => {
  const tmp = makeTmpDir();
  it('gives every existing folder its recursive size and a tree version', async () => {
    const storage = new SqliteStorage(new Database(path.join(tmp.dir, 'tree.sqlite')));
    try {
      await expectInitialSizes(storage);
    } finally {
      await storage.close();
      tmp.remove();
    }
  });
});

const postgres = requirePostgres();

postgres.describe('migration 026 on PostgreSQL', () => {
  it('gives every existing folder its recursive size and a tree version', async () => {
    const storage = new PostgresStorage(await freshPostgresDatabase());
    try {
      await expectInitialSizes(storage);
    } finally {
      await storage.close();
    }
  });
});
