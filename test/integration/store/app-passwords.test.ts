/**
 * App passwords (docs/extensions.md "App passwords"): GET/POST /api/user/app_passwords and
 * DELETE /api/user/app_passwords/{uuid}; POST /auth accepting one in place of password and code;
 * what a session opened with one may not do; revocation ending its sessions; the bounds; and the
 * events that delete them all (new password, 2FA enabled, administrator reset); and a WebDAV
 * client of a 2FA account getting in through the bridge with one.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/store-client/index.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { basicAuth, bridgeFixture } from '../../helpers/start-bridge.js';
import type { StoreFixture, TestUser } from '../../helpers/store-fixture.js';
import { apiCall, dataOf, frozenStoreSuite, readHistoryRows, isLive, postAuth } from '../../helpers/user-api.js';

const FORMAT = /^[a-z2-7]{6}(-[a-z2-7]{6}){3}$/;

interface Created {
  uuid: string;
  name: string;
  created: number;
  password: string;
}

let f: StoreFixture;

const list = (s: StoreSession | string) => apiCall(f.client, s, 'GET', '/api/user/app_passwords');
const create = (s: StoreSession | string, json: unknown) => apiCall(f.client, s, 'POST', '/api/user/app_passwords', json);
const remove = (s: StoreSession | string, uuid: string, json?: unknown) => apiCall(f.client, s, 'DELETE', `/api/user/app_passwords/${uuid}`, json);

async function made(user: TestUser, name = 'laptop'): Promise<Created> {
  return dataOf<Created>(await create(user.session, { name }));
}

async function appLogin(user: TestUser, password: string): Promise<string> {
  const res = await postAuth(f.client, { username: user.email, password });
  expect(res.status).toBe(200);
  return (res.body as { token: string }).token;
}

function rows(userUuid: string): Promise<Array<Record<string, unknown>>> {
  return f.store.ctx.storage.sql.all<Record<string, unknown>>('SELECT * FROM app_passwords WHERE user_uuid = ? ORDER BY created', [userUuid]);
}

function sessionOf(token: string): Promise<{ app_password_uuid: string | null; revoked: number | null } | undefined> {
  const jti = (JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8')) as { jti: string }).jti;
  return f.store.ctx.storage.sql.get<{ app_password_uuid: string | null; revoked: number | null }>('SELECT app_password_uuid, revoked FROM sessions WHERE id = ?', [jti]);
}

frozenStoreSuite((fixture) => {
  f = fixture;
});

describe('/api/user/app_passwords', () => {
  it('lists none for a new user', async () => {
    const user = await f.newUser();
    expect((await list(user.session)).body).toStrictEqual({ status: 'success', msg: 'app passwords', data: [] });
  });

  it('creates one, answering the password once; stores only its SHA-256; the list never shows it', async () => {
    const user = await f.newUser();
    const res = await create(user.session, { name: '  laptop  ' });
    expect(res.status).toBe(200);
    const data = dataOf<Created>(res);
    expect(data).toStrictEqual({ uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'laptop', created: f.store.clock.now(), last_used: null, may_share: false, password: expect.stringMatching(FORMAT) });
    const canonical = data.password.replace(/-/g, '');
    expect(await rows(user.uuid)).toEqual([
      { uuid: data.uuid, user_uuid: user.uuid, name: 'laptop', secret_hash: createHash('sha256').update(canonical).digest('hex'), created: data.created, last_used: null, may_share: 0 },
    ]);
    const listed = await list(user.session);
    expect(dataOf(listed)).toStrictEqual([{ uuid: data.uuid, name: 'laptop', created: data.created, last_used: null, may_share: false }]);
    expect(JSON.stringify(listed.body)).not.toContain(canonical.slice(0, 6));
    expect(JSON.stringify(await f.store.ctx.storage.sql.all('SELECT * FROM app_passwords'))).not.toContain(canonical);
  });

  it('makes a different password every time', async () => {
    const user = await f.newUser();
    const passwords = new Set<string>();
    for (let i = 0; i < 5; i += 1) passwords.add((await made(user, `device ${i}`)).password);
    expect(passwords.size).toBe(5);
    expect(dataOf<unknown[]>(await list(user.session))).toHaveLength(5);
  });

  it.each([
    ['an empty name', { name: '' }],
    ['a blank name', { name: '   ' }],
    ['a name of 101 characters', { name: 'x'.repeat(101) }],
    ['a name with a control character', { name: 'lap\ntop' }],
    ['a name that is not a string', { name: 7 }],
    ['no name', {}],
    ['an unknown key', { name: 'ok', secret: 'mine' }],
    ['a password that is not a string', { name: 'ok', password: 7 }],
  ])('answers 400 naming the field for %s, creating nothing', async (_what, json) => {
    const user = await f.newUser();
    const res = await create(user.session, json);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(/name|password|secret/) });
    expect(await rows(user.uuid)).toEqual([]);
  });

  it('accepts a name of 100 characters', async () => {
    const user = await f.newUser();
    expect((await made(user, 'n'.repeat(100))).name).toHaveLength(100);
  });

  it('keeps at most 50 per user: the 51st is 409 too_many_app_passwords', async () => {
    const user = await f.newUser();
    for (let i = 0; i < 50; i += 1) await made(user, `device ${i}`);
    const res = await create(user.session, { name: 'one too many' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'too_many_app_passwords', msg: expect.stringMatching(/50/) });
    expect(await rows(user.uuid)).toHaveLength(50);
  });

  it('deletes one: 200, the row is gone, and it no longer logs in', async () => {
    const user = await f.newUser();
    const kept = await made(user, 'kept');
    const gone = await made(user, 'gone');
    expect((await remove(user.session, gone.uuid)).body).toMatchObject({ status: 'success' });
    expect((await rows(user.uuid)).map((r) => r.name)).toEqual(['kept']);
    expect((await postAuth(f.client, { username: user.email, password: gone.password })).status).toBe(401);
    expect((await postAuth(f.client, { username: user.email, password: kept.password })).status).toBe(200);
  });

  it('answers 404 for an unknown, malformed or another user’s app password, deleting nothing', async () => {
    const owner = await f.newUser();
    const other = await f.newUser();
    const theirs = await made(owner);
    for (const uuid of [theirs.uuid, '6f1c0f5e-7c2a-4b8e-9d1e-3a2b1c0d9e8f', 'not-a-uuid']) {
      const res = await remove(other.session, uuid);
      expect(res.status, uuid).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', msg: 'app password not found' });
    }
    expect(await rows(owner.uuid)).toHaveLength(1);
    expect(dataOf<unknown[]>(await list(other.session))).toEqual([]);
  });

  it('answers 401 without a token', async () => {
    expect((await list('')).status).toBe(401);
    expect((await create('', { name: 'x' })).status).toBe(401);
  });
});

describe('POST /auth with an app password', () => {
  it('logs in with it in place of the password, without a code even with 2FA on, and records which one', async () => {
    const user = await f.newUser();
    dataOf(await apiCall(f.client, user.session, 'POST', '/api/user/2fa', { twofa: true }));
    const app = await made(user, 'webdav laptop');
    const res = await postAuth(f.client, { username: user.email, password: app.password }, { 'user-agent': 'Finder/1.0 WebDAVFS' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', uuid: user.uuid });
    expect(res.body).not.toHaveProperty('password_expired');
    const token = (res.body as { token: string }).token;
    expect(await sessionOf(token)).toEqual({ app_password_uuid: app.uuid, revoked: null });
    expect(dataOf<Array<{ last_used: number }>>(await list(user.session))[0]?.last_used).toBe(f.store.clock.now());
    expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'success', action_args: 'app password "webdav laptop"; client: Finder/1.0 WebDAVFS' });
    expect(JSON.stringify(await readHistoryRows(f.store, user.uuid))).not.toContain(app.password);
  });

  it('accepts it typed in capitals, without dashes or with spaces', async () => {
    const user = await f.newUser();
    const app = await made(user);
    for (const typed of [app.password.toUpperCase(), app.password.replace(/-/g, ''), app.password.replace(/-/g, ' ')]) {
      expect((await postAuth(f.client, { username: user.email, password: typed })).status, typed).toBe(200);
    }
  });

  it('does not log in another user, and a wrong one is the usual counted 401', async () => {
    const owner = await f.newUser();
    const other = await f.newUser();
    const app = await made(owner);
    const res = await postAuth(f.client, { username: other.email, password: app.password });
    expect(res.status).toBe(401);
    expect(res.body).toStrictEqual({ status: 'error', msg: 'wrong username or password', code: 'unauthenticated' });
    expect((await readHistoryRows(f.store, other.uuid)).at(-1)).toMatchObject({ status: 'failure', error_details: 'wrong password' });
  });

  it('is refused for an inactive account', async () => {
    const user = await f.newUser();
    const app = await made(user);
    await f.client.updateUser(f.admin, user.uuid, { isActive: false });
    expect((await postAuth(f.client, { username: user.email, password: app.password })).status).toBe(401);
    expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'failure', error_details: 'inactive account' });
  });
});

describe('sessions opened with an app password', () => {
  it('may use files and the profile, but not make or delete app passwords, change the password or toggle 2FA (403)', async () => {
    const user = await f.newUser();
    const app = await made(user);
    const token = await appLogin(user, app.password);
    expect((await apiCall(f.client, token, 'GET', '/api/nodes/home/dirlist')).status).toBe(200);
    expect(dataOf(await apiCall(f.client, token, 'PUT', '/api/user', { fullname: 'Renamed By App' }))).toMatchObject({ fullname: 'Renamed By App' });
    expect((await list(token)).status).toBe(200);
    const refused = [
      await create(token, { name: 'escalation' }),
      await remove(token, app.uuid),
      await apiCall(f.client, token, 'PUT', '/api/user', { password: 'Taken-Over-Passw0rd' }),
      await apiCall(f.client, token, 'POST', '/api/user/2fa', { twofa: true }),
      await apiCall(f.client, token, 'POST', '/api/user/2fa', { twofa: false }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 'error', code: 'forbidden', msg: expect.stringMatching(/app password/) });
    }
    expect(await rows(user.uuid)).toHaveLength(1);
    expect((await f.client.login(user.email, user.password)).userId).toBe(user.uuid);
  });

  it('may not use administrator endpoints, even an administrator’s', async () => {
    // The suite's admin session is older than the grace of docs/security.md: it sends the password again.
    const adminApp = dataOf<Created>(await create(f.admin, { name: 'admin scripts', password: f.store.adminPassword }));
    const token = ((await postAuth(f.client, { username: 'admin', password: adminApp.password })).body as { token: string }).token;
    const res = await apiCall(f.client, token, 'POST', '/api/admin/users', { fullname: 'Sneaky Admin', email: 'sneaky@example.org', password: 'Sneaky-Passw0rd', disk_quota: 0, is_active: true, is_admin: true });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ msg: expect.stringMatching(/app password/) });
    expect(await f.store.ctx.storage.sql.get("SELECT 1 FROM users WHERE email = 'sneaky@example.org'")).toBeUndefined();
    expect((await remove(f.admin, adminApp.uuid, { password: f.store.adminPassword })).status).toBe(200);
  });

  it('end when their app password is deleted; other sessions go on', async () => {
    const user = await f.newUser();
    const doomed = await made(user, 'doomed');
    const spared = await made(user, 'spared');
    const viaDoomed = [await appLogin(user, doomed.password), await appLogin(user, doomed.password)];
    const viaSpared = await appLogin(user, spared.password);
    expect((await remove(user.session, doomed.uuid)).status).toBe(200);
    for (const token of viaDoomed) {
      expect(await isLive(f.client, token)).toBe(false);
      expect(await sessionOf(token)).toMatchObject({ app_password_uuid: doomed.uuid, revoked: expect.any(Number) });
    }
    expect(await isLive(f.client, viaSpared)).toBe(true);
    expect(await isLive(f.client, user.session)).toBe(true);
  });
});

describe('what deletes every app password', () => {
  async function userWithAppSession(): Promise<{ user: TestUser; app: Created; token: string }> {
    const user = await f.newUser();
    const app = await made(user);
    return { user, app, token: await appLogin(user, app.password) };
  }

  it('a new password set through PUT /api/user', async () => {
    const { user, app, token } = await userWithAppSession();
    expect((await apiCall(f.client, user.session, 'PUT', '/api/user', { password: 'Another-Passw0rd' })).status).toBe(200);
    expect(await rows(user.uuid)).toEqual([]);
    expect(await isLive(f.client, token)).toBe(false);
    expect((await postAuth(f.client, { username: user.email, password: app.password })).status).toBe(401);
  });

  it('enabling 2FA', async () => {
    const { user, token } = await userWithAppSession();
    dataOf(await apiCall(f.client, user.session, 'POST', '/api/user/2fa', { twofa: true }));
    expect(await rows(user.uuid)).toEqual([]);
    expect(await isLive(f.client, token)).toBe(false);
  });

  it('a password reset by an administrator', async () => {
    const { user, token } = await userWithAppSession();
    await f.client.updateUser(f.admin, user.uuid, { password: 'Reset-By-Admin-0' });
    expect(await rows(user.uuid)).toEqual([]);
    expect(await isLive(f.client, token)).toBe(false);
  });
});

describe('through the WebDAV bridge', () => {
  it('lets a WebDAV client of a 2FA account in with an app password, while the password alone is refused', async () => {
    const b = await bridgeFixture();
    try {
      const user = await b.newDavUser();
      dataOf(await apiCall(b.client, user.session, 'POST', '/api/user/2fa', { twofa: true }));
      const app = dataOf<Created>(await apiCall(b.client, user.session, 'POST', '/api/user/app_passwords', { name: 'Finder' }));
      const propfind = (password: string) => davRequest(b.davUrl, 'PROPFIND', '/', { auth: basicAuth(user.email, password), headers: { depth: '0' } });
      expect((await propfind(user.password)).status).toBe(401);
      expect((await propfind(app.password)).status).toBe(207);
      expect((await readHistoryRows(b.store, user.uuid)).slice(-2)).toMatchObject([
        { status: 'failure', error_details: 'two-factor code required' },
        { status: 'success', action_args: expect.stringMatching(/^app password "Finder"/) },
      ]);
    } finally {
      await b.close();
    }
  });
});
