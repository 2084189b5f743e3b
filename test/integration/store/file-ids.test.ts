/**
 * Numeric file ids (docs/extensions.md "Numeric file ids"; migration 025) on a real store, SQLite
 * or PostgreSQL as the run asks (the integration-pg project runs this file too): the migration
 * numbers the nodes a database already holds, each node's `file_id` in dirlist and details is
 * kept across rename, move and a restore from the trash, a copy gets a new one, a number is never
 * given twice (deleting the highest included), and the lookup by number answers only what the
 * caller may read (404 otherwise, the same as a number no node has).
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type HttpStoreClient } from '../../../src/store-client/index.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { migrate, migrationsOf } from '../../../src/store/storage/migrations.js';
import type { Storage } from '../../../src/store/storage/sql.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';
import { ALL_NODE_PERMISSIONS, call, dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { createFolder, entryNamed, nodeRow, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import type { TestStore } from '../../helpers/start-store.js';

/** Applies the dialect's migrations up to `version` only, as a store that has not met 025 yet. */
async function migrateUpTo(storage: Storage, version: number): Promise<void> {
  await storage.sql.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)');
  for (const m of migrationsOf(storage.dialect).filter((m) => m.version <= version)) {
    await storage.sql.transaction(async (tx) => {
      await tx.exec(m.sql);
      await tx.run('INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)', [m.version, m.name, 0]);
    });
  }
}

const insertFolder = (storage: Storage, uuid: string, name: string, parent: string | null) =>
  storage.sql.run(
    `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated) VALUES (?, ?, 'User', ?, ?, ?, 'Dir', 1, 1)`,
    [uuid, '00000000-0000-4000-8000-0000000000aa', parent, parent === null ? 'home' : null, name],
  );
const uuidOf = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

async function expectMigrationNumbersAndNeverReuses(storage: Storage): Promise<void> {
  await migrateUpTo(storage, 24);
  await insertFolder(storage, uuidOf(1), 'home', null);
  for (let i = 2; i <= 6; i += 1) await insertFolder(storage, uuidOf(i), `f${i}`, uuidOf(1));
  expect(await migrate(storage, 'test database')).toContain(25);

  const before = await storage.sql.all<{ uuid: string; file_id: number }>('SELECT uuid, file_id FROM nodes ORDER BY uuid');
  expect(before).toHaveLength(6);
  for (const row of before) expect(Number.isSafeInteger(row.file_id) && row.file_id > 0).toBe(true);
  expect(new Set(before.map((r) => r.file_id)).size).toBe(6);

  // A new node takes a number above every one given; deleting the highest does not give it back.
  await insertFolder(storage, uuidOf(7), 'f7', uuidOf(1));
  const seventh = (await storage.sql.get<{ file_id: number }>('SELECT file_id FROM nodes WHERE uuid = ?', [uuidOf(7)]))?.file_id as number;
  expect(seventh).toBeGreaterThan(Math.max(...before.map((r) => r.file_id)));
  await storage.sql.run('DELETE FROM nodes WHERE uuid = ?', [uuidOf(7)]);
  await insertFolder(storage, uuidOf(8), 'f8', uuidOf(1));
  const eighth = (await storage.sql.get<{ file_id: number }>('SELECT file_id FROM nodes WHERE uuid = ?', [uuidOf(8)]))?.file_id as number;
  expect(eighth).toBeGreaterThan(seventh);
  // A rename keeps it.
  await storage.sql.run("UPDATE nodes SET name = 'renamed' WHERE uuid = ?", [uuidOf(8)]);
  expect(await storage.sql.get('SELECT file_id FROM nodes WHERE uuid = ?', [uuidOf(8)])).toEqual({ file_id: eighth });
}

describe('migration 025 on SQLite', () => {
  it('numbers the nodes a database already holds, distinct, and never gives a number twice', async () => {
    const tmp = makeTmpDir();
    const db = new Database(path.join(tmp.dir, 'store.sqlite'));
    db.pragma('foreign_keys = ON');
    const storage = new SqliteStorage(db);
    try {
      await expectMigrationNumbersAndNeverReuses(storage);
    } finally {
      await storage.close();
      tmp.remove();
    }
  });
});

requirePostgres().describe('migration 025 on PostgreSQL', () => {
  it('numbers the nodes a database already holds, distinct, and never gives a number twice', async () => {
    const storage = new PostgresStorage(await freshPostgresDatabase());
    try {
      await expectMigrationNumbersAndNeverReuses(storage);
    } finally {
      await storage.close();
    }
  });
});

