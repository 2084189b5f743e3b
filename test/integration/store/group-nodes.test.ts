/**
 * A group's tree on a real store: the seven top-level folders, details naming the group, files
 * counting against the group's quota (not the member's), the group's trash, and moves and copies
 * between a user's tree and a group's (both ways, and between two groups): ownership of the
 * whole subtree changes, usage moves with every revision's bytes, the receiver's quota is
 * checked first, and leaving a group needs `delete` (move) or `download` (copy) there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { createLocalClient } from '../../../src/store/local-client.js';
import type { TestStore } from '../../helpers/start-store.js';
import {
  readBlobStored,
  blobHashOf,
  readBlobRefs,
  createFolder,
  readDiskUsed,
  nodeRow,
  topLevelRow,
  uploadFile,
  type Seeder,
  type SeededUser,
} from '../../helpers/seed.js';
import { ALL_NODE_PERMISSIONS, call, dataOf, readGroupUsage, readStoredBytes, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let alice: SeededUser;

beforeAll(async () => {
  ({ store, seeder, ga } = await startGroupStore());
  alice = await seeder.user('Alice Member');
});

afterAll(() => stopGroupStore({ seeder, store }));

let counter = 0;
/** Distinct bytes per call, so blob sharing between tests never blurs the counts. */
const bytes = (size: number): Buffer => {
  counter += 1;
  const buffer = Buffer.alloc(size, counter % 251);
  buffer.writeUInt32BE(counter, 0);
  return buffer;
};

async function groupWith(member: SeededUser, permissions: string[], quotaBytes = 0): Promise<string> {
  const uuid = await ga.group(`Team ${(counter += 1)}`, { quotaBytes });
  await ga.member(uuid, member.uuid, { node_permissions: permissions });
  return uuid;
}

const post = (s: SeededUser, id: string, json: unknown) => call(seeder.client, s.session, 'POST', `/api/nodes/${id}`, json);

/** Owner, usage and stored bytes of both sides must agree after every change. */
async function expectExactUsage(...owners: Array<{ uuid: string; kind: 'User' | 'Group' }>): Promise<void> {
  for (const owner of owners) {
    const used = owner.kind === 'User' ? await readDiskUsed(store, owner.uuid) : (await readGroupUsage(store, owner.uuid))?.disk_used;
    expect({ owner: owner.uuid, used }).toEqual({ owner: owner.uuid, used: await readStoredBytes(store, owner.uuid) });
  }
}

describe("a group's own tree", () => {
  it('has the seven top-level folders, reached through the qualified identifiers', async () => {
    const group = await groupWith(alice, ['read']);
    const tops = (await store.ctx.storage.sql.all('SELECT top_kind, owner_type FROM nodes WHERE owner_uuid = ? ORDER BY top_kind', [group]));
    expect(tops).toEqual(
      ['favorites', 'home', 'incoming', 'private_shares', 'public_shares', 'shared_with_you', 'trash'].map((k) => ({ top_kind: k, owner_type: 'Group' })),
    );
    for (const kind of ['home', 'incoming', 'trash', 'favorites', 'public_shares', 'private_shares', 'shared_with_you']) {
      expect(await dataOf(call(seeder.client, alice.session, 'GET', `/api/nodes/${kind}:${group}/dirlist`))).toEqual([]);
    }
  });

  it("names the group as owner in node details, and qualified identifiers in the path", async () => {
    const group = await groupWith(alice, ['read', 'write']);
    const folder = await createFolder(seeder.client, alice.session, `home:${group}`, 'plans');
    const groupName = ((await store.ctx.storage.sql.get('SELECT name FROM groups WHERE uuid = ?', [group])) as { name: string }).name;
    expect(await dataOf(call(seeder.client, alice.session, 'GET', `/api/nodes/${folder}`))).toMatchObject({
      name: 'plans',
      type: 'Dir',
      uuid: folder,
      owner_type: 'Group',
      owner_uuid: group,
      owner_fullname: groupName,
    });
    expect(await dataOf(call(seeder.client, alice.session, 'GET', `/api/nodes/home:${group}`))).toMatchObject({ uuid: `home:${group}`, owner_fullname: groupName });
    expect(await dataOf(call(seeder.client, alice.session, 'GET', `/api/nodes/${folder}/path`))).toEqual([
      { name: 'home', uuid: `home:${group}` },
      { name: 'plans', uuid: folder },
    ]);
  });

  it('keeps the bare identifiers on the member’s own folders', async () => {
    const group = await groupWith(alice, ALL_NODE_PERMISSIONS);
    await createFolder(seeder.client, alice.session, `home:${group}`, 'only in the group');
    const own = await dataOf<Array<{ name: string }>>(call(seeder.client, alice.session, 'GET', '/api/nodes/home/dirlist'));
    expect(own.map((e) => e.name)).not.toContain('only in the group');
  });
});

