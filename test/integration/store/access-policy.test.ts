/**
 * The table of which session may call what (src/store/policy.ts; issue 14 item 8): every route
 * the store registers, in either edition, has an entry and every entry a route; every in-process
 * operation names a route; and the table is what both transports apply: each bearer route
 * refuses what its entry refuses (an expired password, a non-administrator, an app-password
 * session) before the operation looks at anything, over HTTP and in-process alike.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalClient } from '../../../src/store/local-client.js';
import { OPERATION_ROUTES, ROUTE_POLICIES, routePolicy, type RoutePolicy } from '../../../src/store/policy.js';
import { StoreError, type StoreSession } from '../../../src/store-client/index.js';
import { startTestStore } from '../../helpers/start-store.js';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';
import { apiCall, dataOf, postAuth } from '../../helpers/user-api.js';

const DAY_MS = 24 * 60 * 60 * 1000;

async function registeredRoutes(edition: '3.0' | '1.0'): Promise<string[]> {
  const store = await startTestStore({ edition });
  try {
    return [...new Set(store.routes.filter((r) => !r.startsWith('HEAD ')))].sort();
  } finally {
    await store.close();
  }
}

describe('the table covers every route and operation', () => {
  let three: string[];
  let one: string[];
  beforeAll(async () => {
    [three, one] = await Promise.all([registeredRoutes('3.0'), registeredRoutes('1.0')]);
  });

  it('has an entry for every route registered, and no entry without a route', () => {
    expect(three.length).toBeGreaterThan(80);
    const missing = three.filter((key) => routePolicy(key.split(' ')[0] as string, key.slice(key.indexOf(' ') + 1)) === undefined);
    expect(missing).toEqual([]);
    expect(Object.keys(ROUTE_POLICIES).sort()).toEqual(three);
  });

  it('marks exactly the routes a 1.0 store lacks as edition 3.0', () => {
    expect(one.every((key) => three.includes(key))).toBe(true);
    const marked = Object.entries(ROUTE_POLICIES).filter(([, p]) => p.edition3).map(([key]) => key).sort();
    expect(marked).toEqual(three.filter((key) => !one.includes(key)));
  });

  it('names a route for every in-process StoreClient method', async () => {
    const store = await startTestStore();
    try {
      const methods = Object.keys(createLocalClient(store.ctx)).filter((m) => m !== 'close' && m !== 'groupCommit').sort();
      expect(Object.keys(OPERATION_ROUTES).sort()).toEqual(methods);
      for (const route of Object.values(OPERATION_ROUTES)) expect(three).toContain(route);
    } finally {
      await store.close();
    }
  });
});

describe('both transports apply it', () => {
  let f: StoreFixture;
  let user: TestUser;
  let appSession: string;
  let adminAppSession: string;
  let expiredSession: StoreSession;

  /** A request to a route with every path parameter a fresh UUID (nobody's), and an empty JSON body where one is taken. */
  function callRoute(token: string, key: string) {
    const [method, url] = key.split(' ') as ['GET' | 'POST' | 'PUT' | 'DELETE', string];
    const path = url.replace(/:[a-z_]+/g, () => randomUUID()).replace(/\*$/, 'x');
    return apiCall(f.client, token, method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
  }
  const bearerRoutes = (keep: (key: string, policy: RoutePolicy) => boolean) =>
    Object.entries(ROUTE_POLICIES)
      .filter(([key, p]) => p.credential === 'bearer' && keep(key, p))
      .map(([key]) => key);

  beforeAll(async () => {
    f = await storeFixture({ flags: { 'store.passwordMaxAgeDays': 30 } });
    f.store.clock.freeze();
    user = await f.newUser();
    const made = dataOf<{ password: string }>(await apiCall(f.client, user.session, 'POST', '/api/user/app_passwords', { name: 'dav' }));
    appSession = ((await postAuth(f.client, { username: user.email, password: made.password })).body as { token: string }).token;
    const adminMade = dataOf<{ password: string }>(await apiCall(f.client, f.admin, 'POST', '/api/user/app_passwords', { name: 'scripts' }));
    adminAppSession = ((await postAuth(f.client, { username: 'admin', password: adminMade.password })).body as { token: string }).token;
  });
  afterAll(async () => {
    await f.close();
  });

  it('refuses an app-password session every route its entry refuses (403 naming the app password), an administrator’s too; the share routes too without may_share', async () => {
    const refused = bearerRoutes((_key, p) => p.appPassword === 'refused' || p.appPassword === 'with-share-right');
    expect(bearerRoutes((_key, p) => p.appPassword === 'with-share-right').sort()).toEqual(
      ['DELETE /api/my_pending_shares/:pending_uuid', 'DELETE /api/shares/:share_uuid', 'POST /api/nodes/:id/shares', 'PUT /api/shares/:share_uuid'],
    );
    expect(refused).toEqual(expect.arrayContaining(['POST /api/groups/:group_uuid/users', 'PUT /api/groups/:group_uuid/users/:user_uuid', 'POST /api/nodes/:id/shares']));
    for (const key of refused) {
      const token = key.includes('/api/admin/') ? adminAppSession : appSession;
      const res = await callRoute(token, key);
      expect({ key, status: res.status, msg: (res.body as { msg?: string }).msg }).toEqual({ key, status: 403, msg: expect.stringMatching(/app password/) });
    }
  });

  it('refuses an app-password session every administrator route, GET /api/admin/about included; the password session reads it', async () => {
    expect(bearerRoutes((key) => key.includes('/api/admin/'))).toContain('GET /api/admin/about');
    expect(bearerRoutes((key, p) => key.includes('/api/admin/') && p.appPassword !== 'refused')).toEqual([]);
    const res = await apiCall(f.client, adminAppSession, 'GET', '/api/admin/about');
    expect({ status: res.status, msg: (res.body as { msg?: string }).msg }).toEqual({ status: 403, msg: expect.stringMatching(/app password/) });
    expect(dataOf<{ builtin_admin: boolean }>(await apiCall(f.client, f.admin, 'GET', '/api/admin/about')).builtin_admin).toBe(true);
  });

  it('refuses a non-administrator every administrator route before looking at anything', async () => {
    for (const key of bearerRoutes((key) => key.includes('/api/admin/'))) {
      const res = await callRoute(user.session.token, key);
      expect({ key, status: res.status, msg: (res.body as { msg?: string }).msg }).toEqual({ key, status: 403, msg: 'administrator privileges required' });
    }
  });

  // Last: it moves the clock past every session above.
  it('refuses an expired password every route but the four it may call, over HTTP and in-process', async () => {
    f.store.clock.advance(30 * DAY_MS);
    expiredSession = await f.client.login(user.email, user.password);
    const allowed = bearerRoutes((_key, p) => p.expiredPassword);
    // GET /api/session: the web app learns after a reload that its session waits for a new password.
    expect(allowed.sort()).toEqual(['GET /api/session', 'GET /api/user', 'GET /api/user/logout', 'PUT /api/user']);
    for (const key of bearerRoutes((key) => !allowed.includes(key))) {
      const res = await callRoute(expiredSession.token, key);
      expect({ key, status: res.status, code: (res.body as { code?: string }).code }).toEqual({ key, status: 403, code: 'password_expired' });
    }
    const local = createLocalClient(f.store.ctx);
    const expired = { kind: 'forbidden', httpStatus: 403, storeMsg: expect.stringMatching(/password has expired/) };
    await expect(local.listFolder(expiredSession, 'home' as never)).rejects.toMatchObject(expired);
    await expect(local.remove(expiredSession, randomUUID() as never)).rejects.toMatchObject(expired);
    await expect(local.userWebdrive(expiredSession)).rejects.toBeInstanceOf(StoreError);
    expect((await local.currentUser(expiredSession)).id).toBe(expiredSession.userId);
  });
});