describe('numeric file ids on the store', () => {
  let store: TestStore;
  let seeder: Seeder;
  let ga: GroupAdmin;
  let client: HttpStoreClient;
  let alice: SeededUser;
  let bob: SeededUser;

  beforeAll(async () => {
    ({ store, seeder, ga } = await startGroupStore());
    client = seeder.client;
    alice = await seeder.user('Alice Numbers');
    bob = await seeder.user('Bob Numbers');
  });
  afterAll(() => stopGroupStore({ seeder, store }));

  const fileIdOf = async (s: SeededUser, folder: string, name: string): Promise<number> => {
    const id = (await entryNamed(client, s.session, folder, name)).fileId;
    if (id === undefined) throw new Error(`no file_id on ${name}`);
    return id;
  };
  const byFileId = (s: SeededUser, n: number | string) => call(client, s.session, 'GET', `/api/nodes/by-file-id/${n}`);

  it('lists file_id on entries and details, the same number, the stored one', async () => {
    const folder = await createFolder(client, alice.session, 'home', 'ids listed');
    const file = await uploadFile(client, alice.session, folder, 'a.txt', 'a');
    const listed = await fileIdOf(alice, folder, 'a.txt');
    expect((await client.details(alice.session, file)).fileId).toBe(listed);
    expect((await nodeRow(store, file))?.file_id).toBe(listed);
    const raw = await dataOf<{ file_id: unknown }>(call(client, alice.session, 'GET', `/api/nodes/${folder}`));
    expect(raw.file_id).toBe(await fileIdOf(alice, 'home', 'ids listed'));
  });

  it('keeps the number across rename, move and a restore from the trash; a copy gets a new one', async () => {
    const from = await createFolder(client, alice.session, 'home', 'ids from');
    const to = await createFolder(client, alice.session, 'home', 'ids to');
    const file = await uploadFile(client, alice.session, from, 'b.txt', 'b');
    const id = await fileIdOf(alice, from, 'b.txt');
    await client.rename(alice.session, file, 'b2.txt');
    expect(await fileIdOf(alice, from, 'b2.txt')).toBe(id);
    await client.moveInto(alice.session, file, to);
    expect(await fileIdOf(alice, to, 'b2.txt')).toBe(id);
    await client.copyInto(alice.session, file, from);
    const copy = await fileIdOf(alice, from, 'b2.txt');
    expect(copy).not.toBe(id);
    expect(copy).toBeGreaterThan(id);
    await client.remove(alice.session, file);
    expect(await fileIdOf(alice, 'trash', 'b2.txt')).toBe(id);
    await client.restoreFromTrash(alice.session, file);
    expect(await fileIdOf(alice, to, 'b2.txt')).toBe(id);
    expect((await client.details(alice.session, file)).fileId).toBe(id);
  });

  it('never gives a number twice: a node made after the highest is deleted for good gets a higher one', async () => {
    const folder = await createFolder(client, alice.session, 'home', 'ids reuse');
    const file = await uploadFile(client, alice.session, folder, 'last.txt', 'x');
    const highest = await fileIdOf(alice, folder, 'last.txt');
    await client.remove(alice.session, file);
    expect((await client.remove(alice.session, file)).forGood).toBe(true);
    expect(await nodeRow(store, file)).toBeUndefined();
    await uploadFile(client, alice.session, folder, 'next.txt', 'y');
    expect(await fileIdOf(alice, folder, 'next.txt')).toBeGreaterThan(highest);
    await createFolder(client, alice.session, folder, 'sub');
    expect(await fileIdOf(alice, folder, 'sub')).toBeGreaterThan(highest);
  });

  it('answers the details by number to whoever may read the node, and 404 to everyone else, in parallel', async () => {
    const mine = await uploadFile(client, alice.session, 'home', 'lookup.txt', 'mine');
    const myId = await fileIdOf(alice, 'home', 'lookup.txt');
    const group = await ga.group('Numbers Team');
    await ga.member(group, alice.uuid, { node_permissions: ALL_NODE_PERMISSIONS });
    const groupFile = await uploadFile(client, alice.session, `home:${group}`, 'team.txt', 'team');
    const groupId = await fileIdOf(alice, `home:${group}`, 'team.txt');
    const groupHome = (await client.details(alice.session, nodeId(`home:${group}`))).fileId as number;
    const bobsOwn = await uploadFile(client, bob.session, 'home', 'bob.txt', 'bob');
    const bobsId = await fileIdOf(bob, 'home', 'bob.txt');

    const asked = await Promise.all([
      ...Array.from({ length: 6 }, () => byFileId(alice, myId)),
      ...Array.from({ length: 6 }, () => byFileId(bob, myId)),
      ...Array.from({ length: 4 }, () => byFileId(alice, groupId)),
      ...Array.from({ length: 4 }, () => byFileId(bob, groupId)),
      ...Array.from({ length: 4 }, () => byFileId(bob, groupHome)),
      ...Array.from({ length: 4 }, () => byFileId(alice, bobsId)),
      ...Array.from({ length: 4 }, () => byFileId(bob, bobsId)),
      byFileId(bob, 2 ** 50),
    ]);
    const summary = asked.map((r) => `${r.status} ${(r.body as { data?: { uuid?: string } }).data?.uuid ?? '-'}`);
    expect(summary).toEqual([
      ...Array<string>(6).fill(`200 ${mine}`),
      ...Array<string>(6).fill('404 -'),
      ...Array<string>(4).fill(`200 ${groupFile}`),
      ...Array<string>(4).fill('404 -'),
      ...Array<string>(4).fill('404 -'),
      ...Array<string>(4).fill('404 -'),
      ...Array<string>(4).fill(`200 ${bobsOwn}`),
      '404 -',
    ]);
    const found = await dataOf<{ file_id: number; name: string; owner_uuid: string }>(byFileId(alice, groupId));
    expect(found).toMatchObject({ file_id: groupId, name: 'team.txt', owner_uuid: group });
    // The same through the client, and once bob joins the group he may read it there.
    expect((await client.detailsByFileId(alice.session, myId)).id).toBe(mine);
    await ga.member(group, bob.uuid, { node_permissions: ['read'] });
    expect((await byFileId(bob, groupId)).status).toBe(200);
  });

  it('refuses what is no file id with 400', async () => {
    for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
      const res = await byFileId(alice, bad);
      expect({ bad, status: res.status, body: res.body }).toMatchObject({ bad, status: 400, body: { status: 'error' } });
    }
  });
});
