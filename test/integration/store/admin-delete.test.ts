/**
 * DELETE /api/admin/users/{uuid} and /api/admin/groups/{uuid}: `confirm_delete=yes`, the share
 * flags, the protections (built-in admin, own account), and what goes with the owner: without
 * `transfer_data_to` every node, revision and blob reference (unreferenced blob files unlinked,
 * shared ones kept), the avatar, the WebDrive endpoint, memberships, tags and sessions; with it,
 * the whole tree lands in a folder named after the owner in the receiver's home, and usage
 * moves with it, within the receiver's quota.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type StoreSession } from '../../../src/store-client/index.js';
import type { TestStore } from '../../helpers/start-store.js';
import {
  readBlobStored,
  blobHashOf,
  readBlobRefs,
  createFolder,
  readDiskUsed,
  letters,
  nodeRow,
  topLevelRow,
  uploadFile,
  type Seeder,
  type SeededUser,
} from '../../helpers/seed.js';
import { ALL_NODE_PERMISSIONS, call, readCountRows, dataOf, readGroupUsage, readStoredBytes, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { dataUrl, pngBytes } from '../../helpers/images.js';

const UNKNOWN = '00000000-0000-4000-8000-0000000000dd';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let admin: StoreSession;
let counter = 0;

beforeAll(async () => {
  ({ store, seeder, ga, admin } = await startGroupStore());
});

afterAll(() => stopGroupStore({ seeder, store }));

const newUser = (quotaBytes = 0) => seeder.user(`Person ${letters((counter += 1))}`, { quotaBytes });
const unique = (label: string): string => `${label} ${(counter += 1)} ${'#'.repeat(counter % 7)}`;
const del = (path: string, s: StoreSession = admin) => call(seeder.client, s, 'DELETE', path);

/** A user's stored state: a folder with a file of two revisions, a file in incoming, one in trash. */
async function fill(user: SeededUser): Promise<{ folder: string; file: string; incoming: string; trashed: string; contents: string[] }> {
  const contents = [unique('first'), unique('second'), unique('incoming'), unique('trashed')];
  const folder = await createFolder(seeder.client, user.session, 'home', 'Projects');
  const file = await uploadFile(seeder.client, user.session, folder, 'plan.txt', contents[0] as string);
  await uploadFile(seeder.client, user.session, folder, 'plan.txt', contents[1] as string);
  const incoming = await uploadFile(seeder.client, user.session, 'incoming', 'dropped.txt', contents[2] as string);
  const trashed = await uploadFile(seeder.client, user.session, 'home', 'old.txt', contents[3] as string);
  await seeder.client.remove(user.session, trashed);
  return { folder, file, incoming, trashed, contents };
}

describe('the query of a deletion', () => {
  it.each([
    ['no confirm_delete', '', /^confirm_delete: confirm_delete must be "yes"$/],
    ['confirm_delete=no', '?confirm_delete=no', /^confirm_delete: /],
    ['confirm_delete=YES', '?confirm_delete=YES', /^confirm_delete: /],
    ['delete_all_public_shares=maybe', '?confirm_delete=yes&delete_all_public_shares=maybe', /^delete_all_public_shares: .*true or false/],
    ['delete_all_private_shares=1', '?confirm_delete=yes&delete_all_private_shares=1', /^delete_all_private_shares: /],
  ])('is refused with 400 naming the field for %s, for users and groups alike, deleting nothing', async (_what, query, msg) => {
    const user = await newUser();
    const group = await ga.group();
    for (const path of [`/api/admin/users/${user.uuid}${query}`, `/api/admin/groups/${group}${query}`]) {
      const res = await del(path);
      expect({ path, status: res.status, body: res.body }).toMatchObject({ path, status: 400, body: { code: 'invalid_request', msg: expect.stringMatching(msg) } });
    }
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM users WHERE uuid = ?', user.uuid)).toBe(1);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM groups WHERE uuid = ?', group)).toBe(1);
  });

  it('accepts the share flags as true or false (share-deletion.test.ts has what they do)', async () => {
    const user = await newUser();
    const res = await del(`/api/admin/users/${user.uuid}?confirm_delete=yes&delete_all_public_shares=true&delete_all_private_shares=false`);
    expect(res.body).toEqual({ status: 'success', msg: 'user deleted' });
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM users WHERE uuid = ?', user.uuid)).toBe(0);
  });

  it('refuses transfer_data_to naming the deleted owner (400) or nobody (404)', async () => {
    const user = await newUser();
    const group = await ga.group();
    const cases: Array<[string, number, RegExp]> = [
      [`/api/admin/users/${user.uuid}?confirm_delete=yes&transfer_data_to=${user.uuid}`, 400, /^transfer_data_to: .*itself/],
      [`/api/admin/groups/${group}?confirm_delete=yes&transfer_data_to=${group}`, 400, /^transfer_data_to: .*itself/],
      [`/api/admin/users/${user.uuid}?confirm_delete=yes&transfer_data_to=${UNKNOWN}`, 404, /^transfer_data_to: no such user or group/],
      [`/api/admin/groups/${group}?confirm_delete=yes&transfer_data_to=garbage`, 404, /^transfer_data_to: /],
    ];
    for (const [path, status, msg] of cases) {
      const res = await del(path);
      expect({ path, status: res.status, body: res.body }).toMatchObject({ path, status, body: { msg: expect.stringMatching(msg) } });
    }
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM users WHERE uuid = ?', user.uuid)).toBe(1);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM groups WHERE uuid = ?', group)).toBe(1);
  });
});

