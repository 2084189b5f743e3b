/**
 * Organizations (docs/extensions.md, "Organizations"): migration 008 makes them rows, the
 * built-in admin manages them through /api/admin/organizations, and an organization separates
 * users, groups, the group list with show=all and the receivers of transferred data. Other
 * administrators work inside their own organization only.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/store-client/index.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import type { TestStore } from '../../helpers/start-store.js';
import { USER_PASSWORD, type Seeder } from '../../helpers/seed.js';
import { call, dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let admin: StoreSession;

const orgs = (s: StoreSession, method: 'GET' | 'POST' | 'PUT' | 'DELETE', suffix = '', json?: unknown) =>
  call(seeder.client, s, method, `/api/admin/organizations${suffix}`, json);

async function orgRow(id: string): Promise<unknown> {
  return (await store.ctx.storage.sql.get('SELECT id, name, allow_unlimited_quota FROM organizations WHERE id = ?', [id]));
}

/** An administrator (not the built-in one) of organization `orgId`. */
async function orgAdmin(orgId: string, name: string): Promise<{ uuid: string; session: StoreSession }> {
  const email = `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@example.test`;
  const uuid = await seeder.client.createUser(admin, { fullname: name, email, password: USER_PASSWORD, isAdmin: true }, orgId);
  return { uuid: uuid as string, session: await seeder.client.login(email, USER_PASSWORD) };
}

beforeAll(async () => {
  ({ store, seeder, ga, admin } = await startGroupStore({ flags: { 'store.shareWithAllGroups': true } }));
});

afterAll(() => stopGroupStore({ seeder, store }));

describe('migration 008', () => {
  it('creates the default organization, allowing unlimited quotas', async () => {
    expect(await orgRow('default')).toEqual({ id: 'default', name: 'Default organization', allow_unlimited_quota: 1 });
  });

  it('turns every org_id already on a user into an organization row', () => {
    const tmp = makeTmpDir('driveway-org-migration-');
    const file = path.join(tmp.dir, 'driveway.sqlite');
    try {
      let db = openDatabase(file);
      // What a database from before 008 held: users labelled with organizations nobody created.
      db.exec('DROP TABLE group_tags; DROP TABLE group_members; DROP TABLE groups; DROP TABLE organizations; DROP INDEX users_org');
      db.prepare('DELETE FROM schema_migrations WHERE version = 8').run();
      const insert = db.prepare(
        "INSERT INTO users (uuid, username, email, fullname, password_hash, org_id, created, updated) VALUES (?, ?, ?, 'Old User', 'x', ?, 1, 1)",
      );
      insert.run('u1', 'a@example.test', 'a@example.test', 'legacy');
      insert.run('u2', 'b@example.test', 'b@example.test', 'legacy');
      insert.run('u3', 'c@example.test', 'c@example.test', 'default');
      db.close();
      db = openDatabase(file);
      expect(db.prepare('SELECT id, name, allow_unlimited_quota FROM organizations ORDER BY id').all()).toEqual([
        { id: 'default', name: 'Default organization', allow_unlimited_quota: 1 },
        { id: 'legacy', name: 'legacy', allow_unlimited_quota: 1 },
      ]);
      db.close();
    } finally {
      tmp.remove();
    }
  });
});

