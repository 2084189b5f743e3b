/**
 * Groups for members (docs/api.md "Groups for members"): the caller's groups and show=all, details,
 * the group administrators' profile update (every field and rule), members and permissions,
 * tags with configured classes and the create permission, and the group WebDrive endpoint.
 * Non-members get 404 on every group endpoint, members who are not group administrators 403 on
 * the (admin) ones; both change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/store-client/index.js';
import type { TestStore } from '../../helpers/start-store.js';
import type { Seeder, SeededUser } from '../../helpers/seed.js';
import { call, readCountRows, dataOf, readMembershipRow, startGroupStore, stopGroupStore, type GroupAdmin, type Method } from '../../helpers/groups.js';
import { dataUrl, jpegBytes, pngBytes } from '../../helpers/images.js';

const UNKNOWN = '00000000-0000-4000-8000-0000000000ee';
const GROUP_NOT_FOUND = { status: 'error', code: 'not_found', msg: 'group not found' };
const NOT_GROUP_ADMIN = { status: 'error', code: 'forbidden', msg: 'group administrator privileges required' };

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let group: string;
let boss: SeededUser; // group administrator
let member: SeededUser; // plain member: read only
let tagger: SeededUser; // plain member with the create tag permission
let outsider: SeededUser;

const api = (s: StoreSession, method: Method, path: string, json?: unknown) => call(seeder.client, s, method, path, json);

async function groupRow(uuid = group): Promise<Record<string, unknown>> {
  return (await store.ctx.storage.sql.get('SELECT * FROM groups WHERE uuid = ?', [uuid])) as Record<string, unknown>;
}

beforeAll(async () => {
  ({ store, seeder, ga } = await startGroupStore({ flags: { 'store.tagClasses': ['general', 'status'], 'bridge.publicUrl': 'https://dav.example.org' } }));
  group = await ga.group('Design');
  boss = await seeder.user('Bea Boss');
  member = await seeder.user('Mo Member');
  tagger = await seeder.user('Tom Tagger');
  outsider = await seeder.user('Otto Outside');
  await ga.member(group, boss.uuid, { is_admin: true, node_permissions: ['read', 'write'] });
  await ga.member(group, member.uuid, { node_permissions: ['read'] });
  await ga.member(group, tagger.uuid, { node_permissions: ['read'], tag_permissions: ['create'], share_permissions: ['public_create'] });
});

afterAll(() => stopGroupStore({ seeder, store }));

describe('GET /api/groups', () => {
  it('lists the caller’s groups as Group entries of docs/api.md, by name', async () => {
    const other = await ga.group('Alpha Squad');
    await ga.member(other, tagger.uuid, { is_admin: true, node_permissions: [] });
    const list = await dataOf<Array<Record<string, unknown>>>(api(tagger.session, 'GET', '/api/groups'));
    expect(list).toEqual([
      { group_uuid: other, group_name: 'Alpha Squad', is_admin: true, node_permissions: [], tag_permissions: [], share_permissions: [], avatar: '' },
      { group_uuid: group, group_name: 'Design', is_admin: false, node_permissions: ['read'], tag_permissions: ['create'], share_permissions: ['public_create'], avatar: '' },
    ]);
    expect(await dataOf(api(outsider.session, 'GET', '/api/groups'))).toEqual([]);
  });

  it('refuses show=all while store.shareWithAllGroups is off (403), and any other show value (400)', async () => {
    expect((await api(member.session, 'GET', '/api/groups?show=all')).body).toEqual({
      status: 'error',
      code: 'forbidden',
      msg: 'show: listing all groups is disabled on this server (store.shareWithAllGroups)',
    });
    expect((await api(member.session, 'GET', '/api/groups?show=everything')).body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/^show: /) });
  });

  it('lists every group of the organization with show=all when the setting allows it', async () => {
    const open = await startGroupStore({ flags: { 'store.shareWithAllGroups': true } });
    const { seeder: s, ga: g } = open;
    try {
      const mine = await g.group('Mine');
      const theirs = await g.group('Theirs');
      const user = await s.user('Sally Showall');
      await g.member(mine, user.uuid, { node_permissions: ['read', 'write'] });
      const all = await dataOf<Array<Record<string, unknown>>>(call(s.client, user.session, 'GET', '/api/groups?show=all'));
      expect(all.map((e) => [e.group_uuid, e.node_permissions])).toEqual([
        [mine, ['read', 'write']],
        [theirs, []],
      ]);
      expect((await dataOf<unknown[]>(call(s.client, user.session, 'GET', '/api/groups'))).length).toBe(1);
    } finally {
      await stopGroupStore(open);
    }
  });
});

describe('GET /api/groups/{uuid}', () => {
  it('answers the group profile with the caller’s own permissions', async () => {
    const data = await dataOf(api(member.session, 'GET', `/api/groups/${group}`));
    expect(data).toEqual({
      group_uuid: group,
      group_name: expect.any(String),
      description: expect.any(String),
      avatar: expect.any(String),
      disk_quota: 0,
      disk_used: 0,
      accept_incoming: expect.stringMatching(/^(members|admins)$/),
      private_shares_notify: expect.stringMatching(/^(members|admins)$/),
      member_count: expect.any(Number),
      created: expect.any(Number),
      updated: expect.any(Number),
      is_admin: false,
      node_permissions: ['read'],
      tag_permissions: [],
      share_permissions: [],
    });
    expect(await dataOf(api(boss.session, 'GET', `/api/groups/${group}`))).toMatchObject({ is_admin: true, node_permissions: ['read', 'write'] });
    expect(await dataOf(api(seeder.admin, 'GET', `/api/groups/${group}`))).toMatchObject({ is_admin: true, node_permissions: [] });
  });
});

describe('PUT /api/groups/{uuid} (group administrators)', () => {
  it('changes name, description, inbox policies and avatar, answering the details', async () => {
    const data = await dataOf(
      api(boss.session, 'PUT', `/api/groups/${group}`, {
        name: 'Design Studio',
        description: 'Everything visual',
        accept_incoming: 'members',
        private_shares_notify: 'members',
        avatar: dataUrl(pngBytes(4, 4)),
      }),
    );
    expect(data).toMatchObject({ group_name: 'Design Studio', description: 'Everything visual', accept_incoming: 'members', private_shares_notify: 'members' });
    const avatar = String(data.avatar);
    expect(avatar).toMatch(new RegExp(`^/avatars/${group}/[\\w-]+$`));
    expect(await groupRow()).toMatchObject({ name: 'Design Studio', description: 'Everything visual', accept_incoming: 'members', private_shares_notify: 'members' });
    const served = await seeder.client.http.requestRaw({ method: 'GET', path: avatar });
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    // The avatar shows in the members' group list too; a JPEG replaces it, '' removes it.
    expect((await dataOf<Array<{ avatar: string }>>(api(member.session, 'GET', '/api/groups')))[0]?.avatar).toBe(avatar);
    const jpeg = await dataOf(api(boss.session, 'PUT', `/api/groups/${group}`, { avatar: dataUrl(jpegBytes(), 'image/jpeg') }));
    expect(jpeg.avatar).not.toBe(avatar);
    expect((await store.ctx.storage.sql.get('SELECT content_type FROM avatars WHERE owner_uuid = ?', [group]))).toEqual({ content_type: 'image/jpeg' });
    expect(await dataOf(api(boss.session, 'PUT', `/api/groups/${group}`, { avatar: '' }))).toMatchObject({ avatar: '' });
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM avatars WHERE owner_uuid = ?', group)).toBe(0);
    expect((await seeder.client.http.requestRaw({ method: 'GET', path: avatar })).status).toBe(404);
  });

  it.each([
    ['a name of 2 characters', { name: 'ab' }, /^name: /],
    ['a description of 2 characters', { description: 'ab' }, /^description: /],
    ['a description of 1025 characters', { description: 'd'.repeat(1025) }, /^description: /],
    ['accept_incoming "everyone"', { accept_incoming: 'everyone' }, /^accept_incoming: .*"members" or "admins"/],
    ['private_shares_notify true', { private_shares_notify: true }, /^private_shares_notify: /],
    ['an avatar that is no data URL', { avatar: 'https://example.org/a.png' }, /^avatar: /],
    ['an avatar of GIF bytes', { avatar: dataUrl(Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00', 'latin1'), 'image/gif') }, /^avatar: /],
    ['an empty broadcast_message', { broadcast_message: '   ' }, /^broadcast_message: /],
    ['disk_quota (an administrator field)', { disk_quota: 5 }, /disk_quota/],
    ['an unknown key', { colour: 'red' }, /colour/],
  ])('refuses %s with 400 naming the field, changing nothing (not even the valid fields)', async (_what, body, msg) => {
    const before = await groupRow();
    const res = await api(boss.session, 'PUT', `/api/groups/${group}`, { description: 'Should not stick', ...body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(msg) });
    expect(await groupRow()).toEqual(before);
  });

  it('answers 409 for the name of another group of the organization', async () => {
    await ga.group('Taken By Others');
    const res = await api(boss.session, 'PUT', `/api/groups/${group}`, { name: 'taken by others' });
    expect(res.body).toMatchObject({ code: 'group_name_taken', msg: expect.stringMatching(/^name: /) });
  });

  it('refuses broadcast_message without mail configured (409 email_not_configured), saving nothing', async () => {
    const before = await groupRow();
    const res = await api(boss.session, 'PUT', `/api/groups/${group}`, { broadcast_message: 'Hello all', description: 'Changed too' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      status: 'error',
      code: 'email_not_configured',
      msg: 'broadcast_message: email is not configured on this server (mail.host)',
    });
    expect(await groupRow()).toEqual(before);
  });
});

describe('/api/groups/{uuid}/users', () => {
  it('lets members read the member list and one member’s permissions', async () => {
    const list = await dataOf<Array<{ user_uuid: string }>>(api(member.session, 'GET', `/api/groups/${group}/users`));
    expect(list.map((m) => m.user_uuid).sort()).toEqual([boss.uuid, member.uuid, tagger.uuid].sort());
    expect(await dataOf(api(member.session, 'GET', `/api/groups/${group}/users/${tagger.uuid}`))).toMatchObject({
      user_uuid: tagger.uuid,
      fullname: 'Tom Tagger',
      is_admin: false,
      node_permissions: ['read'],
      tag_permissions: ['create'],
      share_permissions: ['public_create'],
    });
    expect((await api(member.session, 'GET', `/api/groups/${group}/users/${outsider.uuid}`)).body).toMatchObject({ code: 'not_found', msg: 'member not found' });
  });

  it('lets group administrators add, update and remove members', async () => {
    const newcomer = await seeder.user('Nell Newcomer');
    expect(await dataOf(api(boss.session, 'POST', `/api/groups/${group}/users`, { user: newcomer.uuid, permissions: { node_permissions: ['read', 'download'] } }))).toMatchObject({
      user_uuid: newcomer.uuid,
      node_permissions: ['read', 'download'],
    });
    expect(await dataOf(api(boss.session, 'PUT', `/api/groups/${group}/users/${newcomer.uuid}`, { is_admin: true }))).toMatchObject({
      is_admin: true,
      node_permissions: ['read', 'download'],
    });
    expect(await readMembershipRow(store, group, newcomer.uuid)).toMatchObject({ is_admin: 1, node_permissions: '["read","download"]' });
    // As a group administrator now, the newcomer may change the group.
    expect((await api(newcomer.session, 'PUT', `/api/groups/${group}`, { description: 'Newcomer was here' })).status).toBe(200);
    await dataOf(api(boss.session, 'DELETE', `/api/groups/${group}/users/${newcomer.uuid}`));
    expect(await readMembershipRow(store, group, newcomer.uuid)).toBeUndefined();
    expect((await api(newcomer.session, 'GET', `/api/groups/${group}`)).body).toEqual(GROUP_NOT_FOUND);
  });

  it('validates as the administrator endpoints do (400 naming the field, 409 already_member)', async () => {
    const res = await api(boss.session, 'PUT', `/api/groups/${group}/users/${member.uuid}`, { node_permissions: ['read', 'own'] });
    expect(res.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/^node_permissions\.1: unknown permission "own"/) });
    expect((await api(boss.session, 'POST', `/api/groups/${group}/users`, { user: member.uuid })).body).toMatchObject({ code: 'already_member' });
    expect(await readMembershipRow(store, group, member.uuid)).toMatchObject({ node_permissions: '["read"]' });
  });
});

describe('/api/groups/{uuid}/tags', () => {
  it('lets a member with the create tag permission create a tag of a configured class', async () => {
    const data = await dataOf(api(tagger.session, 'POST', `/api/groups/${group}/tags`, { name: 'Draft', class: 'status' }));
    expect(data).toEqual({ name: 'Draft', class: 'status', creator_uuid: tagger.uuid, created: expect.any(Number) });
    expect((await store.ctx.storage.sql.all('SELECT name, class, creator_uuid FROM group_tags WHERE group_uuid = ?', [group]))).toEqual([
      { name: 'Draft', class: 'status', creator_uuid: tagger.uuid },
    ]);
  });

  it('lets group administrators create tags without the permission, and refuses members without it (403)', async () => {
    await dataOf(api(boss.session, 'POST', `/api/groups/${group}/tags`, { name: 'Approved', class: 'status' }));
    const res = await api(member.session, 'POST', `/api/groups/${group}/tags`, { name: 'Mine', class: 'general' });
    expect(res.body).toEqual({ status: 'error', code: 'forbidden', msg: 'the create tag permission is required' });
    expect(await readCountRows(store, "SELECT COUNT(*) AS n FROM group_tags WHERE name = 'Mine'")).toBe(0);
  });

  it.each([
    ['a class not configured', { name: 'Secret', class: 'confidential' }, 400, /^class: unknown tag class "confidential"; allowed: general, status$/],
    ['an empty name', { name: ' ', class: 'general' }, 400, /^name: /],
    ['a name of 65 characters', { name: 'n'.repeat(65), class: 'general' }, 400, /^name: /],
    ['no class', { name: 'Classless' }, 400, /^class: /],
    ['a name in use, in another case', { name: 'DRAFT', class: 'general' }, 409, /^name: /],
  ])('refuses %s, creating nothing', async (_what, body, status, msg) => {
    const before = await readCountRows(store, 'SELECT COUNT(*) AS n FROM group_tags');
    const res = await api(tagger.session, 'POST', `/api/groups/${group}/tags`, body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ status: 'error', msg: expect.stringMatching(msg) });
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM group_tags')).toBe(before);
  });

  it('lists the tags by name to members, at most `limit` of them (0: all)', async () => {
    await dataOf(api(boss.session, 'POST', `/api/groups/${group}/tags`, { name: 'backlog', class: 'general' }));
    const names = async (query: string) => (await dataOf<Array<{ name: string }>>(api(member.session, 'GET', `/api/groups/${group}/tags${query}`))).map((t) => t.name);
    expect(await names('')).toEqual(['Approved', 'backlog', 'Draft']);
    expect(await names('?limit=0')).toEqual(['Approved', 'backlog', 'Draft']);
    expect(await names('?limit=2')).toEqual(['Approved', 'backlog']);
    for (const limit of ['-1', '1.5', 'many']) {
      expect((await api(member.session, 'GET', `/api/groups/${group}/tags?limit=${limit}`)).body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/^limit: /) });
    }
  });
});

describe('/api/groups/{uuid}/webdrive', () => {
  it('answers nulls while there is none, to members too', async () => {
    expect(await dataOf(api(member.session, 'GET', `/api/groups/${group}/webdrive`))).toEqual({ endpoint: null, url: null, show_url_to_group_members: true });
  });

  it('lets group administrators set it; members read it unless it is hidden from them (403)', async () => {
    expect(await dataOf(api(boss.session, 'POST', `/api/groups/${group}/webdrive`, { endpoint: 'design', show_url_to_group_members: false }))).toEqual({
      endpoint: 'design',
      url: 'https://dav.example.org/webdrive/design/',
      show_url_to_group_members: false,
    });
    expect((await store.ctx.storage.sql.get('SELECT endpoint, owner_type, show_url_to_group_members FROM webdrive_endpoints WHERE owner_uuid = ?', [group]))).toEqual({
      endpoint: 'design',
      owner_type: 'Group',
      show_url_to_group_members: 0,
    });
    expect((await api(member.session, 'GET', `/api/groups/${group}/webdrive`)).body).toMatchObject({ status: 'error', code: 'forbidden' });
    expect(await dataOf(api(boss.session, 'GET', `/api/groups/${group}/webdrive`))).toMatchObject({ endpoint: 'design', show_url_to_group_members: false });
    await dataOf(api(boss.session, 'POST', `/api/groups/${group}/webdrive`, { endpoint: 'design' }));
    expect(await dataOf(api(member.session, 'GET', `/api/groups/${group}/webdrive`))).toEqual({
      endpoint: 'design',
      url: 'https://dav.example.org/webdrive/design/',
      show_url_to_group_members: true,
    });
  });

  it('shares one namespace with users: a name held by a user or a group is 409 for the other', async () => {
    await dataOf(api(outsider.session, 'POST', '/api/user/webdrive', { endpoint: 'otto' }));
    expect((await api(boss.session, 'POST', `/api/groups/${group}/webdrive`, { endpoint: 'otto' })).body).toMatchObject({ code: 'endpoint_taken' });
    expect((await api(outsider.session, 'POST', '/api/user/webdrive', { endpoint: 'design' })).body).toMatchObject({ code: 'endpoint_taken' });
    expect((await store.ctx.storage.sql.get('SELECT endpoint FROM webdrive_endpoints WHERE owner_uuid = ?', [group]))).toEqual({ endpoint: 'design' });
  });

  it('refuses a malformed endpoint or flag (400 naming the field)', async () => {
    for (const [body, msg] of [
      [{ endpoint: 'Design' }, /^endpoint: /],
      [{ endpoint: 'ab' }, /^endpoint: /],
      [{ endpoint: 'admin' }, /^endpoint: .*reserved/],
      [{ endpoint: 'design2', show_url_to_group_members: 'no' }, /^show_url_to_group_members: /],
      [{}, /^endpoint: /],
    ] as const) {
      expect((await api(boss.session, 'POST', `/api/groups/${group}/webdrive`, body)).body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(msg) });
    }
  });

  it('lets group administrators delete it, freeing the name', async () => {
    expect((await dataOf(api(boss.session, 'DELETE', `/api/groups/${group}/webdrive`)))).toBeUndefined();
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM webdrive_endpoints WHERE owner_uuid = ?', group)).toBe(0);
    await dataOf(api(outsider.session, 'POST', '/api/user/webdrive', { endpoint: 'design' }));
    expect((await api(boss.session, 'DELETE', `/api/groups/${group}/webdrive`)).body).toEqual({ status: 'success', msg: 'no webdrive endpoint to delete' });
  });
});

describe('refusals on every group endpoint', () => {
  /** Every /api/groups/{uuid} endpoint of this issue, with a plausible body; `admin` marks the (admin) ones. */
  function endpoints(g: string): Array<{ method: Method; path: string; body?: unknown; admin: boolean }> {
    return [
      { method: 'GET', path: `/api/groups/${g}`, admin: false },
      { method: 'PUT', path: `/api/groups/${g}`, body: { description: 'Hijacked group' }, admin: true },
      { method: 'GET', path: `/api/groups/${g}/users`, admin: false },
      { method: 'POST', path: `/api/groups/${g}/users`, body: { user: outsider.uuid, permissions: { is_admin: true } }, admin: true },
      { method: 'GET', path: `/api/groups/${g}/users/${boss.uuid}`, admin: false },
      { method: 'PUT', path: `/api/groups/${g}/users/${member.uuid}`, body: { is_admin: true }, admin: true },
      { method: 'DELETE', path: `/api/groups/${g}/users/${boss.uuid}`, admin: true },
      { method: 'GET', path: `/api/groups/${g}/tags`, admin: false },
      { method: 'POST', path: `/api/groups/${g}/tags`, body: { name: 'Hijack', class: 'general' }, admin: false },
      { method: 'GET', path: `/api/groups/${g}/webdrive`, admin: false },
      { method: 'POST', path: `/api/groups/${g}/webdrive`, body: { endpoint: 'hijack' }, admin: true },
      { method: 'DELETE', path: `/api/groups/${g}/webdrive`, admin: true },
    ];
  }

  async function state(): Promise<unknown> {
    const { sql } = store.ctx.storage;
    return {
      group: await groupRow(),
      members: await sql.all('SELECT * FROM group_members WHERE group_uuid = ? ORDER BY user_uuid', [group]),
      tags: await sql.all('SELECT * FROM group_tags WHERE group_uuid = ? ORDER BY name', [group]),
      endpoint: await sql.get('SELECT * FROM webdrive_endpoints WHERE owner_uuid = ?', [group]),
    };
  }

  it('answers 403 to a member who is not a group administrator on every (admin) endpoint, changing nothing', async () => {
    await dataOf(api(boss.session, 'POST', `/api/groups/${group}/webdrive`, { endpoint: 'studio' }));
    const before = await state();
    for (const at of endpoints(group).filter((e) => e.admin)) {
      const res = await api(member.session, at.method, at.path, at.body);
      expect({ ...at, status: res.status, body: res.body }).toEqual({ ...at, status: 403, body: NOT_GROUP_ADMIN });
    }
    expect(await state()).toEqual(before);
  });

  it('answers the 404 of an unknown group to non-members, members of another group and other-organization admins', async () => {
    const otherGroup = await ga.group('Elsewhere Team');
    const elsewhere = await seeder.user('Eve Elsewhere');
    await ga.member(otherGroup, elsewhere.uuid, { is_admin: true, node_permissions: ['read'] });
    await ga.organization('faraway');
    await seeder.client.createUser(seeder.admin, { fullname: 'Fay Faraway', email: 'fay@example.test', password: 'Secret-Passw0rd', isAdmin: true }, 'faraway');
    const fay = await seeder.client.login('fay@example.test', 'Secret-Passw0rd');
    const before = await state();
    for (const [who, session] of [['a non-member', outsider.session], ['another group’s administrator', elsewhere.session], ['another organization’s administrator', fay]] as const) {
      for (const at of endpoints(group)) {
        const res = await api(session, at.method, at.path, at.body);
        expect({ who, ...at, status: res.status, body: res.body }).toEqual({ who, ...at, status: 404, body: GROUP_NOT_FOUND });
        const unknown = await api(session, at.method, at.path.replace(group, UNKNOWN), at.body);
        expect({ who, ...at, status: unknown.status, body: unknown.body }).toEqual({ who, ...at, status: 404, body: GROUP_NOT_FOUND });
      }
    }
    expect(await state()).toEqual(before);
  });
});
