/**
 * Issue 14, finding 8: a session opened with an app password made group administrators through
 * the member endpoints (POST/PUT/DELETE /api/groups/{uuid}/users...), which lacked the check the
 * other sensitive endpoints had. Now the table (src/store/policy.ts) refuses an app-password
 * session every endpoint that changes memberships, a group, its WebDrive endpoint, or shares
 * (403 naming the app password), and a refused request changes nothing. The account password's
 * session still may; the app password's may still read and use files.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupAdmin, readMembershipRow, type GroupAdmin } from '../helpers/groups.js';
import { uploadFile } from '../helpers/seed.js';
import { storeFixture, type StoreFixture, type TestUser } from '../helpers/store-fixture.js';
import { apiCall, dataOf, postAuth } from '../helpers/user-api.js';

const APP_PASSWORD_REFUSAL = { status: 'error', code: 'forbidden', msg: expect.stringMatching(/app password/) };

describe('an app-password session and group administration', () => {
  let f: StoreFixture;
  let ga: GroupAdmin;
  let team: string;
  let lead: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let appToken: string;

  beforeAll(async () => {
    f = await storeFixture();
    ga = groupAdmin(f.client, f.admin);
    team = await ga.group('Team');
    [lead, member, outsider] = await Promise.all([f.newUser(), f.newUser(), f.newUser()]);
    await ga.member(team, lead.uuid, { is_admin: true, node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(team, member.uuid, { node_permissions: ['read'] });
    const made = dataOf<{ password: string }>(await apiCall(f.client, lead.session, 'POST', '/api/user/app_passwords', { name: 'phone' }));
    appToken = ((await postAuth(f.client, { username: lead.email, password: made.password })).body as { token: string }).token;
  });
  afterAll(async () => {
    await f.close();
  });

  it('cannot add a member, nor make one an administrator, nor remove one (403), and nothing changes', async () => {
    const before = await readMembershipRow(f.store, team, member.uuid);
    const refused = [
      await apiCall(f.client, appToken, 'POST', `/api/groups/${team}/users`, { user: outsider.uuid, permissions: { is_admin: true } }),
      await apiCall(f.client, appToken, 'PUT', `/api/groups/${team}/users/${member.uuid}`, { is_admin: true }),
      await apiCall(f.client, appToken, 'DELETE', `/api/groups/${team}/users/${member.uuid}`),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject(APP_PASSWORD_REFUSAL);
    }
    expect(await readMembershipRow(f.store, team, outsider.uuid)).toBeUndefined();
    expect(await readMembershipRow(f.store, team, member.uuid)).toEqual(before);
    expect(await readMembershipRow(f.store, team, member.uuid)).toMatchObject({ is_admin: 0 });
  });

  it('cannot change the group, its WebDrive endpoint, or make a share', async () => {
    const file = await uploadFile(f.client, lead.session, `home:${team}`, 'plan.txt', 'the plan');
    const refused = [
      await apiCall(f.client, appToken, 'PUT', `/api/groups/${team}`, { name: 'Renamed by a phone' }),
      await apiCall(f.client, appToken, 'POST', `/api/groups/${team}/webdrive`, {}),
      await apiCall(f.client, appToken, 'POST', `/api/nodes/${file}/shares`, { type: 'public' }),
      await apiCall(f.client, appToken, 'POST', `/api/nodes/${file}/shares`, { type: 'private', recipients: [outsider.uuid], writable: true }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject(APP_PASSWORD_REFUSAL);
    }
    expect((await f.store.ctx.storage.sql.get('SELECT name FROM groups WHERE uuid = ?', [team]))).toEqual({ name: 'Team' });
    expect((await f.store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', [file]))).toEqual({ n: 0 });
  });

  it('is refused the same for another group’s, another user’s or nobody’s UUIDs: no answer tells them apart', async () => {
    const other = await ga.group('Other Team');
    for (const [group, target] of [[other, member.uuid], [randomUUID(), randomUUID()], [team, outsider.uuid]] as const) {
      const res = await apiCall(f.client, appToken, 'PUT', `/api/groups/${group}/users/${target}`, { is_admin: true });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject(APP_PASSWORD_REFUSAL);
    }
  });

  it('may still read the members and use files; the account password’s session may still manage them', async () => {
    const listed = dataOf<Array<{ user_uuid: string }>>(await apiCall(f.client, appToken, 'GET', `/api/groups/${team}/users`));
    expect(listed.map((m) => m.user_uuid).sort()).toEqual([lead.uuid, member.uuid].sort());
    expect((await apiCall(f.client, appToken, 'GET', `/api/nodes/home:${team}/dirlist`)).status).toBe(200);
    const promoted = dataOf<{ is_admin: boolean }>(await apiCall(f.client, lead.session, 'PUT', `/api/groups/${team}/users/${member.uuid}`, { is_admin: true }));
    expect(promoted.is_admin).toBe(true);
  });
});