describe("the group's quota", () => {
  it('counts uploads against the group, not the member, up to the group quota (507 beyond it)', async () => {
    const member = await seeder.user('Quentin Quota', { quotaBytes: 100 });
    const group = await groupWith(member, ['read', 'write'], 1000);
    await uploadFile(seeder.client, member.session, `home:${group}`, 'big.bin', bytes(600));
    expect(await readGroupUsage(store, group)).toEqual({ disk_quota: 1000, disk_used: 600 });
    expect(await readDiskUsed(store, member.uuid)).toBe(0);

    const tooMuch = bytes(500);
    await expect(uploadFile(seeder.client, member.session, `home:${group}`, 'more.bin', tooMuch)).rejects.toMatchObject({ httpStatus: 507 });
    expect((await readGroupUsage(store, group))?.disk_used).toBe(600);
    expect(await readBlobStored(store, blobHashOf(tooMuch))).toBe(false);
    // The member's own quota still applies in the member's own tree.
    await expect(uploadFile(seeder.client, member.session, 'home', 'mine.bin', bytes(101))).rejects.toMatchObject({ httpStatus: 507 });
    await expectExactUsage({ uuid: group, kind: 'Group' }, { uuid: member.uuid, kind: 'User' });
  });

  it('counts every revision and copies inside the group, and a purge from the group trash frees them', async () => {
    const group = await groupWith(alice, ALL_NODE_PERMISSIONS, 10_000);
    const first = bytes(300);
    const file = await uploadFile(seeder.client, alice.session, `home:${group}`, 'doc.bin', first);
    await uploadFile(seeder.client, alice.session, `home:${group}`, 'doc.bin', bytes(200));
    expect((await readGroupUsage(store, group))?.disk_used).toBe(500);
    const target = await createFolder(seeder.client, alice.session, `home:${group}`, 'copies');
    expect((await post(alice, file, { copy_to: target })).status).toBe(204);
    expect((await readGroupUsage(store, group))?.disk_used).toBe(700);

    expect((await call(seeder.client, alice.session, 'DELETE', `/api/nodes/${file}`)).status).toBe(204);
    const trash = await topLevelRow(store, group, 'trash');
    expect(await nodeRow(store, file)).toMatchObject({ parent_uuid: trash.uuid, owner_uuid: group });
    expect((await readGroupUsage(store, group))?.disk_used).toBe(700);
    expect((await call(seeder.client, alice.session, 'DELETE', `/api/nodes/${file}`)).status).toBe(204);
    expect(await nodeRow(store, file)).toBeUndefined();
    expect((await readGroupUsage(store, group))?.disk_used).toBe(200);
    expect(await readBlobStored(store, blobHashOf(first))).toBe(false);
    await expectExactUsage({ uuid: group, kind: 'Group' }, { uuid: alice.uuid, kind: 'User' });
  });
});

