/**
 * Login as the Nextcloud and ownCloud clients do it (bridge/nextcloud/login-flow.ts), over HTTP
 * against a real store and bridge: Login Flow v2's start, poll and the web app's grant and
 * cancel (the page's calls made here as the page makes them, with an app password made through
 * the store's API); tokens' shape and expiry on the bridge's clock; the poll answering once; the
 * bound per address; a grant that does not log in refused; Login Flow v1's redirect and `nc://`
 * address; revoking the app password stopping the client at its next request; and what the
 * state keeps (no token, no password in the clear).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { clientNameOf, LOGIN_FLOW_LIMITS, LOGIN_FLOW_TTL_MS } from '../../../src/bridge/nextcloud/login-flow.js';
import { SESSION_CONFIRM_MS } from '../../../src/bridge/sessions.js';
import { openBridgeStateFile } from '../../../src/store/storage/dav-state.js';
import { davRequest, type DavAnswer } from '../../helpers/dav-requests.js';
import { createLogger } from '../../../src/common/logger.js';
import { startBridge } from '../../../src/bridge/server.js';
import { basicAuth, bridgeFixture, bridgeStateFor, bridgeStoreFor, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { apiCall, dataOf } from '../../helpers/user-api.js';

const DESKTOP = 'Mozilla/5.0 (Linux) mirall/3.7.3 (Nextcloud, debian-6.1.0 ClientArchitecture: x86_64 OsArchitecture: x86_64)';
const ANDROID = 'Mozilla/5.0 (Android) Nextcloud-android/3.29.0';
/** The desktop client's name as the flow keeps it (an app password's name holds 100 characters). */
const DESKTOP_NAME = clientNameOf(DESKTOP);
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const DEPTH0 = { depth: '0', 'content-type': 'application/xml' };

interface Started {
  poll: { token: string; endpoint: string };
  login: string;
}

