/**
 * GET /api/user/login_history: good and bad logins and logouts, newest first, with the client
 * address, time and how (`action_args`); only the caller's own; bounded per user and for unknown
 * usernames (`store.loginHistoryPerUser`); the client address taken from `X-Forwarded-For` only
 * when the peer is a trusted proxy, for the history, the session row and the rate limit.
 */
import { describe, expect, it } from 'vitest';
import { storeFixture, type StoreFixture } from '../../helpers/store-fixture.js';
import { apiCall, dataOf, frozenStoreSuite, readHistoryRows, postAuth } from '../../helpers/user-api.js';

interface Entry {
  action: string;
  action_args: string;
  error_details?: string;
  ip_address: string;
  status: string;
  timestamp: number;
}

describe('GET /api/user/login_history', () => {
  let f: StoreFixture;
  frozenStoreSuite((fixture) => {
    f = fixture;
  });

  it('lists logins that failed and succeeded and a logout, newest first, with address, time and how', async () => {
    const user = await f.newUser();
    const t0 = f.store.clock.now();
    f.store.clock.advance(1000);
    expect((await postAuth(f.client, { username: user.email, password: 'Wrong-Passw0rd' }, { 'user-agent': 'curl/8.5.0' })).status).toBe(401);
    f.store.clock.advance(1000);
    const good = await postAuth(f.client, { username: user.email, password: user.password }, { 'user-agent': `Mozilla/5.0 ${'x'.repeat(200)}` });
    f.store.clock.advance(1000);
    expect((await apiCall(f.client, (good.body as { token: string }).token, 'GET', '/api/user/logout')).status).toBe(200);

    const res = await apiCall(f.client, user.session, 'GET', '/api/user/login_history');
    expect(res.body).toMatchObject({ status: 'success', msg: 'login history' });
    const entries = dataOf<Entry[]>(res);
    expect(entries).toStrictEqual([
      { action: 'logout', action_args: '', ip_address: '127.0.0.1', status: 'success', timestamp: t0 + 3000 },
      { action: 'login', action_args: `password; client: Mozilla/5.0 ${'x'.repeat(100 - 'Mozilla/5.0 '.length)}`, ip_address: '127.0.0.1', status: 'success', timestamp: t0 + 2000 },
      { action: 'login', action_args: 'client: curl/8.5.0', error_details: 'wrong password', ip_address: '127.0.0.1', status: 'failure', timestamp: t0 + 1000 },
      // The fixture's own login, when the user was made.
      { action: 'login', action_args: 'password', ip_address: '127.0.0.1', status: 'success', timestamp: t0 },
    ]);
  });

  it('shows only the caller’s own entries, never the ones of unknown usernames', async () => {
    const me = await f.newUser();
    const other = await f.newUser();
    await postAuth(f.client, { username: other.email, password: 'Wrong-Passw0rd' });
    await postAuth(f.client, { username: 'ghost@example.org', password: 'Wrong-Passw0rd' });
    const entries = dataOf<Entry[]>(await apiCall(f.client, me.session, 'GET', '/api/user/login_history'));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'login', status: 'success' });
    expect(await readHistoryRows(f.store, null)).toContainEqual(expect.objectContaining({ error_details: 'unknown user' }));
  });

  it('answers 401 without a token', async () => {
    expect((await apiCall(f.client, undefined, 'GET', '/api/user/login_history')).status).toBe(401);
  });
});

describe('login history bounds', () => {
  it('keeps the newest loginHistoryPerUser entries of each user, and as many for unknown usernames', async () => {
    const f = await storeFixture({ flags: { 'store.loginHistoryPerUser': 10 } });
    try {
      f.store.clock.freeze();
      const user = await f.newUser();
      const first = f.store.clock.now();
      for (let i = 1; i <= 14; i += 1) {
        f.store.clock.advance(1000);
        await f.client.login(user.email, user.password);
      }
      const entries = dataOf<Entry[]>(await apiCall(f.client, user.session, 'GET', '/api/user/login_history'));
      expect(entries.map((e) => e.timestamp)).toEqual(Array.from({ length: 10 }, (_, i) => first + (14 - i) * 1000));
      expect(await readHistoryRows(f.store, user.uuid)).toHaveLength(10);

      for (let i = 0; i < 15; i += 1) await postAuth(f.client, { username: `nobody${i}@example.org`, password: 'Wrong-Passw0rd' });
      expect(await readHistoryRows(f.store, null)).toHaveLength(10);
      expect(await readHistoryRows(f.store, user.uuid)).toHaveLength(10);
    } finally {
      await f.close();
    }
  });
});

describe('client address behind a trusted proxy', () => {
  it('takes the address from X-Forwarded-For of a trusted peer, for the history, the session and the rate limit', async () => {
    const f = await storeFixture({ flags: { 'store.trustedProxies': ['127.0.0.1'] } });
    try {
      const user = await f.newUser();
      const res = await postAuth(f.client, { username: user.email, password: user.password }, { 'x-forwarded-for': '198.51.100.23' });
      expect(res.status).toBe(200);
      expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'success', ip_address: '198.51.100.23' });
      const session = await f.store.ctx.storage.sql.get('SELECT ip FROM sessions WHERE fileaccesskey = ?', [(res.body as { fileaccesskey: string }).fileaccesskey]);
      expect(session).toEqual({ ip: '198.51.100.23' });

      for (let i = 0; i < 10; i += 1) {
        await postAuth(f.client, { username: `spray${i}@example.org`, password: 'Wrong-Passw0rd' }, { 'x-forwarded-for': '203.0.113.9' });
      }
      const blocked = await postAuth(f.client, { username: user.email, password: user.password }, { 'x-forwarded-for': '203.0.113.9' });
      expect(blocked.status).toBe(429);
      // Another client behind the same proxy is not blocked with it.
      expect((await postAuth(f.client, { username: user.email, password: user.password }, { 'x-forwarded-for': '203.0.113.10' })).status).toBe(200);
      expect((await readHistoryRows(f.store, user.uuid)).at(-2)).toMatchObject({ error_details: 'rate limited', ip_address: '203.0.113.9' });
    } finally {
      await f.close();
    }
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const f = await storeFixture();
    try {
      const user = await f.newUser();
      expect((await postAuth(f.client, { username: user.email, password: user.password }, { 'x-forwarded-for': '198.51.100.23' })).status).toBe(200);
      expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ ip_address: '127.0.0.1' });
    } finally {
      await f.close();
    }
  });
});
