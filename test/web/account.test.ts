/**
 * Account (issue 24, item 3), profile, password, two-factor, app passwords, notifications and sign-in history, in Debian's Chromium: the person changes
 * their name and their password as a person does (by label and button), each refusal said in
 * words next to the field with the input kept, and the store holds what the page said (GET
 * /api/user, POST /auth with the new password). axe-core on the page, nothing from another
 * origin, and usable at 360 px.
 */
import type { Locator } from 'playwright-core';
import { encode } from 'uqr';
import { expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { totpCode } from '../helpers/totp.js';
import { apiCall, dataOf, postAuth } from '../helpers/user-api.js';
import { clipboardText, expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

/**
 * The QR code's modules as the page drew them (an SVG of rects on a `size` x `size` viewBox, each
 * dark rect one row high), as rows of 0 and 1.
 */
async function drawnModules(svg: Locator): Promise<string[]> {
  const drawn = await svg.evaluate((el) => ({
    viewBox: el.getAttribute('viewBox') ?? '',
    rects: [...el.querySelectorAll('g rect')].map((r) => ['x', 'y', 'width', 'height'].map((a) => Number(r.getAttribute(a)))),
  }));
  const size = Number(drawn.viewBox.split(' ')[2]);
  const rows = Array.from({ length: size }, () => Array<number>(size).fill(0));
  for (const [x = 0, y = 0, width = 0, height = 0] of drawn.rects) {
    expect(height).toBe(1);
    for (let i = x; i < x + width; i++) (rows[y] as number[])[i] = 1;
  }
  return rows.map((row) => row.join(''));
}

/**
 * What `text` is as a QR code, independently of the page: uqr's matrix with the app's options,
 * checked to be a QR code (a size of 17 + 4 x version plus the 4-module quiet zone each side, and
 * the three 7 x 7 finder patterns where a scanner looks for them).
 */
function qrModules(text: string): string[] {
  const { data, size, version } = encode(text, { ecc: 'M', border: 4 });
  expect(size).toBe(17 + 4 * version + 8);
  const rows = data.map((row) => row.map((dark) => (dark ? '1' : '0')).join(''));
  const finder = ['1111111', '1000001', '1011101', '1011101', '1011101', '1000001', '1111111'];
  for (const [top, left] of [[4, 4], [4, size - 11], [size - 11, 4]] as const) {
    expect(rows.slice(top, top + 7).map((row) => row.slice(left, left + 7))).toEqual(finder);
  }
  for (const row of [...rows.slice(0, 4), ...rows.slice(-4)]) expect(row).toBe('0'.repeat(size));
  return rows;
}

chromiumBinary.describe('the Account page: profile and password', () => {
  const f = webSuiteFixture(chromiumBinary.path);

  async function signedIn(user: TestUser, options: { width?: number } = {}): Promise<WatchedPage> {
    const watched = await f.openPage(options);
    await watched.page.goto(`${f.base}/connect`);
    await signInThroughForm(watched.page, user.email, user.password);
    await watched.page.getByRole('heading', { name: 'Connect your drive' }).waitFor();
    // Reached through the main navigation, as a person does (on a phone, behind the Menu button).
    const menu = watched.page.getByRole('button', { name: 'Menu' });
    if (await menu.isVisible()) await menu.click();
    await watched.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    await watched.page.getByRole('heading', { name: 'Your account' }).waitFor();
    await watched.page.getByLabel('Full name').waitFor();
    return watched;
  }

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  it('changes the name, saying next to the field why a name is refused and keeping it', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const watched = await signedIn(ada);
    const { page } = watched;
    await expect(page.getByText(`Your email address (you sign in with it): ${ada.email}`).isVisible()).resolves.toBe(true);
    const field = page.getByLabel('Full name');
    expect(await field.inputValue()).toBe('Ada Lovelace');
    await field.fill('Al');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.locator('#fullname-error').getByText('Must have 3 to 255 characters.').waitFor();
    expect(await field.inputValue()).toBe('Al');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(dataOf<{ fullname: string }>(await apiCall(f.client, ada.session, 'GET', '/api/user')).fullname).toBe('Ada Lovelace');
    await expectAccessible(page);

    await field.fill('Ada King');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Your profile is saved.' }).waitFor();
    await expect(page.locator('#fullname-error').count()).resolves.toBe(0);
    expect(dataOf<{ fullname: string }>(await apiCall(f.client, ada.session, 'GET', '/api/user')).fullname).toBe('Ada King');
    expectClean(watched);
  });

  it('changes the password, showing the store’s rule in words on refusal and keeping the input', async () => {
    const bob = await f.newUser({ fullname: 'Bob Babbage' });
    const watched = await signedIn(bob, { width: 360 });
    const { page } = watched;
    await expect(page.getByText('At least 8 characters, with a lowercase letter, an uppercase letter and a digit.').isVisible()).resolves.toBe(true);
    const fresh = page.getByLabel('New password', { exact: true });
    const again = page.getByLabel('New password again');

    await fresh.fill('newpassw0rd');
    await again.fill('newpassw0rd');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.locator('#new-password-error').getByText('Password must contain an uppercase letter.').waitFor();
    expect(await fresh.inputValue()).toBe('newpassw0rd');
    expect(await again.inputValue()).toBe('newpassw0rd');
    expect((await postAuth(f.client, { username: bob.email, password: bob.password })).status).toBe(200);

    await again.fill('Newpassw0rd-other');
    await fresh.fill('Newpassw0rd');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.locator('#repeat-password-error').getByText('The two passwords are not the same.').waitFor();
    expect((await postAuth(f.client, { username: bob.email, password: 'Newpassw0rd' })).status).toBe(401);

    await again.fill('Newpassw0rd');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is changed.' }).waitFor();
    expect(await fresh.inputValue()).toBe('');
    expect((await postAuth(f.client, { username: bob.email, password: 'Newpassw0rd' })).status).toBe(200);
    expect((await postAuth(f.client, { username: bob.email, password: bob.password })).status).toBe(401);
    // The page's own session stays (docs/api.md: a new password ends the others only).
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Your profile is saved.' }).waitFor();

    expect(await sidewaysOverflow(page)).toEqual([]);
    await keepScreenshot(page, 'account-360');
    await expectAccessible(page);
    expectClean(watched);
  });

  it('sets two-factor up: the secret to copy and its QR code, on only after a right code, then off with the password', async () => {
    const dee = await f.newUser({ fullname: 'Dee Dijkstra' });
    const watched = await f.openPage({ clipboard: true, width: 360 });
    const { page } = watched;
    await page.goto(`${f.base}/account`);
    await signInThroughForm(page, dee.email, dee.password);
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    const twofa = page.getByRole('region', { name: 'Two-factor authentication' });
    await twofa.getByText('Two-factor authentication is off.').waitFor();
    await twofa.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
    await twofa.getByText('Two-factor authentication is still off').waitFor();
    // The set-up alone turns nothing on.
    expect(dataOf<{ twofa: boolean }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${dee.uuid}`)).twofa).toBe(false);
    await twofa.getByRole('button', { name: 'Copy the secret' }).click();
    const secret = await clipboardText(page);
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    await twofa.getByRole('button', { name: 'Copy the otpauth address' }).click();
    const uri = await clipboardText(page);
    expect(uri).toContain(`secret=${secret}`);
    // The QR code beside it carries that address: its modules are what uqr encodes for it.
    const qr = twofa.getByRole('img', { name: 'QR code of the otpauth address, for your authenticator app' });
    expect(qrModules(uri)).toEqual(await drawnModules(qr));
    expect(await qr.evaluate((svg) => svg.outerHTML)).not.toMatch(/style=|href=/);
    await expect(twofa.getByText(secret, { exact: true }).isVisible()).resolves.toBe(true);
    expect(await sidewaysOverflow(page)).toEqual([]);
    await keepScreenshot(page, 'account-twofa-360');
    await expectAccessible(page);

    await twofa.getByLabel('Code from your authenticator app').fill('000000' === totpCode(secret, Date.now()) ? '111111' : '000000');
    await twofa.getByRole('button', { name: 'Check the code and turn on' }).click();
    await page.locator('#setup-code-error').getByText('This code is wrong: two-factor authentication is still off.').waitFor();
    expect(dataOf<{ twofa: boolean }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${dee.uuid}`)).twofa).toBe(false);
    await twofa.getByLabel('Code from your authenticator app').fill(totpCode(secret, Date.now()));
    await twofa.getByRole('button', { name: 'Check the code and turn on' }).click();
    await twofa.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    await expect(twofa.getByRole('listitem').count()).resolves.toBe(10);
    await twofa.getByRole('button', { name: 'I have stored them' }).click();
    await twofa.getByText('Two-factor authentication is on').waitFor();
    await twofa.getByText('You have 10 unused recovery codes.').waitFor();
    // The store wants the code now, and the page's session still works.
    expect((await postAuth(f.client, { username: dee.email, password: dee.password })).status).toBe(401);

    await twofa.getByRole('button', { name: 'Turn off two-factor authentication' }).click();
    await page.locator('#off-password-error').getByText('Enter your password.').waitFor();
    await twofa.getByLabel('Your password, to turn two-factor authentication off').fill('Wrong-Passw0rd');
    await twofa.getByRole('button', { name: 'Turn off two-factor authentication' }).click();
    await page.locator('#off-password-error').getByText('This password is wrong.').waitFor();
    expect(dataOf<{ twofa: boolean }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${dee.uuid}`)).twofa).toBe(true);
    await twofa.getByLabel('Your password, to turn two-factor authentication off').fill(dee.password);
    await twofa.getByRole('button', { name: 'Turn off two-factor authentication' }).click();
    await twofa.getByText('Two-factor authentication is off.').waitFor();
    expect(dataOf<{ twofa: boolean }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${dee.uuid}`)).twofa).toBe(false);
    expect((await postAuth(f.client, { username: dee.email, password: dee.password })).status).toBe(200);
    await expectAccessible(page);
    expectClean(watched);
  });

  it('makes an app password shown once with Copy, lists its last use, and revokes it', async () => {
    const eve = await f.newUser({ fullname: 'Eve Engine' });
    const watched = await f.openPage({ clipboard: true });
    const { page } = watched;
    await page.goto(`${f.base}/account`);
    await signInThroughForm(page, eve.email, eve.password);
    const apps = page.getByRole('region', { name: 'App passwords' });
    await apps.getByText('You have no app passwords.').waitFor();
    await apps.getByRole('button', { name: 'Create app password' }).click();
    await page.locator('#app-name-error').getByText('Enter a name.').waitFor();
    await apps.getByLabel('Name of the new app password').fill('laptop rclone');
    await apps.getByRole('button', { name: 'Create app password' }).click();
    // The password is asked again in the page (docs/security.md "Asking for the password again").
    await page.locator('#app-password-error').getByText('Enter your password').waitFor();
    await apps.getByLabel('Your password').fill('Wrong-Passw0rd');
    await apps.getByRole('button', { name: 'Create app password' }).click();
    await page.locator('#app-password-error').getByText('This password is wrong.').waitFor();
    await apps.getByLabel('Your password').fill(eve.password);
    await apps.getByRole('button', { name: 'Create app password' }).click();
    await apps.getByText('The app password laptop rclone is shown only now').waitFor();
    await apps.getByRole('button', { name: 'Copy the app password laptop rclone' }).click();
    const secret = await clipboardText(page);
    expect(secret).toMatch(/^[a-z0-9]{6}(-[a-z0-9]{6}){3}$/);
    await apps.getByText('never used').waitFor();
    const stored = dataOf<Array<{ uuid: string; name: string; last_used: number | null }>>(await apiCall(f.client, eve.session, 'GET', '/api/user/app_passwords'));
    expect(stored.map((item) => [item.name, item.last_used])).toEqual([['laptop rclone', null]]);
    // A client signs in with it; after a reload the page shows the use and never the password again.
    expect((await postAuth(f.client, { username: eve.email, password: secret })).status).toBe(200);
    await page.reload();
    await apps.getByText('last used').waitFor();
    expect(await page.getByRole('main').textContent()).not.toContain(secret);
    await expectAccessible(page);

    await apps.getByLabel('Your password').fill(eve.password);
    await apps.getByRole('button', { name: 'Revoke the app password laptop rclone' }).click();
    await apps.getByText('You have no app passwords.').waitFor();
    expect(dataOf<unknown[]>(await apiCall(f.client, eve.session, 'GET', '/api/user/app_passwords'))).toEqual([]);
    expect((await postAuth(f.client, { username: eve.email, password: secret })).status).toBe(401);
    expectClean(watched);
  });

  it('lists the sign-in history, refusals with their reason', async () => {
    const fay = await f.newUser({ fullname: 'Fay Fourier' });
    expect((await postAuth(f.client, { username: fay.email, password: 'Wrong-Passw0rd' })).status).toBe(401);
    const watched = await f.openPage({ width: 360 });
    const { page } = watched;
    await page.goto(`${f.base}/account`);
    await signInThroughForm(page, fay.email, fay.password);
    const history = page.getByRole('region', { name: 'Sign-in history' });
    await history.getByRole('listitem').first().waitFor();
    const stored = dataOf<Array<{ status: string }>>(await apiCall(f.client, fay.session, 'GET', '/api/user/login_history'));
    await expect(history.getByRole('listitem').count()).resolves.toBe(stored.length);
    await expect(history.getByText('Sign-in refused').count()).resolves.toBe(stored.filter((entry) => entry.status === 'failure').length);
    await expect(history.getByText('(wrong password)').count()).resolves.toBe(1);
    expect(await history.getByRole('listitem').first().textContent()).toContain('Signed in');
    expect(await sidewaysOverflow(page)).toEqual([]);
    await expectAccessible(page);
    expectClean(watched);
  });

  it('saves the notification settings', async () => {
    const gus = await f.newUser({ fullname: 'Gus Gauss' });
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/account`);
    await signInThroughForm(page, gus.email, gus.password);
    const email = page.getByRole('group', { name: 'Email me about' });
    const realtime = page.getByRole('group', { name: 'Tell me at once, while I am signed in, about' });
    await email.getByLabel('files shared with me').uncheck();
    await realtime.getByLabel('changes to my groups’ files').uncheck();
    await page.getByRole('button', { name: 'Save notification settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Your notification settings are saved.' }).waitFor();
    const stored = dataOf<Record<string, boolean>>(await apiCall(f.client, gus.session, 'GET', '/api/user/notifications'));
    expect(Object.entries(stored).filter(([, on]) => !on).map(([key]) => key).sort()).toEqual(['email_alert_shared_with_me', 'realtime_alert_group_owned']);
    expect(Object.keys(stored)).toHaveLength(8);
    await page.reload();
    await expect(page.getByRole('group', { name: 'Email me about' }).getByLabel('files shared with me').isChecked()).resolves.toBe(false);
    await expect(page.getByRole('group', { name: 'Email me about' }).getByLabel('changes to my files').isChecked()).resolves.toBe(true);
    await expectAccessible(page);
    expectClean(watched);
  });

  it('makes, renames and deletes the WebDrive URL, a refused name said next to the field', async () => {
    const hal = await f.newUser({ fullname: 'Hal Hopper' });
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/account`);
    await signInThroughForm(page, hal.email, hal.password);
    const drive = page.getByRole('region', { name: 'WebDrive URL' });
    await drive.getByText('You have no WebDrive URL').waitFor();
    const field = drive.getByLabel('WebDrive name');
    await field.fill('Hal!');
    await drive.getByRole('button', { name: 'Create WebDrive URL' }).click();
    await page.locator('#webdrive-name-error').getByText('Endpoint must be 3 to 10 lowercase letters').waitFor();
    expect(await field.inputValue()).toBe('Hal!');
    await field.fill('halweb');
    await drive.getByRole('button', { name: 'Create WebDrive URL' }).click();
    await drive.getByRole('button', { name: 'Change WebDrive name' }).waitFor();
    expect(dataOf<{ endpoint: string | null }>(await apiCall(f.client, hal.session, 'GET', '/api/user/webdrive')).endpoint).toBe('halweb');
    await field.fill('halnew');
    await drive.getByRole('button', { name: 'Change WebDrive name' }).click();
    await drive.getByText('/webdrive/halnew/').waitFor();
    expect(dataOf<{ endpoint: string | null }>(await apiCall(f.client, hal.session, 'GET', '/api/user/webdrive')).endpoint).toBe('halnew');
    await expectAccessible(page);
    await drive.getByRole('button', { name: 'Delete WebDrive URL' }).click();
    await drive.getByText('You have no WebDrive URL').waitFor();
    expect(dataOf<{ endpoint: string | null }>(await apiCall(f.client, hal.session, 'GET', '/api/user/webdrive')).endpoint).toBeNull();
    expectClean(watched);
  });

  it('is usable with the keyboard alone', async () => {
    const cy = await f.newUser({ fullname: 'Cy Clement' });
    const watched = await signedIn(cy);
    const { page } = watched;
    await page.getByLabel('Full name').focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Cy Keyboard');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Your profile is saved.' }).waitFor();
    expect(dataOf<{ fullname: string }>(await apiCall(f.client, cy.session, 'GET', '/api/user')).fullname).toBe('Cy Keyboard');
    expectClean(watched);
  });
});