describe('who may be deleted', () => {
  it('never the built-in admin, and nobody’s own account (403)', async () => {
    const builtin = ((await store.ctx.storage.sql.get('SELECT uuid FROM users WHERE is_builtin = 1')) as { uuid: string }).uuid;
    expect((await del(`/api/admin/users/${builtin}?confirm_delete=yes`)).body).toEqual({
      status: 'error',
      code: 'forbidden',
      msg: 'the built-in admin cannot be deleted',
    });
    const other = await seeder.client.createUser(admin, { fullname: 'Ola Otheradmin', email: 'ola@example.test', password: 'Secret-Passw0rd', isAdmin: true });
    const ola = await seeder.client.login('ola@example.test', 'Secret-Passw0rd');
    expect((await del(`/api/admin/users/${other}?confirm_delete=yes`, ola)).body).toMatchObject({ code: 'forbidden', msg: 'administrators cannot delete their own account' });
    expect((await del(`/api/admin/users/${builtin}?confirm_delete=yes`, ola)).status).toBe(403);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM users WHERE uuid IN (?, ?)', builtin, other)).toBe(2);
    // Another administrator of the organization may delete a user.
    const victim = await newUser();
    expect((await del(`/api/admin/users/${victim.uuid}?confirm_delete=yes`, ola)).status).toBe(200);
  });
});

describe('deleting a user without transfer', () => {
  it('removes their nodes and blob references, unlinks blobs nobody else holds, and everything that was theirs', async () => {
    const user = await newUser();
    const other = await newUser();
    const t = await fill(user);
    // The same bytes stored by someone else keep their blob.
    const shared = t.contents[0] as string;
    await uploadFile(seeder.client, other.session, 'home', 'same.txt', shared);
    const group = await ga.group();
    await ga.member(group, user.uuid, { node_permissions: ALL_NODE_PERMISSIONS, tag_permissions: ['create'] });
    await dataOf(call(seeder.client, user.session, 'POST', `/api/groups/${group}/tags`, { name: 'left behind', class: 'general' }));
    const inGroup = await uploadFile(seeder.client, user.session, `home:${group}`, 'group file.txt', unique('group'));
    await seeder.client.setStarred(user.session, inGroup, true);
    await dataOf(call(seeder.client, user.session, 'POST', '/api/user/webdrive', { endpoint: 'leaving' }));
    (await store.ctx.storage.sql.run("INSERT INTO avatars (owner_uuid, content_type, bytes, version, updated) VALUES (?, 'image/png', ?, 'v1', 1)", [user.uuid, pngBytes()]));
    const otherBefore = await readDiskUsed(store, other.uuid);

    const res = await del(`/api/admin/users/${user.uuid}?confirm_delete=yes`);
    expect(res.body).toEqual({ status: 'success', msg: 'user deleted' });

    const { sql } = store.ctx.storage;
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM users WHERE uuid = ?', user.uuid)).toBe(0);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM nodes WHERE owner_uuid = ?', user.uuid)).toBe(0);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM revisions WHERE node_uuid IN (?, ?, ?)', t.file, t.incoming, t.trashed)).toBe(0);
    for (const content of t.contents.slice(1)) {
      expect(await readBlobRefs(store, blobHashOf(content))).toBe(0);
      expect(await readBlobStored(store, blobHashOf(content))).toBe(false);
    }
    expect(await readBlobRefs(store, blobHashOf(shared))).toBe(1);
    expect(await readBlobStored(store, blobHashOf(shared))).toBe(true);
    expect(await readDiskUsed(store, other.uuid)).toBe(otherBefore);
    for (const table of ['sessions', 'stars', 'group_members', 'login_events']) {
      expect({ table, n: await readCountRows(store, `SELECT COUNT(*) AS n FROM ${table} WHERE user_uuid = ?`, user.uuid) }).toEqual({ table, n: 0 });
    }
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM avatars WHERE owner_uuid = ?', user.uuid)).toBe(0);
    expect(await sql.get('SELECT * FROM webdrive_endpoints WHERE owner_uuid = ?', [user.uuid])).toBeUndefined();
    // What they stored in the group is the group's, and stays; so does the tag they made.
    expect(await sql.all('SELECT name, creator_uuid FROM group_tags WHERE group_uuid = ?', [group])).toEqual([{ name: 'left behind', creator_uuid: null }]);
    expect((await nodeRow(store, inGroup))?.owner_uuid).toBe(group);
    expect((await readGroupUsage(store, group))?.disk_used).toBe(await readStoredBytes(store, group));
    // Their session is gone, the endpoint name is free again, and login fails.
    expect((await call(seeder.client, user.session, 'GET', '/api/user')).status).toBe(401);
    await expect(seeder.client.login(user.email, 'Secret-Passw0rd')).rejects.toMatchObject({ kind: 'unauthenticated' });
    await dataOf(call(seeder.client, other.session, 'POST', '/api/user/webdrive', { endpoint: 'leaving' }));
  });
});

