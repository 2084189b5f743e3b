/**
 * Login Flow v2 end to end in Debian's Chromium (issue 30 item 2): a client opens a flow on the
 * bridge; the person opens its login address in the web app at 360 px, signs in with 2FA, sees
 * which client asks and grants it; the client's poll then yields an app password once, a PROPFIND
 * with it works; the person revokes it on the Account page and the client's next request gets 401.
 */
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/common/clock.js';
import { SESSION_CONFIRM_MS } from '../../src/bridge/sessions.js';
import { davRequest } from '../helpers/dav-requests.js';
import { requireBinary } from '../helpers/require-binary.js';
import { basicAuth } from '../helpers/start-bridge.js';
import { totpCode } from '../helpers/totp.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webFixture, type WebFixture } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');
const CLIENT = 'Nextcloud desktop (Linux)';

chromiumBinary.describe('granting a Nextcloud client in the web app (Login Flow v2)', () => {
  let f: WebFixture;
  const clock = new ManualClock();

  beforeAll(async () => {
    f = await webFixture(chromiumBinary.path, { bridge: true, bridgeClock: clock });
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  const davUrl = (): string => f.davUrl ?? '';
  async function poll(token: string): Promise<{ status: number; body: unknown }> {
    const res = await request(`${davUrl()}/index.php/login/v2/poll`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` });
    return { status: res.statusCode, body: await res.body.json() };
  }

  it('signs in with 2FA, shows the client, grants it; the poll yields the app password once; revoking it stops the client', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const { secret_twofa: secret } = dataOf<{ secret_twofa: string }>(await apiCall(f.client, ada.session, 'POST', '/api/user/2fa', { twofa: true }));

    const opened = await request(`${davUrl()}/index.php/login/v2`, { method: 'POST', headers: { 'user-agent': CLIENT } });
    expect(opened.statusCode).toBe(200);
    const flow = (await opened.body.json()) as { poll: { token: string; endpoint: string }; login: string };
    expect(flow.login.startsWith(`${f.base}/client-login?token=`)).toBe(true);

    const watched = await f.openPage({ width: 360, height: 740 });
    const { page } = watched;
    await page.goto(flow.login);
    await signInThroughForm(page, ada.email, ada.password);
    await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
    await page.getByLabel('Code from your authenticator app').fill(totpCode(secret, f.store.clock.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Connect an app' }).waitFor();
    await page.getByText(CLIENT, { exact: true }).waitFor();
    await page.getByText('It asked from the address 127.0.0.1.').waitFor();
    await expectAccessible(page);
    expect(await sidewaysOverflow(page)).toEqual([]);
    await keepScreenshot(page, 'client-login-360');
    expect((await poll(flow.poll.token)).status).toBe(404);

    await page.getByRole('button', { name: 'Grant access' }).click();
    await page.getByText('Access granted: the app is signing in.').waitFor();
    const answered = await poll(flow.poll.token);
    expect(answered.status).toBe(200);
    const { server, loginName, appPassword } = answered.body as { server: string; loginName: string; appPassword: string };
    expect(server).toBe(davUrl());
    expect(loginName).toBe(ada.email);
    expect(appPassword).toMatch(/^[a-z0-9]{6}(-[a-z0-9]{6}){3}$/);
    expect((await poll(flow.poll.token)).status).toBe(404);
    const auth = basicAuth(loginName, appPassword);
    expect((await davRequest(davUrl(), 'PROPFIND', '/home/', { auth, headers: { depth: '1' } })).status).toBe(207);

    // The grant is an app password named after the client, revoked on the Account page.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    const apps = page.getByRole('region', { name: 'App passwords' });
    await apps.getByText(CLIENT, { exact: true }).waitFor();
    await apps.getByRole('button', { name: `Revoke the app password ${CLIENT}` }).click();
    await apps.getByText('You have no app passwords.').waitFor();
    clock.advance(Math.max(SESSION_CONFIRM_MS, f.store.config.bridge.cacheTtlMs));
    expect((await davRequest(davUrl(), 'PROPFIND', '/home/', { auth, headers: { depth: '1' } })).status).toBe(401);

    expect(watched.problems).toEqual([]);
    // Nothing left the app's origin but the page's calls to the bridge's login flow.
    expect(watched.foreign.filter((url) => !url.startsWith(`${davUrl()}/index.php/login/v2/`))).toEqual([]);
  });

  it('cancels: the client\'s poll never yields anything and the page says so', async () => {
    const bob = await f.newUser({ fullname: 'Bob Boole' });
    const opened = await request(`${davUrl()}/index.php/login/v2`, { method: 'POST', headers: { 'user-agent': 'ownCloud' } });
    const flow = (await opened.body.json()) as { poll: { token: string }; login: string };
    const { page } = await f.openPage();
    await page.goto(flow.login);
    await signInThroughForm(page, bob.email, bob.password);
    await page.getByText('ownCloud', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByText('Cancelled: the app was not given access.').waitFor();
    expect((await poll(flow.poll.token)).status).toBe(404);
    expect(dataOf<unknown[]>(await apiCall(f.client, bob.session, 'GET', '/api/user/app_passwords'))).toEqual([]);
    await page.reload();
    await page.getByText('This sign-in request is over').waitFor();
  });
});