describe('Nextcloud login flows through the bridge', () => {
  let f: BridgeFixture;
  let ada: DavUser;
  const clock = new ManualClock();

  beforeAll(async () => {
    f = await bridgeFixture({ clock });
    ada = await f.newDavUser();
  });
  afterAll(async () => {
    await f?.close();
  });

  const json = (answer: DavAnswer): unknown => JSON.parse(answer.text);
  const start = async (path = '/index.php/login/v2', agent = DESKTOP): Promise<DavAnswer> => davRequest(f.davUrl, 'POST', path, { headers: { 'user-agent': agent } });
  const started = async (agent = DESKTOP): Promise<Started> => {
    const answer = await start('/index.php/login/v2', agent);
    expect(answer.status, answer.text).toBe(200);
    return json(answer) as Started;
  };
  const loginTokenOf = (flow: Started): string => new URL(flow.login).searchParams.get('token') ?? '';
  const poll = (token: string): Promise<DavAnswer> =>
    davRequest(f.davUrl, 'POST', '/index.php/login/v2/poll', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(token)}` });
  const pageCall = (method: 'GET' | 'POST', what: 'grant' | 'cancel', body?: Record<string, string>, query = ''): Promise<DavAnswer> =>
    davRequest(f.davUrl, method, `/index.php/login/v2/${what}${query}`, body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {});
  const newAppPassword = async (name: string): Promise<{ uuid: string; password: string }> => dataOf(await apiCall(f.client, ada.session, 'POST', '/api/user/app_passwords', { name }));
  const grant = (flow: Started | string, appPassword: string, loginName = ada.email): Promise<DavAnswer> =>
    pageCall('POST', 'grant', { token: typeof flow === 'string' ? flow : loginTokenOf(flow), loginName, appPassword });
  const propfind = (auth: string): Promise<DavAnswer> => davRequest(f.davUrl, 'PROPFIND', '/home/', { auth, headers: DEPTH0 });

  /** The rows the bridge's state holds, wherever it keeps them (the store's database, or its own file over HTTP). */
  async function flowRows(): Promise<Array<Record<string, unknown>>> {
    if (TEST_TRANSPORT === 'local') return f.store.ctx.storage.sql.all('SELECT * FROM dav_login_flows');
    const file = openBridgeStateFile(path.join(f.store.config.dataDir, 'bridge.sqlite'));
    try {
      return await file.sql.all('SELECT * FROM dav_login_flows');
    } finally {
      await file.close();
    }
  }

  it('opens a v2 flow: two distinct 256-bit tokens, the poll endpoint on the bridge, the login page in the web app', async () => {
    const flow = await started();
    expect(flow.poll.token).toMatch(TOKEN);
    expect(flow.poll.endpoint).toBe(`${f.davUrl}/index.php/login/v2/poll`);
    expect(flow.login.startsWith(`${f.store.url}/client-login?token=`)).toBe(true);
    expect(loginTokenOf(flow)).toMatch(TOKEN);
    expect(loginTokenOf(flow)).not.toBe(flow.poll.token);
    // Without Nextcloud's /index.php, as clients configured for pretty URLs ask.
    const bare = json(await start('/login/v2')) as Started;
    expect(bare.poll.endpoint).toBe(`${f.davUrl}/login/v2/poll`);
    // The page learns who asks.
    const details = await pageCall('GET', 'grant', undefined, `?token=${loginTokenOf(flow)}`);
    expect(details.status).toBe(200);
    expect(json(details)).toMatchObject({ client: DESKTOP_NAME, kind: 'v2', address: '127.0.0.1' });
  });

  it('answers the poll 404 until the grant, then the app password once, then 404; the password logs in to the drive', async () => {
    const flow = await started();
    const pending = await poll(flow.poll.token);
    expect(pending.status).toBe(404);
    expect(json(pending)).toEqual([]);

    const made = await newAppPassword(DESKTOP_NAME);
    const granted = await grant(flow, made.password);
    expect(granted.status, granted.text).toBe(200);
    // Kept sealed: no column holds the password or either token in the clear.
    const rows = await flowRows();
    const row = rows.find((r) => r.login_name === ada.email);
    expect(row).toBeDefined();
    for (const value of Object.values(row ?? {})) {
      for (const secret of [made.password, flow.poll.token, loginTokenOf(flow)]) expect(String(value)).not.toContain(secret);
    }
    // The page cannot grant it twice.
    expect((await grant(flow, made.password)).status).toBe(404);

    const answer = await poll(flow.poll.token);
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer)).toEqual({ server: f.davUrl, loginName: ada.email, appPassword: made.password });
    expect((await poll(flow.poll.token)).status).toBe(404);
    expect((await flowRows()).some((r) => r.login_name === ada.email)).toBe(false);

    expect((await propfind(basicAuth(ada.email, made.password))).status).toBe(207);
  });

  it('refuses a grant whose password does not log in (403) and keeps the flow open; the poll stays 404', async () => {
    const flow = await started();
    const refused = await grant(flow, 'abcdef-ghijkl-mnopqr-stuvwx');
    expect(refused.status).toBe(403);
    expect(json(refused)).toMatchObject({ status: 'error' });
    expect((await grant(flow, (await newAppPassword('other')).password, 'nobody@example.test')).status).toBe(403);
    expect((await poll(flow.poll.token)).status).toBe(404);
    expect((await pageCall('GET', 'grant', undefined, `?token=${loginTokenOf(flow)}`)).status).toBe(200);
  });

  it('answers 404 for a wrong token, 400 for none', async () => {
    const wrong = randomBytes(32).toString('base64url');
    expect((await poll(wrong)).status).toBe(404);
    expect((await davRequest(f.davUrl, 'POST', '/index.php/login/v2/poll')).status).toBe(400);
    expect((await pageCall('GET', 'grant', undefined, `?token=${wrong}`)).status).toBe(404);
    expect((await grant(wrong, (await newAppPassword('x')).password)).status).toBe(404);
    expect((await pageCall('POST', 'cancel', { token: wrong })).status).toBe(404);
    // The poll token does not stand in for the login token, nor the other way round.
    const flow = await started();
    expect((await pageCall('GET', 'grant', undefined, `?token=${flow.poll.token}`)).status).toBe(404);
    expect((await poll(loginTokenOf(flow))).status).toBe(404);
  });

  it('ends a flow on cancel: the page and the poll find nothing after', async () => {
    const flow = await started();
    expect((await pageCall('POST', 'cancel', { token: loginTokenOf(flow) })).status).toBe(200);
    expect((await pageCall('GET', 'grant', undefined, `?token=${loginTokenOf(flow)}`)).status).toBe(404);
    expect((await grant(flow, (await newAppPassword('late')).password)).status).toBe(404);
    expect((await poll(flow.poll.token)).status).toBe(404);
    expect((await pageCall('POST', 'cancel', { token: loginTokenOf(flow) })).status).toBe(404);
  });

  it('expires a flow after 20 minutes on the bridge\'s clock: not grantable, and a grant not polled in time is gone', async () => {
    const early = await started();
    const late = await started();
    clock.advance(LOGIN_FLOW_TTL_MS - 60_000);
    expect((await grant(late, (await newAppPassword(DESKTOP_NAME)).password)).status).toBe(200);
    clock.advance(60_001);
    expect((await pageCall('GET', 'grant', undefined, `?token=${loginTokenOf(early)}`)).status).toBe(404);
    expect((await grant(early, (await newAppPassword(DESKTOP_NAME)).password)).status).toBe(404);
    expect((await poll(late.poll.token)).status).toBe(404);
  });

  it('bounds the open flows per address (429 with Retry-After past it); a cancelled or expired one frees its place', async () => {
    clock.advance(LOGIN_FLOW_TTL_MS + 1);
    const flows: Started[] = [];
    for (let i = 0; i < LOGIN_FLOW_LIMITS.maxPerAddress; i++) flows.push(await started());
    const refused = await start();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await davRequest(f.davUrl, 'GET', '/index.php/login/flow', { headers: { 'user-agent': ANDROID } })).status).toBe(429);
    expect((await pageCall('POST', 'cancel', { token: loginTokenOf(flows[0] as Started) })).status).toBe(200);
    expect((await start()).status).toBe(200);
    expect((await start()).status).toBe(429);
    clock.advance(LOGIN_FLOW_TTL_MS + 1);
    expect((await start()).status).toBe(200);
    clock.advance(LOGIN_FLOW_TTL_MS + 1);
  });

  // Over HTTP each bridge keeps its own bridge.sqlite: only bridges over the store's database share flows.
  it.skipIf(TEST_TRANSPORT === 'http')('shares a flow between two bridges over one database: opened on one, granted and polled on the other', async () => {
    const other = await startBridge({
      config: f.store.config,
      logger: createLogger('silent'),
      store: bridgeStoreFor(f.store, 'local'),
      state: await bridgeStateFor(f.store, 'local'),
      port: 0,
      webApp: { port: Number(new URL(f.store.url).port), https: false },
      clock,
    });
    try {
      const flow = await started();
      const made = await newAppPassword(DESKTOP_NAME);
      const details = await davRequest(other.url, 'GET', `/index.php/login/v2/grant?token=${loginTokenOf(flow)}`);
      expect(json(details)).toMatchObject({ client: DESKTOP_NAME, kind: 'v2' });
      const granted = await davRequest(other.url, 'POST', '/index.php/login/v2/grant', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: loginTokenOf(flow), loginName: ada.email, appPassword: made.password }),
      });
      expect(granted.status, granted.text).toBe(200);
      const polled = await davRequest(other.url, 'POST', '/index.php/login/v2/poll', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${flow.poll.token}` });
      expect(polled.status, polled.text).toBe(200);
      expect(json(polled)).toMatchObject({ loginName: ada.email, appPassword: made.password });
      // Taken once, whichever bridge is asked.
      expect((await poll(flow.poll.token)).status).toBe(404);
    } finally {
      await other.close();
    }
  });

  it('v1: redirects the app\'s web view to the grant page, and the grant answers the nc:// address; the flow is gone', async () => {
    const opened = await davRequest(f.davUrl, 'GET', '/index.php/login/flow', { headers: { 'user-agent': ANDROID, 'ocs-apirequest': 'true' } });
    expect(opened.status).toBe(302);
    const page = new URL(String(opened.headers.location));
    expect(page.pathname).toBe('/client-login');
    const token = page.searchParams.get('token') ?? '';
    expect(token).toMatch(TOKEN);
    expect(json(await pageCall('GET', 'grant', undefined, `?token=${token}`))).toMatchObject({ client: ANDROID, kind: 'v1' });
    const made = await newAppPassword(ANDROID);
    const granted = await grant(token, made.password);
    expect(granted.status, granted.text).toBe(200);
    // Nextcloud's format: the server as is, the login name and password as PHP's urlencode writes them.
    expect(json(granted)).toEqual({ redirect: `nc://login/server:${f.davUrl}&user:${ada.email.replace('@', '%40')}&password:${made.password}` });
    expect((await pageCall('GET', 'grant', undefined, `?token=${token}`)).status).toBe(404);
    // A HEAD opens nothing (it is no flow's start).
    expect((await davRequest(f.davUrl, 'HEAD', '/index.php/login/flow', { headers: { 'user-agent': ANDROID } })).status).not.toBe(302);
    expect((await flowRows()).length).toBe(0);
  });

  it('stops the client at its next request once its app password is revoked, even at the made-up root and with its listing cached', async () => {
    const flow = await started();
    const made = await newAppPassword(DESKTOP_NAME);
    expect((await grant(flow, made.password)).status).toBe(200);
    const { loginName, appPassword } = json(await poll(flow.poll.token)) as { loginName: string; appPassword: string };
    const auth = basicAuth(loginName, appPassword);
    expect((await propfind(auth)).status).toBe(207);
    expect((await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth, headers: { ...DEPTH0, depth: '1' } })).status).toBe(207);
    const listed = dataOf<Array<{ uuid: string; name: string }>>(await apiCall(f.client, ada.session, 'GET', '/api/user/app_passwords'));
    expect(listed.some((p) => p.uuid === made.uuid && p.name === DESKTOP_NAME)).toBe(true);

    expect((await davRequest(f.davUrl, 'PROPFIND', '/', { auth, headers: DEPTH0 })).status).toBe(207);

    expect((await apiCall(f.client, ada.session, 'DELETE', `/api/user/app_passwords/${made.uuid}`)).status).toBe(200);
    // A sync client's next request comes seconds later; the bridge asks the store once its session stood unconfirmed for the cache's TTL.
    clock.advance(Math.max(SESSION_CONFIRM_MS, f.store.config.bridge.cacheTtlMs));
    expect((await davRequest(f.davUrl, 'PROPFIND', '/', { auth, headers: DEPTH0 })).status).toBe(401);
    expect((await propfind(auth)).status).toBe(401);
    expect((await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth, headers: { ...DEPTH0, depth: '1' } })).status).toBe(401);
    expect((await davRequest(f.davUrl, 'GET', '/home/', { auth })).status).toBe(401);
  });
});