describe('/api/admin/organizations', () => {
  it('creates an organization and answers its record', async () => {
    const data = await dataOf(orgs(admin, 'POST', '', { id: 'acme', name: 'Acme Inc.', allow_unlimited_quota: true }));
    expect(data).toEqual({
      id: 'acme',
      name: 'Acme Inc.',
      allow_unlimited_quota: true,
      keep_revisions: null,
      keep_revision_days: null,
      trash_days: null,
      user_count: 0,
      group_count: 0,
      created: expect.any(Number),
      updated: expect.any(Number),
    });
    expect(await orgRow('acme')).toEqual({ id: 'acme', name: 'Acme Inc.', allow_unlimited_quota: 1 });
    await dataOf(orgs(admin, 'POST', '', { id: 'plain', name: 'Plain' }));
    expect(await orgRow('plain')).toMatchObject({ allow_unlimited_quota: 0 });
  });

  it.each([
    ['an id with a space', { id: 'a b', name: 'X' }, /^id: /],
    ['an id longer than 64 characters', { id: 'x'.repeat(65), name: 'X' }, /^id: /],
    ['no name', { id: 'noname' }, /^name: /],
    ['an empty name', { id: 'noname', name: '  ' }, /^name: /],
    ['allow_unlimited_quota as a string', { id: 'flag', name: 'X', allow_unlimited_quota: 'yes' }, /^allow_unlimited_quota: /],
    ['an unknown key', { id: 'extra', name: 'X', region: 'eu' }, /region/],
  ])('answers 400 naming the field for %s', async (_what, body, msg) => {
    const res = await orgs(admin, 'POST', '', body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(msg) });
  });

  it('answers 409 organization_exists for an id in use', async () => {
    const res = await orgs(admin, 'POST', '', { id: 'default', name: 'Again' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'organization_exists', msg: expect.stringMatching(/^id: /) });
    expect(await orgRow('default')).toMatchObject({ name: 'Default organization' });
  });

  it('lists every organization with its counts', async () => {
    const list = await dataOf<Array<{ id: string; user_count: number }>>(orgs(admin, 'GET'));
    expect(list.map((o) => o.id)).toEqual(expect.arrayContaining(['acme', 'default', 'plain']));
    expect(list.find((o) => o.id === 'default')?.user_count).toBe(1);
  });

  it('reads and updates one organization; 404 for an unknown id', async () => {
    expect(await dataOf(orgs(admin, 'GET', '/plain'))).toMatchObject({ id: 'plain', name: 'Plain', allow_unlimited_quota: false });
    expect(await dataOf(orgs(admin, 'PUT', '/plain', { name: 'Plain Ltd', allow_unlimited_quota: true }))).toMatchObject({
      name: 'Plain Ltd',
      allow_unlimited_quota: true,
    });
    expect(await orgRow('plain')).toEqual({ id: 'plain', name: 'Plain Ltd', allow_unlimited_quota: 1 });
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await orgs(admin, method, '/nowhere', method === 'PUT' ? { name: 'X' } : undefined);
      expect({ method, status: res.status, body: res.body }).toMatchObject({ method, status: 404, body: { code: 'not_found', msg: 'organization not found' } });
    }
  });

  it('refuses to forbid unlimited quotas while a user has one (409), then allows it', async () => {
    const uuid = await seeder.client.createUser(admin, { fullname: 'Unlimited Ursula', email: 'ursula@example.test', password: USER_PASSWORD, diskQuotaBytes: -1 }, 'acme');
    const res = await orgs(admin, 'PUT', '/acme', { allow_unlimited_quota: false });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'organization_in_use', msg: expect.stringMatching(/^allow_unlimited_quota: 1 user/) });
    expect(await orgRow('acme')).toMatchObject({ allow_unlimited_quota: 1 });
    // disk_quota 0 (no quota) is no limit either: still refused.
    await dataOf(call(seeder.client, admin, 'PUT', `/api/admin/users/${uuid}`, { disk_quota: 0 }));
    expect((await orgs(admin, 'PUT', '/acme', { allow_unlimited_quota: false })).body).toMatchObject({ code: 'organization_in_use', msg: expect.stringMatching(/disk_quota 0 or -1/) });
    expect(await orgRow('acme')).toMatchObject({ allow_unlimited_quota: 1 });
    await dataOf(call(seeder.client, admin, 'PUT', `/api/admin/users/${uuid}`, { disk_quota: 1_000_000 }));
    expect(await dataOf(orgs(admin, 'PUT', '/acme', { allow_unlimited_quota: false }))).toMatchObject({ allow_unlimited_quota: false });
    // As it was for the tests below, which add users with the default quota 0.
    await dataOf(orgs(admin, 'PUT', '/acme', { allow_unlimited_quota: true }));
  });

  it('deletes an empty organization, never the default one nor one with users or groups', async () => {
    await dataOf(orgs(admin, 'POST', '', { id: 'shortlived', name: 'Short' }));
    const groupUuid = await ga.group('Lonely Group', { orgId: 'shortlived' });
    const busy = await orgs(admin, 'DELETE', '/shortlived');
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ code: 'organization_in_use', msg: expect.stringMatching(/0 user\(s\) and 1 group/) });
    await dataOf(call(seeder.client, admin, 'DELETE', `/api/admin/groups/${groupUuid}?confirm_delete=yes`));
    expect(await dataOf(orgs(admin, 'DELETE', '/shortlived'))).toBeUndefined();
    expect(await orgRow('shortlived')).toBeUndefined();
    const res = await orgs(admin, 'DELETE', '/default');
    expect(res.status).toBe(403);
    expect(await orgRow('default')).toBeDefined();
  });

  it('is the built-in admin’s: another administrator reads only their own organization, a user nothing', async () => {
    const acmeAdmin = await orgAdmin('acme', 'Andy Acmeadmin');
    expect(await dataOf(orgs(acmeAdmin.session, 'GET', '/acme'))).toMatchObject({ id: 'acme' });
    const attempts: Array<[string, 'GET' | 'POST' | 'PUT' | 'DELETE', string, unknown]> = [
      ['list', 'GET', '', undefined],
      ['create', 'POST', '', { id: 'mine', name: 'Mine' }],
      ['read another', 'GET', '/default', undefined],
      ['update own', 'PUT', '/acme', { name: 'Taken Over' }],
      ['delete another', 'DELETE', '/plain', undefined],
    ];
    const user = await seeder.user('Norma Normal');
    for (const [label, method, suffix, body] of attempts) {
      for (const [who, session] of [['acme admin', acmeAdmin.session], ['user', user.session]] as const) {
        const res = await orgs(session, method, suffix, body);
        expect({ label, who, status: res.status, code: (res.body as { code?: string }).code }).toEqual({ label, who, status: 403, code: 'forbidden' });
      }
    }
    expect(await orgRow('acme')).toMatchObject({ name: 'Acme Inc.' });
    expect(await orgRow('mine')).toBeUndefined();
  });

  it('tells an administrator the edition, the version and whether they are the built-in admin (GET /api/admin/about); a user 403', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(await dataOf(call(seeder.client, admin, 'GET', '/api/admin/about'))).toEqual({ edition: '3.0', version, builtin_admin: true, org_id: 'default' });
    const other = await orgAdmin('acme', 'Abby Acmeadmin');
    expect(await dataOf(call(seeder.client, other.session, 'GET', '/api/admin/about'))).toEqual({ edition: '3.0', version, builtin_admin: false, org_id: 'acme' });
    const user = await seeder.user('Nora Nobody');
    const res = await call(seeder.client, user.session, 'GET', '/api/admin/about');
    expect({ status: res.status, msg: (res.body as { msg?: string }).msg }).toEqual({ status: 403, msg: 'administrator privileges required' });
  });
});

