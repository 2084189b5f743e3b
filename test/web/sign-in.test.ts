/**
 * Signing in to the web app (issue 24, item 1) in Debian's Chromium, as a person does it: by
 * label, role and visible text. With the email and with the username `admin`; a wrong password
 * said in words next to the password, the input kept; the two-factor step with a code computed
 * from the secret (otpauth); a session that ends sends the person to sign-in and back to the page
 * they were on; signing out ends the session in the store; too many failures say how long to
 * wait. Each checks what the store then holds through the REST API, runs axe-core on the pages
 * it visits, and finds nothing loaded from another origin.
 */
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { apiCall, dataOf, postAuth } from '../helpers/user-api.js';
import { endSessionWhileAway, expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, tokenOf, webFixture, webSuiteFixture, type WatchedPage, type WebFixture } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('signing in to the web app', () => {
  const f = webSuiteFixture(chromiumBinary.path);

  /** Nothing from elsewhere, no script error: the end of every scenario. */
  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  it('serves the app with its strict policy and sends a person without a session to sign-in', async () => {
    const watched = await f.openPage();
    const { page } = watched;
    const response = await page.goto(`${f.base}/connect`);
    expect(response?.status()).toBe(200);
    const headers = response?.headers() ?? {};
    // Calls to its own origin and to the bridge's (bridge.port's default here), where its tus uploads go.
    expect(headers['content-security-policy']).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' http://127.0.0.1:8081; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['cache-control']).toBe('no-cache');
    await expect.poll(() => page.url()).toBe(`${f.base}/sign-in?next=%2Fconnect`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible(page);
    // The script and style sheet: hashed names, cached for a year.
    const assets = await page.evaluate(() => performance.getEntriesByType('resource').map((entry) => entry.name).filter((name) => name.includes('/app/assets/')));
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      expect(asset).toMatch(/\/app\/assets\/[\w-]+-[\w-]{8}\.(?:js|css)$/);
      const res = await page.request.get(asset);
      expect(res.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    expectClean(watched);
  });

  it('signs in with the email and password, keeps the token out of the URL, and the store has the session', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/`);
    await signInThroughForm(page, ada.email, ada.password);
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    expect(page.url()).toBe(`${f.base}/files`);
    await expect(page.getByText('Signed in as Ada Lovelace').isVisible()).resolves.toBe(true);
    const token = await tokenOf(page);
    expect(token).toBeTruthy();
    expect(page.url()).not.toContain(token as string);
    // The token the page keeps is a live session of Ada's.
    expect(dataOf<{ uuid: string }>(await apiCall(f.client, token, 'GET', '/api/user')).uuid).toBe(ada.uuid);
    const history = dataOf<Array<{ status: string; action_args: string }>>(await apiCall(f.client, ada.session, 'GET', '/api/user/login_history'));
    expect(history[0]).toMatchObject({ status: 'success' });
    expect(history[0]?.action_args).toMatch(/Chrome/);
    await expectAccessible(page);
    expectClean(watched);
  });

  it('signs in with the username admin', async () => {
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/sign-in`);
    await signInThroughForm(page, 'admin', f.store.adminPassword);
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    const token = await tokenOf(page);
    expect(dataOf<{ is_admin: boolean }>(await apiCall(f.client, token, 'GET', '/api/user')).is_admin).toBe(true);
    expectClean(watched);
  });

  it('says in words that the password is wrong, next to the password, and keeps what was typed', async () => {
    const bob = await f.newUser();
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/sign-in`);
    await signInThroughForm(page, bob.email, 'Not-his-passw0rd');
    const message = page.getByText('The username or password is wrong');
    await message.waitFor();
    // Tied to the password field: a screen reader reads it with the field.
    await expect(page.getByLabel('Password', { exact: true }).getAttribute('aria-describedby')).resolves.toBe('password-error');
    await expect(page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    expect(await page.getByLabel('Username or email').inputValue()).toBe(bob.email);
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('Not-his-passw0rd');
    expect(await page.content()).not.toContain('"status"');
    expect(await tokenOf(page)).toBeUndefined();
    const history = dataOf<Array<{ status: string }>>(await apiCall(f.client, bob.session, 'GET', '/api/user/login_history'));
    expect(history[0]).toMatchObject({ status: 'failure' });
    await expectAccessible(page);
    // Corrected, the same form signs in.
    await page.getByLabel('Password', { exact: true }).fill(bob.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    expectClean(watched);
  });

  it('asks for the two-factor code when 2FA is on, refuses a wrong one in words, and signs in with the right one', async () => {
    const grace = await f.newUser();
    const enabled = dataOf<{ secret_twofa: string }>(await apiCall(f.client, grace.session, 'POST', '/api/user/2fa', { twofa: true }));
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(enabled.secret_twofa), digits: 6, period: 30, algorithm: 'SHA1' });
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/sign-in`);
    await signInThroughForm(page, grace.email, grace.password);
    await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
    await expectAccessible(page);
    const right = totp.generate({ timestamp: f.store.clock.now() });
    const wrong = `${right.slice(0, 5)}${(Number(right[5]) + 1) % 10}`;
    await page.getByLabel('Code from your authenticator app').fill(wrong);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('This code is wrong or was already used').waitFor();
    expect(await tokenOf(page)).toBeUndefined();
    await page.getByLabel('Code from your authenticator app').fill(right);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    const token = await tokenOf(page);
    expect(dataOf<{ uuid: string; twofa: boolean }>(await apiCall(f.client, token, 'GET', '/api/user'))).toMatchObject({ uuid: grace.uuid, twofa: true });
    expectClean(watched);
  });

  it('sends a person whose session ended to sign-in, and back to the page they were on afterwards', async () => {
    const alan = await f.newUser();
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/sign-in`);
    await signInThroughForm(page, alan.email, alan.password);
    await page.getByText('This folder is empty.').waitFor();
    // The session ends in the store (here: revoked, as a password change elsewhere would) while
    // the person is away; the page they come back to meets the ending.
    await endSessionWhileAway(f, page);
    await page.goto(`${f.base}/connect?from=bookmark`);
    await page.getByText('Your session has ended').waitFor();
    expect(page.url()).toBe(`${f.base}/sign-in?next=${encodeURIComponent('/connect?from=bookmark')}`);
    await expectAccessible(page);
    await signInThroughForm(page, alan.email, alan.password);
    await page.getByRole('heading', { name: 'Connect your drive' }).waitFor();
    expect(page.url()).toBe(`${f.base}/connect?from=bookmark`);
    expect((await apiCall(f.client, await tokenOf(page), 'GET', '/api/user')).status).toBe(200);
    expectClean(watched);
  });

  it('goes back only to a page of its own after signing in, never to another site named in the address', async () => {
    const joan = await f.newUser();
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example/', 'javascript:alert(1)']) {
      const watched = await f.openPage();
      const { page } = watched;
      await page.goto(`${f.base}/sign-in?next=${encodeURIComponent(next)}`);
      await signInThroughForm(page, joan.email, joan.password);
      await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
      expect(page.url(), next).toBe(`${f.base}/files`);
      expectClean(watched);
      await watched.context.close();
    }
  });

  it('signs out: the store ends the session and the page says so', async () => {
    const mary = await f.newUser();
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/sign-in`);
    await signInThroughForm(page, mary.email, mary.password);
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    const token = await tokenOf(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();
    expect(page.url()).toBe(`${f.base}/sign-in`);
    expect(await tokenOf(page)).toBeUndefined();
    expect((await apiCall(f.client, token, 'GET', '/api/user')).status).toBe(401);
    // Going back to a page needs a new sign-in.
    await page.goto(`${f.base}/connect`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expectClean(watched);
  });

  it('is usable at 360 px wide and with the keyboard alone', async () => {
    const kay = await f.newUser();
    const watched = await f.openPage({ width: 360, height: 740 });
    const { page } = watched;
    await page.goto(`${f.base}/sign-in`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    await keepScreenshot(page, 'sign-in-360');
    // The heading has the focus; Tab leads to the fields, Enter submits.
    await page.keyboard.press('Tab');
    await page.keyboard.type(kay.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(kay.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    expect(await sidewaysOverflow(page)).toEqual([]);
    expect((await apiCall(f.client, await tokenOf(page), 'GET', '/api/user')).status).toBe(200);
    expectClean(watched);
  });

  // Last: it fills the failed-login limiter of 127.0.0.1, which the clock then moves past.
  it('says how long to wait after too many failed sign-ins', async () => {
    const eve = await f.newUser();
    for (let i = 0; i < f.store.config.store.loginMaxFailures; i++) await postAuth(f.client, { username: eve.email, password: `Wrong-${i}-passw0rd` });
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/sign-in`);
    await signInThroughForm(page, eve.email, eve.password);
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toMatch(/^Too many failed sign-ins: sign-in is locked for now\. Try again in \d+ minutes\.$/);
    expect(await page.getByLabel('Username or email').inputValue()).toBe(eve.email);
    await expectAccessible(page);
    expect(await tokenOf(page)).toBeUndefined();
    f.store.clock.advance(f.store.config.store.loginWindowSec * 1000 + 1000);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    expectClean(watched);
  });
});

describe.skipIf(!chromiumBinary.isAvailable)('signing in with an expired password', () => {
  let f: WebFixture;
  beforeAll(async () => {
    f = await webFixture(chromiumBinary.path, { flags: { 'store.passwordMaxAgeDays': 1 } });
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  it('asks for a new password, refuses a weak one in words, and continues once it is changed', async () => {
    const ida = await f.newUser();
    f.store.clock.advance(2 * 86_400_000);
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/connect`);
    await signInThroughForm(page, ida.email, ida.password);
    await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('New password', { exact: true }).fill('weak');
    await page.getByLabel('New password again').fill('weak');
    await page.getByRole('button', { name: 'Change password and continue' }).click();
    await page.getByText('Password must have at least 8 characters').waitFor();
    expect(await page.getByLabel('New password', { exact: true }).inputValue()).toBe('weak');
    await page.getByLabel('New password', { exact: true }).fill('Renewed-Passw0rd');
    await page.getByLabel('New password again').fill('Renewed-Passw0rd');
    await page.getByRole('button', { name: 'Change password and continue' }).click();
    await page.getByRole('heading', { name: 'Connect your drive' }).waitFor();
    expect(page.url()).toBe(`${f.base}/connect`);
    // The store took the new password: it signs in, the old one does not.
    expect((await postAuth(f.client, { username: ida.email, password: 'Renewed-Passw0rd' })).status).toBe(200);
    expect((await postAuth(f.client, { username: ida.email, password: ida.password })).status).toBe(401);
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  });
});