describe('deleting a user with transfer_data_to', () => {
  it('moves the whole tree into a folder named after them in the receiving user’s home, with its usage', async () => {
    const user = await seeder.user('Tessa Transfer');
    const receiver = await newUser();
    const t = await fill(user);
    const bytes = await readStoredBytes(store, user.uuid);
    expect(await readDiskUsed(store, user.uuid)).toBe(bytes);

    const data = await dataOf(del(`/api/admin/users/${user.uuid}?confirm_delete=yes&transfer_data_to=${receiver.uuid}`));
    expect(data).toEqual({ transferred_to: receiver.uuid, folder: 'Tessa Transfer' });

    const holder = (await store.ctx.storage.sql.get('SELECT * FROM nodes WHERE parent_uuid = ? AND name = ?', [(await topLevelRow(store, receiver.uuid, 'home')).uuid, 'Tessa Transfer'])) as {
      uuid: string;
    };
    const listing = async (id: string) => (await seeder.client.listFolder(receiver.session, nodeId(id))).map((e) => e.name);
    expect(await listing(holder.uuid)).toEqual(['home', 'incoming', 'trash']);
    const home = (await seeder.client.listFolder(receiver.session, nodeId(holder.uuid))).find((e) => e.name === 'home');
    expect(await listing(home!.id)).toEqual(['Projects']);
    expect(await nodeRow(store, t.folder)).toMatchObject({ owner_uuid: receiver.uuid, parent_uuid: home!.id });
    expect(await nodeRow(store, t.file)).toMatchObject({ owner_uuid: receiver.uuid, revision: 2 });
    expect(await nodeRow(store, t.trashed)).toMatchObject({ owner_uuid: receiver.uuid, trashed_from: null, trashed_name: null, name: 'old.txt' });
    expect(await readDiskUsed(store, receiver.uuid)).toBe(bytes);
    expect(await readStoredBytes(store, receiver.uuid)).toBe(bytes);
    for (const content of t.contents) expect(await readBlobStored(store, blobHashOf(content))).toBe(true);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM nodes WHERE owner_uuid = ?', user.uuid)).toBe(0);
    const download = await seeder.client.download(receiver.session, nodeId(t.file), 'plan.txt');
    const chunks: Buffer[] = [];
    for await (const chunk of download.body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(t.contents[1]);
  });

  it('numbers the folder when the receiver has one of that name, and creates it even for an empty tree', async () => {
    const receiver = await newUser();
    await createFolder(seeder.client, receiver.session, 'home', 'Empty Eddie');
    const user = await seeder.user('Empty Eddie');
    expect(await dataOf(del(`/api/admin/users/${user.uuid}?confirm_delete=yes&transfer_data_to=${receiver.uuid}`))).toEqual({
      transferred_to: receiver.uuid,
      folder: 'Empty Eddie (2)',
    });
    const names = (await seeder.client.listFolder(receiver.session, nodeId('home'))).map((e) => e.name);
    expect(names).toEqual(['Empty Eddie', 'Empty Eddie (2)']);
  });

  it('transfers into a group’s home, counted against the group', async () => {
    const user = await seeder.user('Gwen Togroup');
    const group = await ga.group(unique('Receiving Group'), { quotaBytes: 100_000 });
    await fill(user);
    const bytes = await readStoredBytes(store, user.uuid);
    expect(await dataOf(del(`/api/admin/users/${user.uuid}?confirm_delete=yes&transfer_data_to=${group}`))).toEqual({ transferred_to: group, folder: 'Gwen Togroup' });
    expect((await readGroupUsage(store, group))?.disk_used).toBe(bytes);
    expect(await readStoredBytes(store, group)).toBe(bytes);
    expect(await readCountRows(store, "SELECT COUNT(*) AS n FROM nodes WHERE owner_uuid = ? AND owner_type = 'Group' AND top_kind IS NULL", group)).toBeGreaterThan(4);
  });

  it('refuses a receiver whose quota cannot hold the data (507) and changes nothing', async () => {
    const user = await seeder.user('Quinn Toobig');
    const receiver = await newUser(10);
    const t = await fill(user);
    const res = await del(`/api/admin/users/${user.uuid}?confirm_delete=yes&transfer_data_to=${receiver.uuid}`);
    expect(res.status).toBe(507);
    expect(res.body).toMatchObject({ code: 'quota_exceeded', msg: expect.stringMatching(/^transfer_data_to: /) });
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM users WHERE uuid = ?', user.uuid)).toBe(1);
    expect((await nodeRow(store, t.file))?.owner_uuid).toBe(user.uuid);
    expect(await readDiskUsed(store, receiver.uuid)).toBe(0);
    expect((await seeder.client.listFolder(receiver.session, nodeId('home'))).map((e) => e.name)).toEqual([]);
  });
});

describe('deleting a group', () => {
  async function filledGroup(): Promise<{ group: string; member: SeededUser; file: string; content: string }> {
    const group = await ga.group(unique('Doomed Group'));
    const member = await newUser();
    await ga.member(group, member.uuid, { node_permissions: ALL_NODE_PERMISSIONS });
    const content = unique('group bytes');
    const folder = await createFolder(seeder.client, member.session, `home:${group}`, 'Minutes');
    const file = await uploadFile(seeder.client, member.session, folder, 'm.txt', content);
    await uploadFile(seeder.client, member.session, 'home', 'private.txt', unique('private'));
    return { group, member, file, content };
  }

  it('removes its nodes, blobs, memberships, tags, avatar and endpoint, and leaves the members’ own data', async () => {
    const { group, member, file, content } = await filledGroup();
    await dataOf(call(seeder.client, admin, 'PUT', `/api/groups/${group}`, { avatar: dataUrl(pngBytes()) }));
    await dataOf(call(seeder.client, admin, 'POST', `/api/groups/${group}/tags`, { name: 'urgent', class: 'status' }));
    await dataOf(call(seeder.client, admin, 'POST', `/api/groups/${group}/webdrive`, { endpoint: 'doomed' }));
    const memberBytes = await readDiskUsed(store, member.uuid);

    expect((await del(`/api/admin/groups/${group}?confirm_delete=yes`)).body).toEqual({ status: 'success', msg: 'group deleted' });

    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM groups WHERE uuid = ?', group)).toBe(0);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM nodes WHERE owner_uuid = ?', group)).toBe(0);
    expect(await nodeRow(store, file)).toBeUndefined();
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(0);
    expect(await readBlobStored(store, blobHashOf(content))).toBe(false);
    for (const table of ['group_members', 'group_tags']) expect(await readCountRows(store, `SELECT COUNT(*) AS n FROM ${table} WHERE group_uuid = ?`, group)).toBe(0);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM avatars WHERE owner_uuid = ?', group)).toBe(0);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM webdrive_endpoints WHERE owner_uuid = ?', group)).toBe(0);
    expect(await readDiskUsed(store, member.uuid)).toBe(memberBytes);
    expect((await seeder.client.listFolder(member.session, nodeId('home'))).map((e) => e.name)).toEqual(['private.txt']);
    expect((await call(seeder.client, member.session, 'GET', `/api/groups/${group}`)).status).toBe(404);
  });

  it('hands its tree to a user or to another group with transfer_data_to', async () => {
    const first = await filledGroup();
    const receiver = await newUser();
    const bytes = await readStoredBytes(store, first.group);
    const groupName = ((await store.ctx.storage.sql.get('SELECT name FROM groups WHERE uuid = ?', [first.group])) as { name: string }).name;
    expect(await dataOf(del(`/api/admin/groups/${first.group}?confirm_delete=yes&transfer_data_to=${receiver.uuid}`))).toEqual({
      transferred_to: receiver.uuid,
      folder: groupName,
    });
    expect((await nodeRow(store, first.file))?.owner_uuid).toBe(receiver.uuid);
    expect(await readDiskUsed(store, receiver.uuid)).toBe(bytes);
    expect(await readBlobStored(store, blobHashOf(first.content))).toBe(true);

    const second = await filledGroup();
    const receivingGroup = await ga.group(unique('Heir Group'));
    expect((await del(`/api/admin/groups/${second.group}?confirm_delete=yes&transfer_data_to=${receivingGroup}`)).status).toBe(200);
    expect(await nodeRow(store, second.file)).toMatchObject({ owner_uuid: receivingGroup, owner_type: 'Group' });
    expect((await readGroupUsage(store, receivingGroup))?.disk_used).toBe(await readStoredBytes(store, receivingGroup));
    expect(await readStoredBytes(store, receivingGroup)).toBeGreaterThan(0);
  });
});
