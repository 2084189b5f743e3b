/**
 * Login, sessions and logout against a real store: the Session object (docs/api.md), credential
 * failures that all look alike, the failed-login limiter (per username, per IP, recovery),
 * token lifetime on the injected clock, revocation by logout and by deactivation, and every
 * way a bearer token can be wrong.
 */
import { SignJWT } from 'jose';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authenticateFileAccessKey } from '../../../src/store/sessions.js';
import { createStoreClient, type HttpStoreClient, type StoreSession } from '../../../src/store-client/index.js';
import { ADMIN_PASSWORD, startTestStore, type TestStore } from '../../helpers/start-store.js';

const USER_PASSWORD = 'User-Passw0rd';
const DAY_MS = 24 * 60 * 60 * 1000;
const BAD_CREDENTIALS = { status: 'error', msg: 'wrong username or password', code: 'unauthenticated' };

interface SessionRowView {
  user_uuid: string;
  fileaccesskey: string;
  revoked: number | null;
  expires: number;
  created: number;
  ip: string;
}

function sessionRows(store: TestStore, userUuid: string): Promise<SessionRowView[]> {
  return store.ctx.storage.sql.all<SessionRowView>('SELECT * FROM sessions WHERE user_uuid = ? ORDER BY created', [userUuid]);
}

function loginEvents(store: TestStore, userUuid: string | null): Promise<Array<Record<string, unknown>>> {
  const columns = 'SELECT action, status, error_details, ip_address, action_args FROM login_events';
  return userUuid === null
    ? store.ctx.storage.sql.all(`${columns} WHERE user_uuid IS NULL ORDER BY id`)
    : store.ctx.storage.sql.all(`${columns} WHERE user_uuid = ? ORDER BY id`, [userUuid]);
}

async function rawLogin(client: HttpStoreClient, username: unknown, password: unknown) {
  return client.http.requestRaw({ method: 'POST', path: '/auth', json: { username, password } });
}

async function rawGetUser(client: HttpStoreClient, authorization?: string) {
  return client.http.requestRaw({ method: 'GET', path: '/api/user', headers: authorization === undefined ? {} : { authorization } });
}

/** Clients whose connections come from distinct loopback addresses (Linux routes all of 127/8 to lo). */
function clientFrom(store: TestStore, ip: string, opened: Array<{ client: HttpStoreClient; agent: Agent }>): HttpStoreClient {
  const agent = new Agent({ localAddress: ip });
  const client = createStoreClient(store.url, { dispatcher: agent, retries: 0 });
  opened.push({ client, agent });
  return client;
}