describe('moving between a user and a group', () => {
  /** A folder in the user's home with a file of two revisions (500 bytes) and a subfolder with one of 100. */
  async function userTree(user: SeededUser): Promise<{ folder: string; file: string; sub: string; inner: string }> {
    const folder = await createFolder(seeder.client, user.session, 'home', `project ${(counter += 1)}`);
    const file = await uploadFile(seeder.client, user.session, folder, 'report.bin', bytes(300));
    await uploadFile(seeder.client, user.session, folder, 'report.bin', bytes(200));
    const sub = await createFolder(seeder.client, user.session, folder, 'sub');
    const inner = await uploadFile(seeder.client, user.session, sub, 'inner.bin', bytes(100));
    return { folder, file, sub, inner };
  }

  it('gives the whole subtree to the group and moves every revision’s bytes to its usage', async () => {
    const user = await seeder.user('Umberto Mover');
    const group = await groupWith(user, ['read', 'write'], 10_000);
    const t = await userTree(user);
    expect(await readDiskUsed(store, user.uuid)).toBe(600);
    expect((await post(user, t.folder, { move_to: `home:${group}` })).status).toBe(204);
    for (const uuid of [t.folder, t.file, t.sub, t.inner]) expect(await nodeRow(store, uuid)).toMatchObject({ owner_uuid: group, owner_type: 'Group' });
    expect((await nodeRow(store, t.folder))?.parent_uuid).toBe((await topLevelRow(store, group, 'home')).uuid);
    expect(await readDiskUsed(store, user.uuid)).toBe(0);
    expect((await readGroupUsage(store, group))?.disk_used).toBe(600);
    expect(await dataOf(call(seeder.client, user.session, 'GET', `/api/nodes/${t.file}`))).toMatchObject({ owner_type: 'Group', owner_uuid: group });
    await expectExactUsage({ uuid: group, kind: 'Group' }, { uuid: user.uuid, kind: 'User' });
  });

  it('moves the bytes once when two moves of one folder into two groups race (each resolves the folder in its own transaction)', async () => {
    const user = await seeder.user('Rita Racer');
    const one = await groupWith(user, ['read', 'write', 'delete'], 10_000);
    const two = await groupWith(user, ['read', 'write', 'delete'], 10_000);
    const local = createLocalClient(store.ctx);
    for (let round = 0; round < 5; round += 1) {
      const t = await userTree(user);
      // In-process, as the bridge calls it: the two calls interleave at every await.
      const moves = await Promise.allSettled([local.moveInto(user.session, nodeId(t.folder), nodeId(`home:${one}`)), local.moveInto(user.session, nodeId(t.folder), nodeId(`home:${two}`))]);
      // Both may succeed (the second moves it on from the first group); nothing else fails.
      expect(moves.filter((m) => m.status === 'rejected')).toEqual([]);
      const owner = (await nodeRow(store, t.folder))?.owner_uuid;
      expect([one, two]).toContain(owner);
      for (const uuid of [t.file, t.sub, t.inner]) expect((await nodeRow(store, uuid))?.owner_uuid).toBe(owner);
      await expectExactUsage({ uuid: user.uuid, kind: 'User' }, { uuid: one, kind: 'Group' }, { uuid: two, kind: 'Group' });
    }
  });

  it('moves a subtree back out of the group with write and delete there', async () => {
    const user = await seeder.user('Ursula Back');
    const group = await groupWith(user, ['read', 'write', 'delete'], 10_000);
    const t = await userTree(user);
    expect((await post(user, t.folder, { move_to: `home:${group}` })).status).toBe(204);
    expect((await post(user, t.sub, { move_to: 'home' })).status).toBe(204);
    expect(await nodeRow(store, t.sub)).toMatchObject({ owner_uuid: user.uuid, owner_type: 'User', parent_uuid: (await topLevelRow(store, user.uuid, 'home')).uuid });
    expect(await nodeRow(store, t.inner)).toMatchObject({ owner_uuid: user.uuid, owner_type: 'User' });
    expect(await readDiskUsed(store, user.uuid)).toBe(100);
    expect((await readGroupUsage(store, group))?.disk_used).toBe(500);
    await expectExactUsage({ uuid: group, kind: 'Group' }, { uuid: user.uuid, kind: 'User' });
  });

  it('refuses moving out of a group without delete there (403), changing nothing', async () => {
    const user = await seeder.user('Walter Writeonly');
    const group = await groupWith(user, ['read', 'write', 'download'], 10_000);
    const file = await uploadFile(seeder.client, user.session, `home:${group}`, 'stays.bin', bytes(50));
    const res = await post(user, file, { move_to: 'home' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ status: 'error', code: 'forbidden', msg: 'delete permission required to move a node to another owner' });
    expect(await nodeRow(store, file)).toMatchObject({ owner_uuid: group, parent_uuid: (await topLevelRow(store, group, 'home')).uuid });
    expect((await readGroupUsage(store, group))?.disk_used).toBe(50);
    expect(await readDiskUsed(store, user.uuid)).toBe(0);
  });

  it('refuses moving into a group without write there (403)', async () => {
    const user = await seeder.user('Rita Readonly');
    const group = await groupWith(user, ['read', 'delete', 'download']);
    const file = await uploadFile(seeder.client, user.session, 'home', 'mine.bin', bytes(10));
    const res = await post(user, file, { move_to: `home:${group}` });
    expect(res.body).toEqual({ status: 'error', code: 'forbidden', msg: 'write permission required' });
    expect((await nodeRow(store, file))?.owner_uuid).toBe(user.uuid);
  });

  it('checks the receiving quota first: 507, and nothing moves', async () => {
    const user = await seeder.user('Otto Overflow');
    const group = await groupWith(user, ALL_NODE_PERMISSIONS, 550);
    const t = await userTree(user);
    const res = await post(user, t.folder, { move_to: `home:${group}` });
    expect(res.status).toBe(507);
    expect(res.body).toMatchObject({ status: 'error', code: 'quota_exceeded' });
    for (const uuid of [t.folder, t.file, t.inner]) expect((await nodeRow(store, uuid))?.owner_uuid).toBe(user.uuid);
    expect(await readDiskUsed(store, user.uuid)).toBe(600);
    expect((await readGroupUsage(store, group))?.disk_used).toBe(0);
    // The same move into the user's own tree back from a group respects the user's quota too.
    const small = await seeder.user('Tina Tiny', { quotaBytes: 40 });
    const shared = await groupWith(small, ALL_NODE_PERMISSIONS);
    const big = await uploadFile(seeder.client, small.session, `home:${shared}`, 'big.bin', bytes(41));
    expect((await post(small, big, { move_to: 'home' })).status).toBe(507);
    expect((await nodeRow(store, big))?.owner_uuid).toBe(shared);
  });

  it('moves between two groups, and restores from one group’s trash into another', async () => {
    const user = await seeder.user('Gabriel Between');
    const from = await groupWith(user, ALL_NODE_PERMISSIONS);
    const to = await groupWith(user, ['read', 'write'], 1000);
    const file = await uploadFile(seeder.client, user.session, `home:${from}`, 'travel.bin', bytes(70));
    const trashed = await uploadFile(seeder.client, user.session, `home:${from}`, 'binned.bin', bytes(30));
    expect((await call(seeder.client, user.session, 'DELETE', `/api/nodes/${trashed}`)).status).toBe(204);
    expect((await post(user, file, { move_to: `home:${to}` })).status).toBe(204);
    expect((await post(user, trashed, { move_to: `home:${to}` })).status).toBe(204);
    expect(await nodeRow(store, trashed)).toMatchObject({ owner_uuid: to, trashed_from: null, trashed_name: null });
    expect((await readGroupUsage(store, from))?.disk_used).toBe(0);
    expect((await readGroupUsage(store, to))?.disk_used).toBe(100);
    await expectExactUsage({ uuid: from, kind: 'Group' }, { uuid: to, kind: 'Group' });
  });
});

