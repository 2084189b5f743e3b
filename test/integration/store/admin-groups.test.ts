/**
 * The administrator's group endpoints: create, list, details, update (name, description and
 * the quota rule against real usage) and the members with their permissions, through
 * /api/admin/groups. And every /api/admin endpoint refused (403) to a caller without
 * administrator privileges, before anything else is looked at. Stored rows are asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/store-client/index.js';
import type { TestStore } from '../../helpers/start-store.js';
import { uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { call, readCountRows, dataOf, readGroupUsage, readMembershipRow, startGroupStore, stopGroupStore, type GroupAdmin, type Method } from '../../helpers/groups.js';

const UNKNOWN = '00000000-0000-4000-8000-0000000000bb';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let admin: StoreSession;

const api = (method: Method, path: string, json?: unknown, s: StoreSession = admin) => call(seeder.client, s, method, path, json);

async function groupRow(uuid: string): Promise<Record<string, unknown> | undefined> {
  return (await store.ctx.storage.sql.get('SELECT * FROM groups WHERE uuid = ?', [uuid])) as Record<string, unknown> | undefined;
}

beforeAll(async () => {
  ({ store, seeder, ga, admin } = await startGroupStore());
});

afterAll(() => stopGroupStore({ seeder, store }));

describe('POST /api/admin/groups', () => {
  it('creates the group with its seven top-level folders and answers its record', async () => {
    const created = store.clock.now();
    const data = await dataOf(api('POST', '/api/admin/groups', { name: '  Finance  ', disk_quota: 5000, description: 'Money matters' }));
    expect(data).toEqual({
      group_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      group_name: 'Finance',
      description: 'Money matters',
      avatar: '',
      disk_quota: 5000,
      disk_used: 0,
      accept_incoming: 'admins',
      private_shares_notify: 'admins',
      member_count: 0,
      created: expect.any(Number),
      updated: expect.any(Number),
      org_id: 'default',
    });
    const uuid = String(data.group_uuid);
    expect(await groupRow(uuid)).toMatchObject({ org_id: 'default', name: 'Finance', disk_quota: 5000, disk_used: 0 });
    expect(Number((await groupRow(uuid))?.created)).toBeGreaterThanOrEqual(created);
    expect(await readCountRows(store, "SELECT COUNT(*) AS n FROM nodes WHERE owner_uuid = ? AND owner_type = 'Group' AND top_kind IS NOT NULL", uuid)).toBe(7);
  });

  it.each([
    ['a name of 2 characters', { name: 'ab', disk_quota: 0 }, /^name: .*at least 3/],
    ['a name of spaces around 2 characters', { name: '  ab  ', disk_quota: 0 }, /^name: /],
    ['a name that is not a string', { name: 42, disk_quota: 0 }, /^name: /],
    ['no disk_quota', { name: 'No Quota' }, /^disk_quota: /],
    ['disk_quota -1 (for users only)', { name: 'Minus One', disk_quota: -1 }, /^disk_quota: /],
    ['a fractional disk_quota', { name: 'Fraction', disk_quota: 0.5 }, /^disk_quota: /],
    ['a description of 2 characters', { name: 'Short Desc', disk_quota: 0, description: 'ab' }, /^description: /],
    ['an unknown key', { name: 'Extra Key', disk_quota: 0, owner: 'me' }, /owner/],
  ])('answers 400 naming the field for %s, and creates nothing', async (_what, body, msg) => {
    const before = await readCountRows(store, 'SELECT COUNT(*) AS n FROM groups');
    const res = await api('POST', '/api/admin/groups', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(msg) });
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM groups')).toBe(before);
  });

  it('answers 409 group_name_taken for a name in use, whatever its case', async () => {
    await ga.group('Legal');
    const res = await api('POST', '/api/admin/groups', { name: 'LEGAL', disk_quota: 0 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'group_name_taken', msg: expect.stringMatching(/^name: /) });
    expect(await readCountRows(store, "SELECT COUNT(*) AS n FROM groups WHERE lower(name) = 'legal'")).toBe(1);
  });
});

describe('GET /api/admin/groups and /api/admin/groups/{uuid}', () => {
  it('lists the organization’s groups by name, and reads one', async () => {
    const zebra = await ga.group('Zebra Team');
    const alpha = await ga.group('alpha team');
    const list = await dataOf<Array<{ group_uuid: string; group_name: string }>>(api('GET', '/api/admin/groups'));
    const names = list.map((g) => g.group_name);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })));
    expect(list.map((g) => g.group_uuid)).toEqual(expect.arrayContaining([zebra, alpha]));
    expect(await dataOf(api('GET', `/api/admin/groups/${alpha.toUpperCase()}`))).toMatchObject({ group_uuid: alpha, group_name: 'alpha team', org_id: 'default' });
  });

  it('answers 404 for an unknown or malformed group uuid on every group endpoint', async () => {
    for (const id of [UNKNOWN, 'not-a-uuid']) {
      for (const [method, path, body] of [
        ['GET', `/api/admin/groups/${id}`, undefined],
        ['PUT', `/api/admin/groups/${id}`, { name: 'Nope' }],
        ['DELETE', `/api/admin/groups/${id}?confirm_delete=yes`, undefined],
        ['GET', `/api/admin/groups/${id}/users`, undefined],
      ] as const) {
        const res = await api(method, path, body);
        expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: { status: 'error', code: 'not_found', msg: 'group not found' } });
      }
    }
  });
});

describe('PUT /api/admin/groups/{uuid}', () => {
  it('changes name, description and quota and bumps updated', async () => {
    const uuid = await ga.group('Old Name');
    const before = await groupRow(uuid);
    store.clock.advance(1000);
    const data = await dataOf(api('PUT', `/api/admin/groups/${uuid}`, { name: 'New Name', description: 'x'.repeat(1024), disk_quota: 99 }));
    expect(data).toMatchObject({ group_name: 'New Name', description: 'x'.repeat(1024), disk_quota: 99 });
    expect(await groupRow(uuid)).toMatchObject({ name: 'New Name', disk_quota: 99 });
    expect(Number((await groupRow(uuid))?.updated)).toBeGreaterThan(Number(before?.updated));
    expect(await dataOf(api('PUT', `/api/admin/groups/${uuid}`, {}))).toMatchObject({ group_name: 'New Name' });
  });

  it.each([
    ['a description of 1025 characters', { description: 'x'.repeat(1025) }, /^description: /],
    ['a description of 2 characters', { description: 'ab' }, /^description: /],
    ['a name of 2 characters', { name: 'ab' }, /^name: /],
    ['disk_quota -1', { disk_quota: -1 }, /^disk_quota: /],
    ['an avatar (a member endpoint field)', { avatar: '' }, /avatar/],
  ])('answers 400 for %s and changes nothing', async (_what, body, msg) => {
    const uuid = await ga.group();
    const before = await groupRow(uuid);
    const res = await api('PUT', `/api/admin/groups/${uuid}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(msg) });
    expect(await groupRow(uuid)).toEqual(before);
  });

  it('wants disk_quota above what the group stores, unless it is 0', async () => {
    const uuid = await ga.group('Stored Group', { quotaBytes: 10_000 });
    const member = await seeder.user('Stella Storer');
    await ga.member(uuid, member.uuid, { node_permissions: ['read', 'write'] });
    await uploadFile(seeder.client, member.session, `home:${uuid}`, 'kept.bin', Buffer.alloc(700, 7));
    expect(await readGroupUsage(store, uuid)).toEqual({ disk_quota: 10_000, disk_used: 700 });
    for (const quota of [699, 700]) {
      const res = await api('PUT', `/api/admin/groups/${uuid}`, { disk_quota: quota });
      expect(res.body).toMatchObject({ code: 'invalid_request', msg: 'disk_quota must exceed current usage (700 bytes) unless it is 0' });
    }
    expect((await readGroupUsage(store, uuid))?.disk_quota).toBe(10_000);
    expect(await dataOf(api('PUT', `/api/admin/groups/${uuid}`, { disk_quota: 701 }))).toMatchObject({ disk_quota: 701, disk_used: 700 });
    expect(await dataOf(api('PUT', `/api/admin/groups/${uuid}`, { disk_quota: 0 }))).toMatchObject({ disk_quota: 0 });
  });

  it('answers 409 for the name of another group, and accepts its own name in another case', async () => {
    await ga.group('Taken Name');
    const uuid = await ga.group('Free Name');
    expect((await api('PUT', `/api/admin/groups/${uuid}`, { name: 'taken name' })).body).toMatchObject({ code: 'group_name_taken' });
    expect(await dataOf(api('PUT', `/api/admin/groups/${uuid}`, { name: 'FREE NAME' }))).toMatchObject({ group_name: 'FREE NAME' });
  });
});

describe('/api/admin/groups/{uuid}/users', () => {
  let group: string;
  let bob: SeededUser;
  let carol: SeededUser;
  beforeAll(async () => {
    group = await ga.group('Members Club');
    bob = await seeder.user('Bob Member');
    carol = await seeder.user('Carol Member');
  });

  it('adds a member with read only when no permissions are given, and answers the member record', async () => {
    const data = await dataOf(api('POST', `/api/admin/groups/${group}/users`, { user: bob.uuid }));
    expect(data).toEqual({
      user_uuid: bob.uuid,
      fullname: 'Bob Member',
      email: bob.email,
      avatar: '',
      is_active: true,
      is_admin: false,
      node_permissions: ['read'],
      tag_permissions: [],
      share_permissions: [],
      added: expect.any(Number),
    });
    expect(await readMembershipRow(store, group, bob.uuid)).toMatchObject({ is_admin: 0, node_permissions: '["read"]', tag_permissions: '[]' });
  });

  it('adds a member with the permissions given, deduplicated in the order of docs/api.md', async () => {
    const permissions = {
      is_admin: true,
      node_permissions: ['download', 'read', 'read'],
      tag_permissions: ['delete', 'create'],
      share_permissions: ['upload_link_delete', 'public_create'],
    };
    expect(await dataOf(api('POST', `/api/admin/groups/${group}/users`, { user: carol.uuid.toUpperCase(), permissions }))).toMatchObject({
      user_uuid: carol.uuid,
      is_admin: true,
      node_permissions: ['read', 'download'],
      tag_permissions: ['create', 'delete'],
      share_permissions: ['public_create', 'upload_link_delete'],
    });
  });

  it('lists the members by name and reads one', async () => {
    const list = await dataOf<Array<{ user_uuid: string }>>(api('GET', `/api/admin/groups/${group}/users`));
    expect(list.map((m) => m.user_uuid)).toEqual([bob.uuid, carol.uuid]);
    expect(await dataOf(api('GET', `/api/admin/groups/${group}/users/${carol.uuid}`))).toMatchObject({ user_uuid: carol.uuid, is_admin: true });
    expect(await dataOf(api('GET', `/api/admin/groups/${group}`))).toMatchObject({ member_count: 2 });
  });

  it('updates only the permission fields given', async () => {
    expect(await dataOf(api('PUT', `/api/admin/groups/${group}/users/${bob.uuid}`, { node_permissions: ['read', 'write'] }))).toMatchObject({
      is_admin: false,
      node_permissions: ['read', 'write'],
      tag_permissions: [],
    });
    expect(await dataOf(api('PUT', `/api/admin/groups/${group}/users/${bob.uuid}`, { tag_permissions: ['create'] }))).toMatchObject({
      node_permissions: ['read', 'write'],
      tag_permissions: ['create'],
    });
    expect(await readMembershipRow(store, group, bob.uuid)).toMatchObject({ node_permissions: '["read","write"]', tag_permissions: '["create"]' });
  });

  it.each([
    ['an unknown node permission', { node_permissions: ['read', 'fly'] }, /^node_permissions\.1: unknown permission "fly"; allowed: read, write, delete, download$/],
    ['an unknown tag permission', { tag_permissions: ['edit'] }, /^tag_permissions\.0: unknown permission "edit"/],
    ['an unknown share permission', { share_permissions: ['public'] }, /^share_permissions\.0: unknown permission "public"/],
    ['a node permission list that is not an array', { node_permissions: 'read' }, /^node_permissions: /],
    ['is_admin as a string', { is_admin: 'true' }, /^is_admin: /],
    ['an unknown key', { can_fly: true }, /can_fly/],
  ])('refuses %s with 400 naming the field, changing nothing', async (what, body, msg) => {
    const before = await readMembershipRow(store, group, bob.uuid);
    const res = await api('PUT', `/api/admin/groups/${group}/users/${bob.uuid}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(msg) });
    expect(await readMembershipRow(store, group, bob.uuid)).toEqual(before);
    const add = await api('POST', `/api/admin/groups/${group}/users`, { user: (await seeder.user(`Never Added ${what.replace(/[^a-z ]/gi, '')}`)).uuid, permissions: body });
    expect(add.status).toBe(400);
    expect((add.body as { msg: string }).msg).toMatch(/^permissions[.:]/);
  });

  it('answers 409 already_member, and 404 for an unknown user or a user who is no member', async () => {
    expect((await api('POST', `/api/admin/groups/${group}/users`, { user: bob.uuid })).body).toMatchObject({ code: 'already_member', msg: expect.stringMatching(/^user: /) });
    expect((await api('POST', `/api/admin/groups/${group}/users`, { user: UNKNOWN })).body).toMatchObject({
      code: 'not_found',
      msg: "user: no such user in the group's organization",
    });
    expect((await api('POST', `/api/admin/groups/${group}/users`, {})).body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/^user: /) });
    const outsider = await seeder.user('Oscar Outsider');
    for (const [method, body] of [['GET', undefined], ['PUT', { is_admin: true }], ['DELETE', undefined]] as const) {
      expect((await api(method, `/api/admin/groups/${group}/users/${outsider.uuid}`, body)).body).toMatchObject({ code: 'not_found', msg: 'member not found' });
    }
    expect(await readMembershipRow(store, group, outsider.uuid)).toBeUndefined();
  });

  it('removes a member, who then no longer sees the group’s nodes', async () => {
    await dataOf(api('DELETE', `/api/admin/groups/${group}/users/${bob.uuid}`));
    expect(await readMembershipRow(store, group, bob.uuid)).toBeUndefined();
    expect((await call(seeder.client, bob.session, 'GET', `/api/nodes/home:${group}/dirlist`)).status).toBe(404);
    expect((await api('DELETE', `/api/admin/groups/${group}/users/${bob.uuid}`)).status).toBe(404);
  });
});

describe('every administrator endpoint, for a caller without administrator privileges', () => {
  it('answers 403 forbidden before looking at anything, and changes nothing', async () => {
    const user = await seeder.user('Plain Pete');
    // A group administrator is no administrator: group rights do not open /api/admin.
    const group = await ga.group('Petes Group');
    await ga.member(group, user.uuid, { is_admin: true, node_permissions: ['read'] });
    const other = (await seeder.user('Other Olive')).uuid;
    const tables = () => Promise.all(['users', 'groups', 'group_members', 'organizations', 'nodes'].map((t) => readCountRows(store, `SELECT COUNT(*) AS n FROM ${t}`)));
    const before = await tables();
    const endpoints: Array<[Method, string, unknown]> = [
      ['GET', '/api/admin/users', undefined],
      ['POST', '/api/admin/users', { fullname: 'Made Up', email: 'made@example.test', password: 'Secret-Passw0rd', disk_quota: 0, is_active: true, is_admin: true }],
      ['GET', `/api/admin/users/${other}`, undefined],
      ['PUT', `/api/admin/users/${other}`, { is_admin: true }],
      ['PUT', `/api/admin/users/${user.uuid}`, { is_admin: true }],
      ['DELETE', `/api/admin/users/${other}?confirm_delete=yes`, undefined],
      ['GET', `/api/admin/users/${other}/groups`, undefined],
      ['POST', `/api/admin/users/${user.uuid}/groups`, { groups: {} }],
      ['GET', '/api/admin/groups', undefined],
      ['POST', '/api/admin/groups', { name: 'Made Up', disk_quota: 0 }],
      ['GET', `/api/admin/groups/${group}`, undefined],
      ['PUT', `/api/admin/groups/${group}`, { disk_quota: 5 }],
      ['DELETE', `/api/admin/groups/${group}?confirm_delete=yes`, undefined],
      ['GET', `/api/admin/groups/${group}/users`, undefined],
      ['POST', `/api/admin/groups/${group}/users`, { user: other }],
      ['GET', `/api/admin/groups/${group}/users/${user.uuid}`, undefined],
      ['PUT', `/api/admin/groups/${group}/users/${user.uuid}`, { node_permissions: ['read', 'write'] }],
      ['DELETE', `/api/admin/groups/${group}/users/${user.uuid}`, undefined],
      ['GET', '/api/admin/organizations', undefined],
      ['POST', '/api/admin/organizations', { id: 'mine', name: 'Mine' }],
      ['GET', '/api/admin/organizations/default', undefined],
      ['PUT', '/api/admin/organizations/default', { name: 'Mine' }],
      ['DELETE', '/api/admin/organizations/default', undefined],
      ['GET', `/api/admin/users/${UNKNOWN}`, undefined],
      ['GET', `/api/admin/groups/not-a-uuid`, undefined],
    ];
    for (const [method, path, body] of endpoints) {
      const res = await call(seeder.client, user.session, method, path, body);
      expect({ method, path, status: res.status, body: res.body }).toEqual({
        method,
        path,
        status: 403,
        body: { status: 'error', code: 'forbidden', msg: 'administrator privileges required' },
      });
    }
    expect(await tables()).toEqual(before);
    expect(await readMembershipRow(store, group, user.uuid)).toMatchObject({ is_admin: 1, node_permissions: '["read"]' });
  });
});