describe('POST /auth and sessions', () => {
  let store: TestStore;
  let client: HttpStoreClient;
  let admin: StoreSession;
  let adminUuid: string;

  async function createUser(email: string, fullname = 'Regular User', extra: { isActive?: boolean } = {}): Promise<string> {
    const uuid = await client.createUser(admin, { fullname, email, password: USER_PASSWORD, ...extra });
    if (!uuid) throw new Error('store did not return the new uuid');
    return uuid;
  }

  beforeAll(async () => {
    store = await startTestStore();
    client = createStoreClient(store.url, { retries: 0 });
    adminUuid = ((await store.ctx.storage.sql.get<{ uuid: string }>('SELECT uuid FROM users WHERE is_builtin = 1')) as { uuid: string }).uuid;
  });
  // The lifetime test moves the clock by a day: every test gets a fresh admin session.
  beforeEach(async () => {
    admin = await client.login('admin', ADMIN_PASSWORD);
  });
  afterAll(async () => {
    await client.close();
    await store.close();
  });

  it('answers the built-in admin with exactly the Session object (docs/api.md)', async () => {
    const res = await rawLogin(client, 'admin', ADMIN_PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      uuid: adminUuid,
      token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      status: 'success',
      msg: 'logged in',
      is_admin: true,
      fullname: 'Administrator',
      fileaccesskey: expect.stringMatching(/^[\w-]{20,}$/),
      avatar: '',
    });
    const body = res.body as { token: string; fileaccesskey: string };
    const claims = JSON.parse(Buffer.from(body.token.split('.')[1] as string, 'base64url').toString('utf8')) as Record<string, number | string>;
    expect(claims.sub).toBe(adminUuid);
    expect(Number(claims.exp) - Number(claims.iat)).toBe(DAY_MS / 1000);
    const row = (await sessionRows(store, adminUuid)).find((r) => r.fileaccesskey === body.fileaccesskey);
    expect(row).toMatchObject({ revoked: null, ip: '127.0.0.1' });
    expect((row as SessionRowView).expires - (row as SessionRowView).created).toBe(DAY_MS);
  });

  it('answers a regular user with is_admin false, their name, and records the login', async () => {
    const uuid = await createUser('plain.user@example.org', 'Plain User');
    const res = await rawLogin(client, 'plain.user@example.org', USER_PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ uuid, status: 'success', is_admin: false, fullname: 'Plain User', avatar: '' });
    expect(Object.keys(res.body as object).sort()).toEqual(['avatar', 'fileaccesskey', 'fullname', 'is_admin', 'msg', 'status', 'token', 'uuid']);
    expect(await loginEvents(store, uuid)).toEqual([{ action: 'login', status: 'success', error_details: '', ip_address: '127.0.0.1', action_args: 'password' }]);
    const session = await client.login('plain.user@example.org', USER_PASSWORD);
    expect((await client.currentUser(session)).id).toBe(uuid);
  });

  it('gives every login its own token and fileaccesskey', async () => {
    const a = await client.login('admin', ADMIN_PASSWORD);
    const b = await client.login('admin', ADMIN_PASSWORD);
    expect(a.token).not.toBe(b.token);
    expect(a.fileAccessKey).not.toBe(b.fileAccessKey);
  });

  it('matches the email case-insensitively, and the admin name too', async () => {
    const uuid = await createUser('Mixed.Case@Example.org', 'Mixed Case');
    for (const username of ['Mixed.Case@Example.org', 'mixed.case@example.org', 'MIXED.CASE@EXAMPLE.ORG']) {
      expect((await client.login(username, USER_PASSWORD)).userId).toBe(uuid);
    }
    expect((await client.login('ADMIN', ADMIN_PASSWORD)).userId).toBe(adminUuid);
  });

  it('answers a wrong password, an unknown user and an inactive account with the same 401 body', async () => {
    const activeUuid = await createUser('wrong.pw@example.org');
    const inactiveUuid = await createUser('inactive@example.org', 'Inactive User', { isActive: false });
    const attempts = [
      await rawLogin(client, 'wrong.pw@example.org', 'Not-The-Passw0rd'),
      await rawLogin(client, 'nobody@example.org', USER_PASSWORD),
      await rawLogin(client, 'inactive@example.org', USER_PASSWORD),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual(BAD_CREDENTIALS);
    }
    expect(await sessionRows(store, activeUuid)).toEqual([]);
    expect(await sessionRows(store, inactiveUuid)).toEqual([]);
    expect(await loginEvents(store, activeUuid)).toMatchObject([{ action: 'login', status: 'failure', error_details: 'wrong password' }]);
    expect(await loginEvents(store, inactiveUuid)).toMatchObject([{ action: 'login', status: 'failure', error_details: 'inactive account' }]);
    expect(await loginEvents(store, null)).toContainEqual(expect.objectContaining({ status: 'failure', error_details: 'unknown user' }));
  });

  it('never stores a password or token in the login history', async () => {
    await rawLogin(client, 'nobody@example.org', 'Typed-Secret-1');
    const dump = JSON.stringify(await store.ctx.storage.sql.all('SELECT * FROM login_events'));
    expect(dump).not.toContain('Typed-Secret-1');
    expect(dump).not.toContain(ADMIN_PASSWORD);
    expect(dump).not.toContain(USER_PASSWORD);
    expect(dump).not.toContain(admin.token);
  });

  it.each([
    ['no body', undefined],
    ['a missing password', { username: 'admin' }],
    ['a non-string username', { username: 42, password: 'x' }],
    ['an empty username', { username: '', password: 'x' }],
    ['a password longer than 1024 characters', { username: 'admin', password: 'x'.repeat(1025) }],
  ])('answers 400 invalid_request for %s', async (_what, json) => {
    const res = await client.http.requestRaw({ method: 'POST', path: '/auth', json });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request' });
  });

  it('accepts a login without any Authorization header and ignores one that is sent', async () => {
    const res = await client.http.requestRaw({
      method: 'POST',
      path: '/auth',
      json: { username: 'admin', password: ADMIN_PASSWORD },
      headers: { authorization: 'Bearer garbage' },
    });
    expect(res.status).toBe(200);
  });

  describe('bearer tokens', () => {
    it.each([
      ['no Authorization header', undefined],
      ['an empty header', ''],
      ['the scheme alone', 'Bearer'],
      ['another scheme', `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`],
      ['garbage', 'Bearer garbage'],
      ['three garbage segments', 'Bearer aaa.bbb.ccc'],
      ['two tokens', 'Bearer a b'],
    ])('answers 401 unauthenticated for %s', async (_what, header) => {
      const res = await rawGetUser(client, header);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ status: 'error', code: 'unauthenticated' });
    });

    it('answers 401 for a token whose signature was altered', async () => {
      const session = await client.login('admin', ADMIN_PASSWORD);
      const [header, payload, signature] = session.token.split('.') as [string, string, string];
      const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
      expect((await rawGetUser(client, `Bearer ${header}.${payload}.${flipped}`)).status).toBe(401);
      expect((await rawGetUser(client, `Bearer ${session.token}`)).status).toBe(200);
    });

    it('answers 401 for a JWT signed with another secret, even with a live session id', async () => {
      const session = await client.login('admin', ADMIN_PASSWORD);
      const claims = JSON.parse(Buffer.from(session.token.split('.')[1] as string, 'base64url').toString('utf8')) as { jti: string; exp: number };
      const forged = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(adminUuid)
        .setJti(claims.jti)
        .setIssuedAt()
        .setExpirationTime(claims.exp)
        .sign(new TextEncoder().encode('a-completely-different-secret-of-48-characters!!'));
      const res = await rawGetUser(client, `Bearer ${forged}`);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthenticated' });
    });

    it('answers 401 for an unsigned (alg none) token', async () => {
      const session = await client.login('admin', ADMIN_PASSWORD);
      const payload = session.token.split('.')[1] as string;
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      expect((await rawGetUser(client, `Bearer ${header}.${payload}.`)).status).toBe(401);
    });

    it('accepts the scheme name in any case', async () => {
      const session = await client.login('admin', ADMIN_PASSWORD);
      expect((await rawGetUser(client, `bearer ${session.token}`)).status).toBe(200);
    });
  });

  describe('token lifetime', () => {
    it('accepts a token until 24 hours after login and refuses it afterwards', async () => {
      const session = await client.login('admin', ADMIN_PASSWORD);
      store.clock.advance(DAY_MS - 5_000);
      expect((await rawGetUser(client, `Bearer ${session.token}`)).status).toBe(200);
      store.clock.advance(10_000);
      const res = await rawGetUser(client, `Bearer ${session.token}`);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthenticated' });
      const fresh = await client.login('admin', ADMIN_PASSWORD);
      expect((await rawGetUser(client, `Bearer ${fresh.token}`)).status).toBe(200);
      expect((await authenticateFileAccessKey(store.ctx.storage.sql, store.clock, session.fileAccessKey))).toBeUndefined();
    });
  });

  describe('GET /api/user/logout', () => {
    it('revokes the token and the fileaccesskey of that session only, and records a logout', async () => {
      const uuid = await createUser('logout.user@example.org');
      const ending = await client.login('logout.user@example.org', USER_PASSWORD);
      const other = await client.login('logout.user@example.org', USER_PASSWORD);
      expect((await authenticateFileAccessKey(store.ctx.storage.sql, store.clock, ending.fileAccessKey))?.userUuid).toBe(uuid);

      const res = await client.http.requestRaw({ method: 'GET', path: '/api/user/logout', token: ending.token });
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ status: 'success', msg: 'logged out' });

      expect((await rawGetUser(client, `Bearer ${ending.token}`)).status).toBe(401);
      expect((await authenticateFileAccessKey(store.ctx.storage.sql, store.clock, ending.fileAccessKey))).toBeUndefined();
      expect((await sessionRows(store, uuid)).find((r) => r.fileaccesskey === ending.fileAccessKey)?.revoked).toEqual(expect.any(Number));

      expect((await rawGetUser(client, `Bearer ${other.token}`)).status).toBe(200);
      expect((await authenticateFileAccessKey(store.ctx.storage.sql, store.clock, other.fileAccessKey))?.userUuid).toBe(uuid);
      expect((await loginEvents(store, uuid)).map((e) => `${String(e.action)}:${String(e.status)}`)).toEqual(['login:success', 'login:success', 'logout:success']);
    });

    it('accepts and ignores chat_token, and a second logout with the same token is 401', async () => {
      const session = await client.login('admin', ADMIN_PASSWORD);
      const first = await client.http.requestRaw({ method: 'GET', path: '/api/user/logout?chat_token=chat-123', token: session.token });
      expect(first.status).toBe(200);
      const again = await client.http.requestRaw({ method: 'GET', path: '/api/user/logout', token: session.token });
      expect(again.status).toBe(401);
    });

    it('works through the client', async () => {
      const session = await client.login('admin', ADMIN_PASSWORD);
      await client.logout(session);
      await expect(client.currentUser(session)).rejects.toMatchObject({ kind: 'unauthenticated' });
    });

    it('needs a token', async () => {
      const res = await client.http.requestRaw({ method: 'GET', path: '/api/user/logout' });
      expect(res.status).toBe(401);
    });
  });

  describe('deactivation', () => {
    it('revokes every session of the user at once and refuses new logins with the usual 401', async () => {
      const uuid = await createUser('deactivated@example.org');
      const sessions = [await client.login('deactivated@example.org', USER_PASSWORD), await client.login('deactivated@example.org', USER_PASSWORD)];
      await client.updateUser(admin, uuid, { isActive: false });
      for (const s of sessions) {
        expect((await rawGetUser(client, `Bearer ${s.token}`)).status).toBe(401);
        expect((await authenticateFileAccessKey(store.ctx.storage.sql, store.clock, s.fileAccessKey))).toBeUndefined();
      }
      expect((await sessionRows(store, uuid)).every((r) => r.revoked !== null)).toBe(true);
      const res = await rawLogin(client, 'deactivated@example.org', USER_PASSWORD);
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual(BAD_CREDENTIALS);

      await client.updateUser(admin, uuid, { isActive: true });
      expect((await rawGetUser(client, `Bearer ${(sessions[0] as StoreSession).token}`)).status).toBe(401);
      expect((await client.login('deactivated@example.org', USER_PASSWORD)).userId).toBe(uuid);
    });
  });
});

