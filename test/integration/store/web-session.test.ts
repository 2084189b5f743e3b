/**
 * The web app's session (routes/web-session.ts, web-session.ts; docs/api.md "Sessions of the web
 * app"), against a real store and bridge: sign-in sets an HttpOnly, SameSite=Strict cookie and
 * answers no token; a call with the cookie needs the CSRF header and the store's own origin, and
 * a refused one changes nothing; bearer clients are unchanged (a cookie beside a token is
 * ignored); logout clears the cookie and ends the session; the bridge token works for tus and
 * dies with its session; web sessions end after their idle lifetime unless used, and at their
 * absolute one regardless.
 */
import { Upload } from 'tus-js-client';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_TTL_MS } from '../../../src/bridge/token-sessions.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import type { TestStore } from '../../helpers/start-store.js';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';
import { apiCall, dataOf } from '../../helpers/user-api.js';
import { davRequest } from '../../helpers/dav-requests.js';

const CSRF = { 'x-driveway-csrf': '1' };

interface Answer {
  status: number;
  body: { status?: string; msg?: string; code?: string; data?: Record<string, unknown> };
  setCookie: string | undefined;
}

/** A call as a browser page makes it: the headers given, nothing added. */
async function call(base: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, headers: Record<string, string>, json?: unknown): Promise<Answer> {
  const res = await request(`${base}${path}`, {
    method,
    headers: { accept: 'application/json', ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  const text = await res.body.text();
  const cookie = res.headers['set-cookie'];
  return { status: res.statusCode, body: text === '' ? {} : (JSON.parse(text) as Answer['body']), setCookie: Array.isArray(cookie) ? cookie.join('\n') : cookie };
}

/** The session token a Set-Cookie carries. */
function cookieToken(setCookie: string | undefined): string {
  const token = /driveway_session=([^;]*)/.exec(setCookie ?? '')?.[1];
  if (!token) throw new Error(`no session cookie in ${setCookie}`);
  return token;
}

async function signIn(base: string, username: string, password: string): Promise<{ cookie: string; token: string; data: Record<string, unknown> }> {
  const answer = await call(base, 'POST', '/api/session', CSRF, { username, password });
  expect(answer.status).toBe(200);
  const token = cookieToken(answer.setCookie);
  return { cookie: `driveway_session=${token}`, token, data: answer.body.data ?? {} };
}

describe('the web app\'s session cookie', () => {
  let f: BridgeFixture;
  let ada: DavUser;
  let base: string;

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 3600 } });
    ada = await f.newDavUser();
    base = f.store.url;
  });
  afterAll(async () => {
    await f.close();
  });

  const homeNames = async (): Promise<string[]> => (await f.client.listFolder(ada.session, 'home' as never)).map((e) => e.name);

  it('signs in with an HttpOnly, SameSite=Strict cookie and answers who it is without the token', async () => {
    const answer = await call(base, 'POST', '/api/session', CSRF, { username: ada.email, password: ada.password });
    expect(answer.status).toBe(200);
    expect(answer.setCookie).toMatch(/^driveway_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=86400; HttpOnly; SameSite=Strict$/);
    const token = cookieToken(answer.setCookie);
    expect(answer.body.data).toEqual({ uuid: ada.uuid, username: ada.email, fullname: 'Test User', is_admin: false, fileaccesskey: expect.any(String), avatar: expect.any(String) });
    expect(JSON.stringify(answer.body)).not.toContain(token);
    const row = await f.store.ctx.storage.sql.get<{ idle_sec: number; fileaccesskey: string }>('SELECT idle_sec, fileaccesskey FROM sessions WHERE user_uuid = ? ORDER BY created DESC LIMIT 1', [ada.uuid]);
    expect(row).toEqual({ idle_sec: 28_800, fileaccesskey: answer.body.data?.fileaccesskey });
    // After a reload the page asks who it is with the cookie alone.
    const again = await call(base, 'GET', '/api/session', { ...CSRF, cookie: `driveway_session=${token}` });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(answer.body.data);
  });

  it('keeps POST /auth\'s refusals: a wrong password is 401 and sets no cookie', async () => {
    const answer = await call(base, 'POST', '/api/session', CSRF, { username: ada.email, password: 'wrong-password' });
    expect(answer).toMatchObject({ status: 401, body: { status: 'error', code: 'unauthenticated' }, setCookie: undefined });
  });

  it('refuses a sign-in without the CSRF header (a cross-site form): no cookie, no session', async () => {
    const count = async () => Number((await f.store.ctx.storage.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM sessions WHERE user_uuid = ?', [ada.uuid]))?.n);
    const before = await count();
    const answer = await call(base, 'POST', '/api/session', {}, { username: ada.email, password: ada.password });
    expect(answer).toMatchObject({ status: 403, body: { status: 'error', code: 'forbidden' }, setCookie: undefined });
    expect(await count()).toBe(before);
  });

  it('refuses a write with the cookie but without the CSRF header, from another origin, or fetched cross-site; nothing is made', async () => {
    const { cookie } = await signIn(base, ada.email, ada.password);
    const refusals: Array<Record<string, string>> = [
      { cookie },
      { cookie, 'x-driveway-csrf': 'yes' },
      { cookie, ...CSRF, origin: 'https://evil.example' },
      { cookie, ...CSRF, 'sec-fetch-site': 'cross-site' },
      { cookie, ...CSRF, 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of refusals) {
      const answer = await call(base, 'POST', '/api/nodes/home', headers, { new_dir: 'forged' });
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(answer.body).toMatchObject({ status: 'error', code: 'forbidden' });
    }
    // SPEC's logout is a GET: a link or an image elsewhere cannot end the session either.
    expect((await call(base, 'GET', '/api/user/logout', { cookie })).status).toBe(403);
    expect(await homeNames()).not.toContain('forged');
    // With the header, from this origin, as the app calls: made.
    const made = await call(base, 'POST', '/api/nodes/home', { cookie, ...CSRF, origin: new URL(base).origin, 'sec-fetch-site': 'same-origin' }, { new_dir: 'from-the-app' });
    expect(made.status).toBe(204);
    expect(await homeNames()).toContain('from-the-app');
    expect((await call(base, 'GET', '/api/session', { cookie, ...CSRF })).status).toBe(200);
  });

  it('leaves bearer clients unchanged: no CSRF header needed, and a cookie beside the token is ignored', async () => {
    const bob = await f.newDavUser();
    const { cookie } = await signIn(base, ada.email, ada.password);
    const asBob = await call(base, 'GET', '/api/user', { authorization: `Bearer ${bob.session.token}`, cookie });
    expect(asBob.status).toBe(200);
    expect(asBob.body.data?.uuid).toBe(bob.uuid);
    // A bearer logout ends that session only and leaves the browser's cookie alone.
    const out = await call(base, 'GET', '/api/user/logout', { authorization: `Bearer ${bob.session.token}`, cookie });
    expect(out.status).toBe(200);
    expect(out.setCookie).toBeUndefined();
    expect((await call(base, 'GET', '/api/session', { cookie, ...CSRF })).body.data?.uuid).toBe(ada.uuid);
    // A bearer token cannot mint bridge tokens (it would outlive what it was given).
    const minted = await call(base, 'POST', '/api/session/bridge_token', { authorization: `Bearer ${ada.session.token}` });
    expect(minted).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  it('logs out with the cookie: the session ends in the store and the cookie is cleared; the old cookie is then 401 and cleared again', async () => {
    const { cookie, token } = await signIn(base, ada.email, ada.password);
    const out = await call(base, 'GET', '/api/user/logout', { cookie, ...CSRF });
    expect(out.status).toBe(200);
    expect(out.setCookie).toBe('driveway_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
    const revoked = await f.store.ctx.storage.sql.get<{ revoked: number | null }>('SELECT revoked FROM sessions WHERE fileaccesskey = (SELECT fileaccesskey FROM sessions WHERE user_uuid = ? ORDER BY created DESC LIMIT 1)', [ada.uuid]);
    expect(revoked?.revoked).not.toBeNull();
    const stale = await call(base, 'GET', '/api/session', { cookie, ...CSRF });
    expect(stale).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(stale.setCookie).toContain('Max-Age=0');
    expect((await apiCall(f.client, token, 'GET', '/api/user')).status).toBe(401);
  });

  it('mints a bridge token from the cookie that tus uploads with, and that dies with its session', async () => {
    const { cookie } = await signIn(base, ada.email, ada.password);
    const mint = async (): Promise<string> => {
      const answer = await call(base, 'POST', '/api/session/bridge_token', { cookie, ...CSRF });
      expect(answer.status).toBe(200);
      expect(answer.body.data?.expires_in).toBeGreaterThan(590);
      expect(answer.body.data?.expires_in).toBeLessThanOrEqual(600);
      return String(answer.body.data?.token);
    };
    const used = await mint();
    // Tokens of one session minted in the same second are the same token.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const unused = await mint();
    expect(unused).not.toBe(used);
    // Without the CSRF header: refused like any cookie call.
    expect((await call(base, 'POST', '/api/session/bridge_token', { cookie })).status).toBe(403);
    const bytes = Buffer.from('uploaded by the web app with its bridge token\n');
    await new Promise<void>((resolve, reject) => {
      const upload = new Upload(bytes, {
        endpoint: `${f.davUrl}/home/`,
        headers: { Authorization: `Bearer ${used}` },
        metadata: { filename: 'bridge-token.txt' },
        retryDelays: [],
        onError: reject,
        onSuccess: () => resolve(),
      });
      upload.start();
    });
    expect(await homeNames()).toContain('bridge-token.txt');

    expect((await call(base, 'GET', '/api/user/logout', { cookie, ...CSRF })).status).toBe(200);
    // The store refuses both at once; the bridge a token it never saw at once, one it saw within its memory's TTL.
    expect((await apiCall(f.client, used, 'GET', '/api/user')).status).toBe(401);
    expect((await apiCall(f.client, unused, 'GET', '/api/user')).status).toBe(401);
    const tusPost = (token: string, name: string) =>
      davRequest(f.davUrl, 'POST', '/home/', { auth: `Bearer ${token}`, headers: { 'tus-resumable': '1.0.0', 'upload-length': '1', 'upload-metadata': `filename ${Buffer.from(name).toString('base64')}` } });
    expect((await tusPost(unused, 'after-logout.txt')).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, TOKEN_TTL_MS + 100));
    expect((await tusPost(used, 'after-logout-2.txt')).status).toBe(401);
    expect(await homeNames()).not.toContain('after-logout.txt');
  });
});

describe('the web session behind a TLS proxy (store.publicUrl of https)', () => {
  let f: StoreFixture;
  let person: TestUser;

  beforeAll(async () => {
    f = await storeFixture({ flags: { 'store.publicUrl': 'https://files.example.test' } });
    person = await f.newUser();
  });
  afterAll(async () => {
    await f.close();
  });

  it('sets the cookie Secure and takes calls from the public origin, still none from another', async () => {
    const answer = await call(f.store.url, 'POST', '/api/session', { ...CSRF, origin: 'https://files.example.test' }, { username: person.email, password: person.password });
    expect(answer.status).toBe(200);
    expect(answer.setCookie).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    const cookie = `driveway_session=${cookieToken(answer.setCookie)}`;
    expect((await call(f.store.url, 'POST', '/api/nodes/home', { cookie, ...CSRF, origin: 'https://files.example.test' }, { new_dir: 'public-origin' })).status).toBe(204);
    expect((await call(f.store.url, 'POST', '/api/nodes/home', { cookie, ...CSRF, origin: 'https://evil.example.test' }, { new_dir: 'other-origin' })).status).toBe(403);
    expect((await f.client.listFolder(person.session, 'home' as never)).map((e) => e.name)).toEqual(['public-origin']);
  });
});

describe('the web session\'s lifetimes', () => {
  let f: StoreFixture;
  let store: TestStore;
  let person: TestUser;

  beforeAll(async () => {
    f = await storeFixture();
    store = f.store;
    person = await f.newUser();
    store.clock.freeze();
  });
  afterAll(async () => {
    await f.close();
  });

  const HOUR_MS = 3_600_000;
  const alive = async (cookie: string): Promise<boolean> => (await call(store.url, 'GET', '/api/session', { cookie, ...CSRF })).status === 200;

  it('ends a web session unused for 8 hours, and keeps one that is used', async () => {
    const idle = await signIn(store.url, person.email, person.password);
    const used = await signIn(store.url, person.email, person.password);
    store.clock.advance(7 * HOUR_MS);
    expect(await alive(used.cookie)).toBe(true);
    store.clock.advance(1 * HOUR_MS + 1000);
    expect(await alive(idle.cookie)).toBe(false);
    expect(await alive(used.cookie)).toBe(true);
    store.clock.advance(8 * HOUR_MS + 1000);
    expect(await alive(used.cookie)).toBe(false);
  });

  it('ends a web session at its absolute lifetime (24 hours) however much it is used, and leaves SPEC tokens without idle expiry', async () => {
    const web = await signIn(store.url, person.email, person.password);
    const spec = await call(store.url, 'POST', '/auth', {}, { username: person.email, password: person.password });
    const specToken = String((spec.body as { token?: string }).token);
    for (const hours of [4, 4, 4, 4, 4, 3]) {
      store.clock.advance(hours * HOUR_MS);
      expect(await alive(web.cookie)).toBe(true);
    }
    expect((await call(store.url, 'GET', '/api/user', { authorization: `Bearer ${specToken}` })).status).toBe(200);
    store.clock.advance(1 * HOUR_MS);
    expect(await alive(web.cookie)).toBe(false);
  });
});
