/**
 * Password lifetime (`store.passwordMaxAgeDays`, docs/store-semantics.md "Current user"):
 * `pass_expires` in the profile; a login with the right, expired password opens a restricted
 * session (`password_expired: true`) that may only read the profile, set a new password and log
 * out (403 `password_expired` elsewhere, view and download included); a new password lifts it;
 * app passwords are not affected.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { uploadFile } from '../../helpers/seed.js';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';
import { apiCall, dataOf, readHistoryRows, postAuth, readUserRow } from '../../helpers/user-api.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_AGE_DAYS = 30;
const EXPIRED = { status: 'error', code: 'password_expired', msg: expect.stringMatching(/password has expired/) };

let f: StoreFixture;

// A store per test: each moves the clock by a month, past every session and the admin's password.
beforeEach(async () => {
  f = await storeFixture({ flags: { 'store.passwordMaxAgeDays': MAX_AGE_DAYS } });
  f.store.clock.freeze();
});
afterEach(async () => {
  await f.close();
});

/** A user with a file and an app password, whose password expired a moment ago. */
async function expiredUser(): Promise<{ user: TestUser; fileUuid: string; appPassword: string }> {
  const user = await f.newUser();
  const fileUuid = await uploadFile(f.client, user.session, 'home', 'notes.txt', 'hello');
  const appPassword = (dataOf<{ password: string }>(await apiCall(f.client, user.session, 'POST', '/api/user/app_passwords', { name: 'dav' }))).password;
  f.store.clock.advance(MAX_AGE_DAYS * DAY_MS);
  return { user, fileUuid, appPassword };
}

async function restrictedLogin(user: TestUser): Promise<{ token: string; fileaccesskey: string }> {
  const res = await postAuth(f.client, { username: user.email, password: user.password });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'success', uuid: user.uuid, password_expired: true });
  return res.body as { token: string; fileaccesskey: string };
}

describe('password lifetime', () => {
  it('shows pass_expires: the time the password was set plus the lifetime', async () => {
    const user = await f.newUser();
    const profile = dataOf<{ pass_expires: number }>(await apiCall(f.client, user.session, 'GET', '/api/user'));
    expect(profile.pass_expires).toBe((await readUserRow(f.store, user.uuid)).password_changed + MAX_AGE_DAYS * DAY_MS);
  });

  it('logs in normally until the password expires', async () => {
    const user = await f.newUser();
    f.store.clock.advance(MAX_AGE_DAYS * DAY_MS - 1);
    const res = await postAuth(f.client, { username: user.email, password: user.password });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('password_expired');
  });

  it('opens a restricted session with the expired password: profile, password change and logout only', async () => {
    const { user, fileUuid } = await expiredUser();
    const session = await restrictedLogin(user);
    expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'success', action_args: 'password (expired)' });

    expect(dataOf(await apiCall(f.client, session.token, 'GET', '/api/user'))).toMatchObject({ uuid: user.uuid });
    for (const [method, path, json] of [
      ['GET', '/api/nodes/home/dirlist'],
      ['GET', `/api/nodes/${fileUuid}`],
      ['POST', '/api/nodes/home', { new_dir: 'blocked' }],
      ['GET', '/api/nodes/home/upload'],
      ['GET', '/api/user/notifications'],
      ['GET', '/api/user/login_history'],
      ['POST', '/api/user/app_passwords', { name: 'escape' }],
      ['POST', '/api/user/2fa', { twofa: true }],
      ['GET', '/api/users'],
    ] as const) {
      const res = await apiCall(f.client, session.token, method, path, json);
      expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 403, body: EXPIRED });
    }
    for (const mode of ['view', 'download']) {
      const res = await f.client.http.requestRaw({ method: 'GET', path: `/resources/auth/${mode}/${session.fileaccesskey}/${fileUuid}/999999999999999/notes.txt` });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject(EXPIRED);
    }
    expect(await f.store.ctx.storage.sql.get("SELECT 1 FROM nodes WHERE name = 'blocked'")).toBeUndefined();
    expect((await apiCall(f.client, session.token, 'GET', '/api/user/logout')).status).toBe(200);
  });

  it('is classified as forbidden with code password_expired by the store client', async () => {
    const { user } = await expiredUser();
    const { token } = await restrictedLogin(user);
    await expect(f.client.listFolder({ ...user.session, token }, nodeId('home'))).rejects.toMatchObject({ kind: 'forbidden', code: 'password_expired' });
  });

  it('restricts a session opened before the password expired as well', async () => {
    const user = await f.newUser();
    f.store.clock.advance(MAX_AGE_DAYS * DAY_MS - 60_000);
    const session = await f.client.login(user.email, user.password);
    f.store.clock.advance(60_000);
    expect(await apiCall(f.client, session, 'GET', '/api/nodes/home/dirlist')).toMatchObject({ status: 403, body: EXPIRED });
  });

  it('lifts the restriction when a new password is set through PUT /api/user, and the old one stops working', async () => {
    const { user } = await expiredUser();
    const { token } = await restrictedLogin(user);
    const res = await apiCall(f.client, token, 'PUT', '/api/user', { password: 'Renewed-Passw0rd' });
    expect(res.status).toBe(200);
    expect(dataOf<{ pass_expires: number }>(res).pass_expires).toBe(f.store.clock.now() + MAX_AGE_DAYS * DAY_MS);
    expect((await apiCall(f.client, token, 'GET', '/api/nodes/home/dirlist')).status).toBe(200);
    expect((await postAuth(f.client, { username: user.email, password: user.password })).status).toBe(401);
    const fresh = await postAuth(f.client, { username: user.email, password: 'Renewed-Passw0rd' });
    expect(fresh.status).toBe(200);
    expect(fresh.body).not.toHaveProperty('password_expired');
  });

  it('refuses the expired password itself as the new one', async () => {
    const { user } = await expiredUser();
    const { token } = await restrictedLogin(user);
    const res = await apiCall(f.client, token, 'PUT', '/api/user', { password: user.password });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_password', msg: expect.stringMatching(/differ/) });
    expect((await apiCall(f.client, token, 'GET', '/api/nodes/home/dirlist')).status).toBe(403);
  });

  it('does not restrict sessions opened with an app password', async () => {
    const { user, appPassword } = await expiredUser();
    const res = await postAuth(f.client, { username: user.email, password: appPassword });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('password_expired');
    expect((await apiCall(f.client, (res.body as { token: string }).token, 'GET', '/api/nodes/home/dirlist')).status).toBe(200);
  });
});
