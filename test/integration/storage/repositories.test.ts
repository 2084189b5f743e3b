/**
 * The repositories (src/store/storage/*.ts) on each dialect: the statements whose SQL differs
 * between SQLite and PostgreSQL (storage/portable.ts: case-insensitive names, JSON arrays of
 * UUIDs, byte-ordered names, ON CONFLICT DO NOTHING, the qualified upsert of blob references,
 * the login history's bound for events of no user) and the recursive walks of the tree, run
 * against a migrated database of each kind.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { migrate } from '../../../src/store/storage/migrations.js';
import type { Storage } from '../../../src/store/storage/sql.js';
import {
  addStar,
  ancestry,
  createTopLevelFolders,
  deleteSubtree,
  getTopLevel,
  insertNode,
  listChildrenWithStars,
  setSubtreeOwner,
  starredAmong,
  subtreeBytes,
  topKindOf,
  type NodeRow,
} from '../../../src/store/storage/nodes.js';
import { releaseBlobRef } from '../../../src/store/storage/blob-refs.js';
import { insertNewFile, usageOf } from '../../../src/store/storage/revisions.js';
import { insertBuiltinAdmin, insertUser, isEmailTaken, listLoginEvents, recordLoginEvent, usersOfOrg } from '../../../src/store/storage/users.js';
import { insertGroup, insertTag, isGroupNameTaken, membershipsInOrg, tagsOf, upsertMembership } from '../../../src/store/storage/groups.js';
import { deleteOwnerShares, insertShare, shareCountsOf } from '../../../src/store/storage/shares.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

interface Dialect {
  name: string;
  open(): Promise<Storage>;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sqlite: Dialect = {
  name: 'SQLite',
  async open() {
    const tmp = makeTmpDir();
    const storage = new SqliteStorage(openDatabase(path.join(tmp.dir, 'driveway.sqlite')));
    cleanups.push(() => tmp.remove(), () => storage.close());
    return storage;
  },
};

const postgresBinary = requirePostgres();
const postgres: Dialect = {
  name: 'PostgreSQL',
  async open() {
    const storage = new PostgresStorage(await freshPostgresDatabase());
    cleanups.push(() => storage.close());
    await migrate(storage, 'the test database');
    return storage;
  },
};

function folderRow(parent: NodeRow, name: string): NodeRow {
  return { ...parent, uuid: randomUUID(), parent_uuid: parent.uuid, top_kind: null, name, type: 'Dir', revision: null, size: 0, trashed_from: null, trashed_name: null };
}

for (const dialect of [sqlite, postgres]) {
  const suite = dialect === postgres ? postgresBinary.describe : describe;
  suite(`the repositories on ${dialect.name}`, () => {
    it('keep users: emails taken whatever their case, another user left out, full names in case-blind order', async () => {
      const { sql } = await dialect.open();
      const admin = randomUUID();
      await insertBuiltinAdmin(sql, admin, 'hash', 1);
      const ann = randomUUID();
      const bob = randomUUID();
      const base = { passwordHash: 'h', isActive: true, isAdmin: false, orgId: 'default', diskQuotaBytes: 0, comment: '', nowMs: 2 };
      await insertUser(sql, { ...base, uuid: ann, email: 'Ann@Example.org', fullname: 'ann Zeta' });
      await insertUser(sql, { ...base, uuid: bob, email: 'bob@example.org', fullname: 'Bob Alpha' });
      expect(await isEmailTaken(sql, 'ann@EXAMPLE.org')).toBe(true);
      expect(await isEmailTaken(sql, 'ann@example.org', ann)).toBe(false);
      expect(await isEmailTaken(sql, 'ADMIN')).toBe(true);
      expect(await isEmailTaken(sql, 'carol@example.org')).toBe(false);
      expect((await usersOfOrg(sql, 'default')).map((u) => u.fullname)).toEqual(['Administrator', 'ann Zeta', 'Bob Alpha']);
    });

    it('keep groups and tags: names unique whatever their case, tags listed in case-blind order, a second tag of a name refused', async () => {
      const { sql } = await dialect.open();
      const creator = randomUUID();
      await insertBuiltinAdmin(sql, creator, 'hash', 1);
      const team = randomUUID();
      await insertGroup(sql, { uuid: team, orgId: 'default', name: 'Team', description: '', diskQuotaBytes: 0, nowMs: 1 });
      expect(await isGroupNameTaken(sql, 'default', 'TEAM')).toBe(true);
      expect(await isGroupNameTaken(sql, 'default', 'team', team)).toBe(false);
      for (const name of ['beta', 'Alpha', 'gamma']) expect(await insertTag(sql, team, { name, class: 'topic', creatorUuid: creator, nowMs: 1 })).toBe(true);
      expect(await insertTag(sql, team, { name: 'ALPHA', class: 'topic', creatorUuid: creator, nowMs: 1 })).toBe(false);
      expect((await tagsOf(sql, team, 0)).map((t) => t.name)).toEqual(['Alpha', 'beta', 'gamma']);
      expect((await tagsOf(sql, team, 2)).map((t) => t.name)).toEqual(['Alpha', 'beta']);
      await upsertMembership(sql, team, creator, { isAdmin: true, nodePermissions: ['read'], tagPermissions: [], sharePermissions: [] }, 2);
      expect((await membershipsInOrg(sql, 'default')).map((m) => [m.groupName, m.userUuid, m.isAdmin])).toEqual([['Team', creator, true]]);
      expect(await membershipsInOrg(sql, 'default', randomUUID())).toEqual([]);
    });

    it('keep the tree: folders before files, names in byte order, stars once, walks up and down, owners and bytes of a subtree', async () => {
      const { sql } = await dialect.open();
      const owner = randomUUID();
      const other = randomUUID();
      await insertBuiltinAdmin(sql, owner, 'hash', 1);
      await insertUser(sql, { uuid: other, email: 'o@example.org', fullname: 'Other', passwordHash: 'h', isActive: true, isAdmin: false, orgId: 'default', diskQuotaBytes: 0, comment: '', nowMs: 1 });
      await createTopLevelFolders(sql, 'User', owner, 1);
      await createTopLevelFolders(sql, 'User', other, 1);
      const home = (await getTopLevel(sql, owner, 'home')) as NodeRow;
      const folders = ['b', 'B', 'a', 'é'].map((name) => folderRow(home, name));
      for (const folder of folders) await insertNode(sql, folder);
      const [b, , a] = folders as [NodeRow, NodeRow, NodeRow, NodeRow];
      const inner = folderRow(a, 'inner');
      await insertNode(sql, inner);
      // insertNewFile adds the file's blob reference with its rows (one statement on PostgreSQL).
      await sql.transaction(async (tx) => {
        await insertNewFile(tx, home, 'A file', { hash: 'h1', sizeBytes: 10, now: 3 }, owner);
        await insertNewFile(tx, inner, 'deep', { hash: 'h1', sizeBytes: 10, now: 3 }, owner);
      });
      await addStar(sql, owner, b.uuid, 4);
      await addStar(sql, owner, b.uuid, 5);
      const listed = await listChildrenWithStars(sql, home.uuid, owner);
      expect(listed.map((e) => [e.name, e.is_starred])).toEqual([
        ['B', false],
        ['a', false],
        ['b', true],
        ['é', false],
        ['A file', false],
      ]);
      expect([...(await starredAmong(sql, owner, [a.uuid, b.uuid]))]).toEqual([b.uuid]);
      expect((await ancestry(sql, inner)).map((n) => n.name)).toEqual(['home', 'a', 'inner']);
      expect(await topKindOf(sql, inner)).toBe('home');
      expect(await subtreeBytes(sql, a.uuid)).toBe(10);
      expect(await usageOf(sql, 'User', owner)).toEqual({ quotaBytes: 0, usedBytes: 20 });

      await setSubtreeOwner(sql, a.uuid, 'User', other);
      expect((await ancestry(sql, inner)).map((n) => n.owner_uuid)).toEqual([owner, other, other]);
      await deleteSubtree(sql, a.uuid);
      expect((await listChildrenWithStars(sql, home.uuid, owner)).map((e) => e.name)).toEqual(['B', 'b', 'é', 'A file']);
      // Two references were added to one blob row (the upsert adds to it): releasing the deleted
      // revision's leaves the file's.
      expect(await sql.get('SELECT refs FROM blobs WHERE hash = ?', ['h1'])).toEqual({ refs: 2 });
      expect(await releaseBlobRef(sql, 'h1')).toBe(false);
      expect(await sql.get('SELECT refs FROM blobs WHERE hash = ?', ['h1'])).toEqual({ refs: 1 });
    });

    it('keep shares: counts for a list of nodes in one statement, and an owner’s links of some types removed', async () => {
      const { sql } = await dialect.open();
      const owner = randomUUID();
      await insertBuiltinAdmin(sql, owner, 'hash', 1);
      await createTopLevelFolders(sql, 'User', owner, 1);
      const home = (await getTopLevel(sql, owner, 'home')) as NodeRow;
      const [one, two] = [folderRow(home, 'one'), folderRow(home, 'two')];
      await insertNode(sql, one);
      await insertNode(sql, two);
      const link = (node: NodeRow, type: 'public' | 'upload' | 'private') => ({
        uuid: randomUUID(),
        type,
        node_uuid: node.uuid,
        creator_uuid: owner,
        token_hash: type === 'private' ? null : randomUUID(),
        password_hash: null,
        expires: null,
        writable: 0,
        created: 1,
      });
      await insertShare(sql, link(one, 'public'), []);
      await insertShare(sql, link(one, 'upload'), []);
      await insertShare(sql, link(two, 'private'), [{ type: 'User', uuid: owner }]);
      const counts = await shareCountsOf(sql, [one.uuid, two.uuid]);
      expect(counts.get(one.uuid)).toEqual({ publicShares: 2, privateShares: 0 });
      expect(counts.get(two.uuid)).toEqual({ publicShares: 0, privateShares: 1 });
      await deleteOwnerShares(sql, owner, ['public', 'upload']);
      expect((await shareCountsOf(sql, [one.uuid, two.uuid])).get(one.uuid)).toBeUndefined();
    });

    it('keep the login history within its bound, for a user and for attempts of no user', async () => {
      const { sql } = await dialect.open();
      const user = randomUUID();
      await insertBuiltinAdmin(sql, user, 'hash', 1);
      for (let i = 0; i < 5; i += 1) {
        await recordLoginEvent(sql, { userUuid: user, action: 'login', ip: '127.0.0.1', status: 'success', timestampMs: i }, 3);
        await recordLoginEvent(sql, { action: 'login', ip: '127.0.0.1', status: 'failure', timestampMs: i }, 2);
      }
      expect((await listLoginEvents(sql, user)).map((e) => e.timestamp)).toEqual([4, 3, 2]);
      expect((await sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM login_events WHERE user_uuid IS NULL'))?.n).toBe(2);
    });
  });
}
