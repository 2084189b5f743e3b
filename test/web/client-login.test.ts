/**
 * Login Flow v2 end to end in Debian's Chromium (issue 30 item 2): a client opens a flow on the
 * bridge; the person opens its login address in the web app at 360 px, signs in with 2FA, sees
 * which client asks and grants it; the client's poll then yields an app password once, a PROPFIND
 * with it works and Debian's nextcloudcmd syncs the home with it; the person revokes it on the
 * Account page, the client's next request gets 401 and its next sync fails, bringing nothing down.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/common/clock.js';
import { SESSION_CONFIRM_MS } from '../../src/bridge/sessions.js';
import { runProgram } from '../clients/run-program.js';
import { syncInvocation } from '../clients/sync-args.js';
import { davRequest } from '../helpers/dav-requests.js';
import { requireBinary } from '../helpers/require-binary.js';
import { basicAuth } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { totpCode } from '../helpers/totp.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webFixture, type WebFixture } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');
const nextcloudcmd = requireBinary('nextcloudcmd');
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

  /** One nextcloudcmd sync of the account's home into `local` with the granted password: its exit code and log. */
  async function syncHome(account: { server: string; loginName: string; appPassword: string }, local: string, home: string): Promise<{ code: number | null; log: string }> {
    const { args, env } = syncInvocation('nextcloudcmd', { serverUrl: account.server, login: account.loginName, password: account.appPassword }, '/home', local, home, { debug: false });
    const run = await runProgram(nextcloudcmd.path, args, { cwd: home, env, timeoutMs: 60_000 });
    return { code: run.code, log: `${run.stdout}\n${run.stderr}` };
  }
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
    await page.getByText('The app will also be able to make, change and remove shares').waitFor();
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

    // The client syncs with what the poll gave it: a file made on the server comes down.
    const tmp = makeTmpDir('driveway-login-flow-sync-');
    const local = path.join(tmp.dir, 'local');
    const syncing = nextcloudcmd.isAvailable;
    if (syncing) {
      expect((await davRequest(davUrl(), 'PUT', '/home/granted.txt', { auth, body: 'synced with the granted password\n' })).status).toBe(201);
      const first = await syncHome(answered.body as { server: string; loginName: string; appPassword: string }, local, path.join(tmp.dir, 'home-1'));
      expect(first.code, first.log).toBe(0);
      expect(readFileSync(path.join(local, 'granted.txt'), 'utf8')).toBe('synced with the granted password\n');
      // Made before the revoke, for the client's next sync to miss.
      expect((await davRequest(davUrl(), 'PUT', '/home/after-revoke.txt', { auth, body: 'not for the client\n' })).status).toBe(201);
    } else {
      console.warn('SKIPPED: nextcloudcmd is not installed (Debian: nextcloud-desktop-cmd): the sync with the granted app password was not tried');
    }

    // The grant is an app password named after the client, revoked on the Account page.
    // At 360 px the navigation is behind the Menu button.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    const apps = page.getByRole('region', { name: 'App passwords' });
    await apps.getByText(CLIENT, { exact: true }).waitFor();
    // Made with the right to make shares (the apps' share buttons), and shown so.
    expect(dataOf<Array<{ name: string; may_share: boolean }>>(await apiCall(f.client, ada.session, 'GET', '/api/user/app_passwords'))).toEqual([expect.objectContaining({ name: CLIENT, may_share: true })]);
    await apps.getByText('may make shares').waitFor();
    await apps.getByLabel('Your password').fill(ada.password);
    await apps.getByRole('button', { name: `Revoke the app password ${CLIENT}` }).click();
    await apps.getByText('You have no app passwords.').waitFor();
    clock.advance(Math.max(SESSION_CONFIRM_MS, f.store.config.bridge.cacheTtlMs));
    expect((await davRequest(davUrl(), 'PROPFIND', '/home/', { auth, headers: { depth: '1' } })).status).toBe(401);
    if (syncing) {
      // Revoked, the client stops: its next sync is refused and brings nothing new down.
      const after = await syncHome(answered.body as { server: string; loginName: string; appPassword: string }, local, path.join(tmp.dir, 'home-2'));
      expect(after.code, after.log).not.toBe(0);
      expect(existsSync(path.join(local, 'after-revoke.txt'))).toBe(false);
    }
    tmp.remove();

    expect(watched.problems).toEqual([]);
    // Nothing left the app's origin but the page's calls to the bridge's login flow.
    expect(watched.foreign.filter((url) => !url.startsWith(`${davUrl()}/index.php/login/v2/`))).toEqual([]);
  });

  it('asks for the password again when the session is older than 10 minutes, then grants', async () => {
    const cy = await f.newUser({ fullname: 'Cy Clement' });
    const opened = await request(`${davUrl()}/index.php/login/v2`, { method: 'POST', headers: { 'user-agent': CLIENT } });
    const flow = (await opened.body.json()) as { poll: { token: string }; login: string };
    const watched = await f.openPage({ width: 360, height: 740 });
    const { page } = watched;
    await page.goto(flow.login);
    await signInThroughForm(page, cy.email, cy.password);
    await page.getByRole('heading', { name: 'Connect an app' }).waitFor();
    // The page's session was opened 11 minutes ago, as far as the store knows.
    await f.store.ctx.storage.sql.run('UPDATE sessions SET created = created - 660000 WHERE user_uuid = ?', [cy.uuid]);
    await page.getByRole('button', { name: 'Grant access' }).click();
    await page.locator('#grant-password-error').getByText('enter your password to grant access').waitFor();
    expect((await poll(flow.poll.token)).status).toBe(404);
    await expectAccessible(page);
    await page.getByLabel('Your password').fill('Wrong-Passw0rd');
    await page.getByRole('button', { name: 'Grant access' }).click();
    await page.locator('#grant-password-error').getByText('This password is wrong.').waitFor();
    expect(dataOf<unknown[]>(await apiCall(f.client, cy.session, 'GET', '/api/user/app_passwords'))).toEqual([]);
    await page.getByLabel('Your password').fill(cy.password);
    await page.getByRole('button', { name: 'Grant access' }).click();
    await page.getByText('Access granted: the app is signing in.').waitFor();
    expect((await poll(flow.poll.token)).status).toBe(200);
    expect(watched.problems).toEqual([]);
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