describe('copying between a user and a group', () => {
  it('copies into a group: the copy is the group’s and counts against it; the bytes are shared', async () => {
    const user = await seeder.user('Cora Copier');
    const group = await groupWith(user, ['read', 'write'], 1000);
    const content = bytes(120);
    const file = await uploadFile(seeder.client, user.session, 'home', 'original.bin', content);
    expect((await post(user, file, { copy_to: `home:${group}` })).status).toBe(204);
    const copy = (await store.ctx.storage.sql.get('SELECT * FROM nodes WHERE parent_uuid = ? AND name = ?', [(await topLevelRow(store, group, 'home')).uuid, 'original.bin'])) as {
      uuid: string;
      owner_uuid: string;
      owner_type: string;
    };
    expect(copy).toMatchObject({ owner_uuid: group, owner_type: 'Group' });
    expect(await readDiskUsed(store, user.uuid)).toBe(120);
    expect((await readGroupUsage(store, group))?.disk_used).toBe(120);
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(2);
    await expectExactUsage({ uuid: group, kind: 'Group' }, { uuid: user.uuid, kind: 'User' });
  });

  it('copies out of a group only with download there (403 without), and counts against the user', async () => {
    const reader = await seeder.user('Dora Nodownload');
    const downloader = await seeder.user('Dieter Download');
    const group = await groupWith(reader, ['read', 'write', 'delete']);
    await ga.member(group, downloader.uuid, { node_permissions: ['read', 'download'] });
    const file = await uploadFile(seeder.client, reader.session, `home:${group}`, 'shared.bin', bytes(80));

    const refused = await post(reader, file, { copy_to: 'home' });
    expect(refused.body).toEqual({ status: 'error', code: 'forbidden', msg: 'download permission required to copy a node to another owner' });
    expect(await readDiskUsed(store, reader.uuid)).toBe(0);

    expect((await post(downloader, file, { copy_to: 'home' })).status).toBe(204);
    expect(await readDiskUsed(store, downloader.uuid)).toBe(80);
    expect((await readGroupUsage(store, group))?.disk_used).toBe(80);
    await expectExactUsage({ uuid: group, kind: 'Group' }, { uuid: downloader.uuid, kind: 'User' });
  });

  it('checks the receiving quota before copying (507, nothing written)', async () => {
    const user = await seeder.user('Kurt Copyfull');
    const group = await groupWith(user, ['read', 'write'], 100);
    const file = await uploadFile(seeder.client, user.session, 'home', 'large.bin', bytes(101));
    expect((await post(user, file, { copy_to: `home:${group}` })).status).toBe(507);
    expect((await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM nodes WHERE owner_uuid = ? AND top_kind IS NULL', [group]))).toEqual({ n: 0 });
    expect((await readGroupUsage(store, group))?.disk_used).toBe(0);
  });

  it('lets the built-in admin move a user’s own folder into a group only when it is the admin’s (user trees stay private)', async () => {
    const group = await groupWith(alice, ['read']);
    const alicesFile = await uploadFile(seeder.client, alice.session, 'home', 'private.bin', bytes(5));
    const res = await call(seeder.client, seeder.admin, 'POST', `/api/nodes/${alicesFile}`, { move_to: `home:${group}` });
    expect(res.status).toBe(404);
    const adminsFile = await uploadFile(seeder.client, seeder.admin, 'home', 'admin.bin', bytes(5));
    expect((await call(seeder.client, seeder.admin, 'POST', `/api/nodes/${adminsFile}`, { move_to: `home:${group}` })).status).toBe(204);
    expect((await nodeRow(store, adminsFile))?.owner_uuid).toBe(group);
    expect(await seeder.client.myAccess(alice.session, nodeId(adminsFile))).toEqual(['read']);
  });
});
