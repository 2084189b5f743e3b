/**
 * The administrator's reads of users and their groups: GET /api/admin/users (each user with
 * their memberships), GET /api/admin/users/{uuid}, GET and POST /api/admin/users/{uuid}/groups;
 * and what deactivation does: login refused, every session ended (token and file access key),
 * back after reactivation. Stored rows are asserted, not only answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type StoreSession } from '../../../src/store-client/index.js';
import type { TestStore } from '../../helpers/start-store.js';
import { uploadFile, USER_PASSWORD, type Seeder } from '../../helpers/seed.js';
import { call, readCountRows, dataOf, readMembershipRow, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { pngBytes } from '../../helpers/images.js';

const UNKNOWN = '00000000-0000-4000-8000-0000000000cc';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let admin: StoreSession;

beforeAll(async () => {
  ({ store, seeder, ga, admin } = await startGroupStore());
});

afterAll(() => stopGroupStore({ seeder, store }));

describe('GET /api/admin/users', () => {
  it('lists every user of the organization by name, each with their group memberships', async () => {
    const hugo = await seeder.user('Hugo Listed', { quotaBytes: 4096 });
    const ida = await seeder.user('Ida Listed');
    const blue = await ga.group('Blue Team');
    const red = await ga.group('Red Team');
    await ga.member(red, hugo.uuid, { node_permissions: ['read', 'write'], tag_permissions: ['create'] });
    await ga.member(blue, hugo.uuid, { is_admin: true });
    await uploadFile(seeder.client, hugo.session, 'home', 'note.txt', 'twelve bytes');

    const list = await dataOf<Array<Record<string, unknown>>>(call(seeder.client, admin, 'GET', '/api/admin/users'));
    const names = list.map((u) => u.fullname);
    expect(names).toEqual(['Administrator', 'Hugo Listed', 'Ida Listed']);
    expect(list.find((u) => u.uuid === hugo.uuid)).toEqual({
      uuid: hugo.uuid,
      fullname: 'Hugo Listed',
      email: hugo.email,
      org_id: 'default',
      is_active: true,
      is_admin: false,
      disk_quota: 4096,
      disk_used: 12,
      twofa: false,
      comment: '',
      avatar: '',
      created: expect.any(Number),
      updated: expect.any(Number),
      groups: [
        { group_uuid: blue, group_name: 'Blue Team', is_admin: true, node_permissions: ['read'], tag_permissions: [], share_permissions: [], avatar: '' },
        { group_uuid: red, group_name: 'Red Team', is_admin: false, node_permissions: ['read', 'write'], tag_permissions: ['create'], share_permissions: [], avatar: '' },
      ],
    });
    expect(list.find((u) => u.uuid === ida.uuid)).toMatchObject({ groups: [] });
    expect(JSON.stringify(list)).not.toMatch(/password|scrypt|twofa_secret/);
  });
});

describe('GET /api/admin/users/{uuid}', () => {
  it('answers the same record as the list, with the avatar link when there is one', async () => {
    const jo = await seeder.user('Jo Detailed');
    await dataOf(call(seeder.client, admin, 'PUT', `/api/admin/users/${jo.uuid}`, { comment: 'watch this one' }));
    // Users set their avatar through PUT /api/user (issue 6); the row it stores is written here.
    (await store.ctx.storage.sql.run("INSERT INTO avatars (owner_uuid, content_type, bytes, version, updated) VALUES (?, 'image/png', ?, 'v1', 1)", [jo.uuid, pngBytes()]));
    const data = await dataOf(call(seeder.client, admin, 'GET', `/api/admin/users/${jo.uuid.toUpperCase()}`));
    expect(data).toMatchObject({ uuid: jo.uuid, comment: 'watch this one', avatar: `/avatars/${jo.uuid}/v1`, groups: [] });
  });

  it('answers 404 for an unknown or malformed uuid', async () => {
    for (const id of [UNKNOWN, 'nope']) {
      for (const path of [`/api/admin/users/${id}`, `/api/admin/users/${id}/groups`]) {
        expect((await call(seeder.client, admin, 'GET', path)).body).toEqual({ status: 'error', code: 'not_found', msg: 'user not found' });
      }
    }
  });
});

describe('/api/admin/users/{uuid}/groups', () => {
  it('assigns groups with their permissions, updates an existing membership, and leaves the others', async () => {
    const kim = await seeder.user('Kim Assigned');
    const one = await ga.group('Group One');
    const two = await ga.group('Group Two');
    const three = await ga.group('Group Three');
    await ga.member(three, kim.uuid, { node_permissions: ['read', 'download'] });
    const answer = await dataOf<Array<{ group_uuid: string }>>(
      call(seeder.client, admin, 'POST', `/api/admin/users/${kim.uuid}/groups`, {
        groups: {
          [one]: { is_admin: true },
          [two.toUpperCase()]: { node_permissions: ['read', 'write', 'delete'], share_permissions: ['private_create'] },
        },
      }),
    );
    expect(answer.map((g) => g.group_uuid)).toEqual([one, three, two]);
    expect(await readMembershipRow(store, one, kim.uuid)).toMatchObject({ is_admin: 1, node_permissions: '["read"]' });
    expect(await readMembershipRow(store, two, kim.uuid)).toMatchObject({ is_admin: 0, node_permissions: '["read","write","delete"]', share_permissions: '["private_create"]' });
    expect(await readMembershipRow(store, three, kim.uuid)).toMatchObject({ node_permissions: '["read","download"]' });

    await dataOf(call(seeder.client, admin, 'POST', `/api/admin/users/${kim.uuid}/groups`, { groups: { [three]: { tag_permissions: ['create'] } } }));
    expect(await readMembershipRow(store, three, kim.uuid)).toMatchObject({ node_permissions: '["read","download"]', tag_permissions: '["create"]' });
    const read = await dataOf<Array<Record<string, unknown>>>(call(seeder.client, admin, 'GET', `/api/admin/users/${kim.uuid}/groups`));
    expect(read).toContainEqual({
      group_uuid: three,
      group_name: 'Group Three',
      is_admin: false,
      node_permissions: ['read', 'download'],
      tag_permissions: ['create'],
      share_permissions: [],
      avatar: '',
    });
  });

  it('changes nothing when one group is unknown (404 naming it) or one permission is invalid (400)', async () => {
    const lea = await seeder.user('Lea Allornothing');
    const real = await ga.group('Real Group');
    const before = await readCountRows(store, 'SELECT COUNT(*) AS n FROM group_members WHERE user_uuid = ?', lea.uuid);
    const unknown = await call(seeder.client, admin, 'POST', `/api/admin/users/${lea.uuid}/groups`, { groups: { [real]: {}, [UNKNOWN]: {} } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ msg: `groups.${UNKNOWN}: no such group in the user's organization` });
    const bad = await call(seeder.client, admin, 'POST', `/api/admin/users/${lea.uuid}/groups`, { groups: { [real]: { node_permissions: ['admin'] } } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ msg: expect.stringMatching(new RegExp(`^groups\\.${real}\\.node_permissions\\.0: unknown permission "admin"`)) });
    for (const body of [{}, { groups: [] }, { groups: {}, extra: 1 }]) {
      expect((await call(seeder.client, admin, 'POST', `/api/admin/users/${lea.uuid}/groups`, body)).status).toBe(400);
    }
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM group_members WHERE user_uuid = ?', lea.uuid)).toBe(before);
  });
});

describe('deactivating a user', () => {
  it('refuses their login, ends every session and file access key at once, and reactivation lets them back', async () => {
    const max = await seeder.user('Max Deactivated');
    const second = await seeder.client.login(max.email, USER_PASSWORD);
    const file = await uploadFile(seeder.client, max.session, 'home', 'mine.txt', 'mine');
    const downloadPath = `/resources/auth/download/${second.fileAccessKey}/${file}/999999999999999/mine.txt`;
    expect((await seeder.client.http.requestRaw({ method: 'GET', path: downloadPath })).status).toBe(200);

    await dataOf(call(seeder.client, admin, 'PUT', `/api/admin/users/${max.uuid}`, { is_active: false }));
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM sessions WHERE user_uuid = ? AND revoked IS NULL', max.uuid)).toBe(0);
    for (const session of [max.session, second]) {
      expect((await call(seeder.client, session, 'GET', '/api/nodes/home/dirlist')).status).toBe(401);
    }
    expect((await seeder.client.http.requestRaw({ method: 'GET', path: downloadPath })).status).toBe(401);
    await expect(seeder.client.login(max.email, USER_PASSWORD)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(await dataOf(call(seeder.client, admin, 'GET', `/api/admin/users/${max.uuid}`))).toMatchObject({ is_active: false });

    await dataOf(call(seeder.client, admin, 'PUT', `/api/admin/users/${max.uuid}`, { is_active: true }));
    const back = await seeder.client.login(max.email, USER_PASSWORD);
    expect((await seeder.client.listFolder(back, nodeId('home'))).map((e) => e.name)).toEqual(['mine.txt']);
    // The sessions ended before stay ended.
    expect((await call(seeder.client, max.session, 'GET', '/api/user')).status).toBe(401);
  });

  it('turns two-factor authentication off with twofa false', async () => {
    const nia = await seeder.user('Nia Twofactor');
    (await store.ctx.storage.sql.run("UPDATE users SET twofa = 1, twofa_secret = 'JBSWY3DPEHPK3PXP' WHERE uuid = ?", [nia.uuid]));
    expect(await dataOf(call(seeder.client, admin, 'GET', `/api/admin/users/${nia.uuid}`))).toMatchObject({ twofa: true });
    await dataOf(call(seeder.client, admin, 'PUT', `/api/admin/users/${nia.uuid}`, { twofa: false }));
    expect((await store.ctx.storage.sql.get('SELECT twofa, twofa_secret FROM users WHERE uuid = ?', [nia.uuid]))).toEqual({ twofa: 0, twofa_secret: null });
    expect(await dataOf(call(seeder.client, admin, 'GET', `/api/admin/users/${nia.uuid}`))).toMatchObject({ twofa: false });
  });
});