describe('failed-login limit', () => {
  let store: TestStore;
  let client: HttpStoreClient;
  const opened: Array<{ client: HttpStoreClient; agent: Agent }> = [];
  let nextIp = 10;
  const freshIp = (): string => `127.0.0.${nextIp++}`;

  beforeAll(async () => {
    store = await startTestStore();
    // Only the hand-moved clock counts, so Retry-After values are exact however slow the machine.
    store.clock.freeze();
    client = createStoreClient(store.url, { retries: 0 });
    const admin = await client.login('admin', ADMIN_PASSWORD);
    await client.createUser(admin, { fullname: 'Limited User', email: 'limited@example.org', password: USER_PASSWORD });
    await client.createUser(admin, { fullname: 'Other User', email: 'other@example.org', password: USER_PASSWORD });
  });
  afterEach(async () => {
    for (const { client: c, agent } of opened.splice(0)) {
      await c.close();
      await agent.close();
    }
    // Every test starts with empty counters: move past the 15-minute window.
    store.clock.advance(16 * 60 * 1000);
  });
  afterAll(async () => {
    await client.close();
    await store.close();
  });

  it('answers 429 rate_limited with Retry-After after 10 failures for one username, from any address', async () => {
    for (let i = 0; i < 10; i += 1) {
      const res = await rawLogin(clientFrom(store, freshIp(), opened), 'Limited@Example.org', `Wrong-Passw0rd-${i}`);
      expect(res.status).toBe(401);
    }
    const blocked = await rawLogin(clientFrom(store, freshIp(), opened), 'limited@example.org', USER_PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toStrictEqual({ status: 'error', msg: 'too many failed logins; try again later', code: 'rate_limited' });
    expect(Number(blocked.headers['retry-after'])).toBe(15 * 60);

    const otherUser = await rawLogin(clientFrom(store, freshIp(), opened), 'other@example.org', USER_PASSWORD);
    expect(otherUser.status).toBe(200);
  });

  it('answers 429 after 10 failures from one address, whatever the usernames, and only for that address', async () => {
    const ip = freshIp();
    for (let i = 0; i < 10; i += 1) {
      const res = await rawLogin(clientFrom(store, ip, opened), `spray${i}@example.org`, 'Wrong-Passw0rd');
      expect(res.status).toBe(401);
    }
    const blocked = await rawLogin(clientFrom(store, ip, opened), 'other@example.org', USER_PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ code: 'rate_limited' });
    const elsewhere = await rawLogin(clientFrom(store, freshIp(), opened), 'other@example.org', USER_PASSWORD);
    expect(elsewhere.status).toBe(200);
  });

  it('counts down Retry-After and lets logins through once the window has passed', async () => {
    const ip = freshIp();
    for (let i = 0; i < 10; i += 1) await rawLogin(clientFrom(store, ip, opened), 'limited@example.org', 'Wrong-Passw0rd');
    store.clock.advance(10 * 60 * 1000);
    const stillBlocked = await rawLogin(clientFrom(store, ip, opened), 'limited@example.org', USER_PASSWORD);
    expect(stillBlocked.status).toBe(429);
    expect(Number(stillBlocked.headers['retry-after'])).toBe(5 * 60);
    store.clock.advance(5 * 60 * 1000 - 1_000);
    expect((await rawLogin(clientFrom(store, ip, opened), 'limited@example.org', USER_PASSWORD)).headers['retry-after']).toBe('1');

    store.clock.advance(1_000);
    const res = await rawLogin(clientFrom(store, ip, opened), 'limited@example.org', USER_PASSWORD);
    expect(res.status).toBe(200);
  });

  it('does not count blocked attempts, and records them in the login history', async () => {
    const ip = freshIp();
    for (let i = 0; i < 10; i += 1) await rawLogin(clientFrom(store, ip, opened), 'limited@example.org', 'Wrong-Passw0rd');
    for (let i = 0; i < 5; i += 1) expect((await rawLogin(clientFrom(store, ip, opened), 'limited@example.org', 'Wrong-Passw0rd')).status).toBe(429);
    const uuid = ((await store.ctx.storage.sql.get<{ uuid: string }>("SELECT uuid FROM users WHERE username = 'limited@example.org'")) as { uuid: string }).uuid;
    const limited = await store.ctx.storage.sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM login_events WHERE user_uuid = ? AND error_details = 'rate limited' AND ip_address = ?", [uuid, ip]);
    expect(Number(limited?.n)).toBe(5);
    store.clock.advance(15 * 60 * 1000 + 1_000);
    expect((await rawLogin(clientFrom(store, ip, opened), 'limited@example.org', USER_PASSWORD)).status).toBe(200);
  });

  it('forgets the failures of a username after a successful login', async () => {
    for (let i = 0; i < 9; i += 1) await rawLogin(clientFrom(store, freshIp(), opened), 'limited@example.org', 'Wrong-Passw0rd');
    expect((await rawLogin(clientFrom(store, freshIp(), opened), 'limited@example.org', USER_PASSWORD)).status).toBe(200);
    for (let i = 0; i < 9; i += 1) {
      expect((await rawLogin(clientFrom(store, freshIp(), opened), 'limited@example.org', 'Wrong-Passw0rd')).status).toBe(401);
    }
    expect((await rawLogin(clientFrom(store, freshIp(), opened), 'limited@example.org', USER_PASSWORD)).status).toBe(200);
  });
});