describe('what an organization separates', () => {
  let globexAdmin: { uuid: string; session: StoreSession };
  let globexUser: string;
  let defaultUser: string;
  let globexGroup: string;
  let defaultGroup: string;

  beforeAll(async () => {
    await dataOf(orgs(admin, 'POST', '', { id: 'globex', name: 'Globex', allow_unlimited_quota: true }));
    globexAdmin = await orgAdmin('globex', 'Gina Globexadmin');
    globexUser = (await seeder.client.createUser(admin, { fullname: 'Gus Globex', email: 'gus@example.test', password: USER_PASSWORD }, 'globex')) as string;
    defaultUser = (await seeder.user('Dan Default')).uuid;
    globexGroup = await ga.group('Engineering', { orgId: 'globex' });
    defaultGroup = await ga.group('Engineering');
  });

  it('keeps group names unique per organization only', async () => {
    expect(globexGroup).not.toBe(defaultGroup);
    const res = await call(seeder.client, globexAdmin.session, 'POST', '/api/admin/groups', { name: 'ENGINEERING', disk_quota: 0 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'group_name_taken', msg: expect.stringMatching(/^name: /) });
  });

  it('lists only the organization’s users and groups to its administrator', async () => {
    const users = await dataOf<Array<{ uuid: string; org_id: string }>>(call(seeder.client, globexAdmin.session, 'GET', '/api/admin/users'));
    expect(users.map((u) => u.uuid).sort()).toEqual([globexAdmin.uuid, globexUser].sort());
    const groups = await dataOf<Array<{ group_uuid: string }>>(call(seeder.client, globexAdmin.session, 'GET', '/api/admin/groups'));
    expect(groups.map((g) => g.group_uuid)).toEqual([globexGroup]);
    const viaBuiltin = await dataOf<Array<{ uuid: string }>>(call(seeder.client, admin, 'GET', '/api/admin/users?org_id=globex'));
    expect(viaBuiltin.map((u) => u.uuid).sort()).toEqual([globexAdmin.uuid, globexUser].sort());
  });

  it('refuses org_id of another organization to its administrator (403), and an unknown one to the built-in admin (404)', async () => {
    for (const path of ['/api/admin/users?org_id=default', '/api/admin/groups?org_id=default']) {
      expect((await call(seeder.client, globexAdmin.session, 'GET', path)).status).toBe(403);
    }
    const res = await call(seeder.client, globexAdmin.session, 'POST', '/api/admin/groups?org_id=default', { name: 'Sneaky', disk_quota: 0 });
    expect(res.status).toBe(403);
    for (const path of ['/api/admin/users?org_id=nowhere', '/api/admin/groups?org_id=nowhere']) {
      expect((await call(seeder.client, admin, 'GET', path)).body).toMatchObject({ code: 'not_found', msg: 'organization not found' });
    }
    expect((await call(seeder.client, admin, 'POST', '/api/admin/groups?org_id=nowhere', { name: 'Nowhere', disk_quota: 0 })).status).toBe(404);
  });

  it('hides users and groups of other organizations from an administrator (404 on every endpoint)', async () => {
    const s = globexAdmin.session;
    const attempts: Array<['GET' | 'POST' | 'PUT' | 'DELETE', string, unknown]> = [
      ['GET', `/api/admin/users/${defaultUser}`, undefined],
      ['PUT', `/api/admin/users/${defaultUser}`, { comment: 'x' }],
      ['DELETE', `/api/admin/users/${defaultUser}?confirm_delete=yes`, undefined],
      ['GET', `/api/admin/users/${defaultUser}/groups`, undefined],
      ['POST', `/api/admin/users/${defaultUser}/groups`, { groups: {} }],
      ['GET', `/api/admin/groups/${defaultGroup}`, undefined],
      ['PUT', `/api/admin/groups/${defaultGroup}`, { name: 'Taken' }],
      ['DELETE', `/api/admin/groups/${defaultGroup}?confirm_delete=yes`, undefined],
      ['GET', `/api/admin/groups/${defaultGroup}/users`, undefined],
      ['POST', `/api/admin/groups/${defaultGroup}/users`, { user: globexUser }],
      ['GET', `/api/admin/groups/${defaultGroup}/users/${defaultUser}`, undefined],
      ['PUT', `/api/admin/groups/${defaultGroup}/users/${defaultUser}`, { is_admin: true }],
      ['DELETE', `/api/admin/groups/${defaultGroup}/users/${defaultUser}`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(seeder.client, s, method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    expect((await store.ctx.storage.sql.get('SELECT name FROM groups WHERE uuid = ?', [defaultGroup]))).toEqual({ name: 'Engineering' });
    expect((await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM users WHERE uuid = ?', [defaultUser]))).toEqual({ n: 1 });
  });

  it('refuses members and group assignments across organizations (404 naming the field)', async () => {
    const add = await call(seeder.client, admin, 'POST', `/api/admin/groups/${defaultGroup}/users`, { user: globexUser });
    expect(add.status).toBe(404);
    expect(add.body).toMatchObject({ msg: "user: no such user in the group's organization" });
    const assign = await call(seeder.client, admin, 'POST', `/api/admin/users/${globexUser}/groups`, { groups: { [defaultGroup]: {} } });
    expect(assign.status).toBe(404);
    expect(assign.body).toMatchObject({ msg: `groups.${defaultGroup}: no such group in the user's organization` });
    expect((await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM group_members WHERE user_uuid = ?', [globexUser]))).toEqual({ n: 0 });
  });

  it('lists with show=all only the groups of the caller’s organization', async () => {
    const gus = await seeder.client.login('gus@example.test', USER_PASSWORD);
    const all = await dataOf<Array<{ group_uuid: string; is_admin: boolean; node_permissions: string[] }>>(call(seeder.client, gus, 'GET', '/api/groups?show=all'));
    expect(all).toEqual([expect.objectContaining({ group_uuid: globexGroup, is_admin: false, node_permissions: [] })]);
  });

  it('refuses to transfer a deleted user’s data to another organization (404 naming the field)', async () => {
    const leaving = await seeder.client.createUser(admin, { fullname: 'Leo Leaving', email: 'leo@example.test', password: USER_PASSWORD }, 'globex');
    for (const receiver of [defaultUser, defaultGroup]) {
      const res = await call(seeder.client, admin, 'DELETE', `/api/admin/users/${leaving}?confirm_delete=yes&transfer_data_to=${receiver}`);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ msg: 'transfer_data_to: no such user or group in the organization' });
    }
    expect((await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM users WHERE uuid = ?', [leaving]))).toEqual({ n: 1 });
  });
});
