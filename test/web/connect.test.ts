/**
 * "Connect your drive" (issue 24, item 2) in Debian's Chromium: the whole drive's address and the
 * person's WebDrive URL as the store hands them out (`bridge.publicUrl`), the group drives they
 * may see and not the one whose administrators hide it, Copy buttons that put the address on the
 * clipboard, and a guide per client with the real address and username filled in. A person
 * without a WebDrive URL chooses one there, refusals said next to the field. axe-core on the
 * page, nothing from another origin, and usable at 360 px.
 */
import { beforeAll, expect, it } from 'vitest';
import { groupAdmin } from '../helpers/groups.js';
import { requireBinary } from '../helpers/require-binary.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { clipboardText, expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');
const DAV = 'https://dav.example.test:8443';

chromiumBinary.describe('the Connect your drive page', () => {
  const f = webSuiteFixture(chromiumBinary.path, { flags: { 'bridge.publicUrl': DAV } });
  let ada: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    ada = await f.newUser({ fullname: 'Ada Lovelace' });
    bob = await f.newUser({ fullname: 'Bob Babbage' });
    dataOf(await apiCall(f.client, ada.session, 'POST', '/api/user/webdrive', { endpoint: 'adaweb' }));
    const groups = groupAdmin(f.client, f.admin);
    const engines = await groups.group('Engines');
    const secret = await groups.group('Secret Lab');
    for (const group of [engines, secret]) await groups.member(group, ada.uuid);
    dataOf(await apiCall(f.client, f.admin, 'POST', `/api/groups/${engines}/webdrive`, { endpoint: 'engines', show_url_to_group_members: true }));
    dataOf(await apiCall(f.client, f.admin, 'POST', `/api/groups/${secret}/webdrive`, { endpoint: 'secretlab', show_url_to_group_members: false }));
  }, 120_000);

  async function signedIn(user: TestUser, options: { width?: number; clipboard?: boolean } = {}): Promise<WatchedPage> {
    const watched = await f.openPage(options);
    await watched.page.goto(`${f.base}/connect`);
    await signInThroughForm(watched.page, user.email, user.password);
    await watched.page.getByRole('heading', { name: 'Connect your drive' }).waitFor();
    await watched.page.getByRole('heading', { name: 'Your drive', exact: true }).waitFor();
    return watched;
  }

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  it('shows the WebDrive URL, the whole drive and the group drives the person may see, with Copy buttons that copy them', async () => {
    const watched = await signedIn(ada, { clipboard: true });
    const { page } = watched;
    const main = page.getByRole('main');
    const yours = page.getByRole('region', { name: 'Your drive', exact: true });
    const groups = page.getByRole('region', { name: 'Group drives' });
    await expect(yours.getByText(`${DAV}/webdrive/adaweb/`, { exact: true }).isVisible()).resolves.toBe(true);
    await expect(yours.getByText(`${DAV}/`, { exact: true }).isVisible()).resolves.toBe(true);
    await expect(yours.getByText(`Sign in there with ${ada.email} and your password.`).isVisible()).resolves.toBe(true);
    await expect(groups.getByRole('heading', { name: 'Engines' }).isVisible()).resolves.toBe(true);
    await expect(groups.getByText(`${DAV}/webdrive/engines/`, { exact: true }).isVisible()).resolves.toBe(true);
    // Secret Lab's administrators do not show its URL to members.
    expect(await main.textContent()).not.toContain('secretlab');
    await expect(main.getByText('Secret Lab').count()).resolves.toBe(0);

    await page.getByRole('button', { name: 'Copy your WebDrive URL' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await clipboardText(page)).toBe(`${DAV}/webdrive/adaweb/`);
    await page.getByRole('button', { name: 'Copy the address of Engines' }).click();
    expect(await clipboardText(page)).toBe(`${DAV}/webdrive/engines/`);
    // The store's answer is what the page showed.
    expect(dataOf<{ url: string; root_url: string }>(await apiCall(f.client, ada.session, 'GET', '/api/user/webdrive'))).toMatchObject({ url: `${DAV}/webdrive/adaweb/`, root_url: `${DAV}/` });
    await expectAccessible(page);
    expectClean(watched);
  });

  it('has a guide per client with the real address and username filled in', async () => {
    const watched = await signedIn(ada, { clipboard: true });
    const { page } = watched;
    const url = `${DAV}/webdrive/adaweb/`;
    for (const client of ['Sync apps: Nextcloud and ownCloud', 'macOS Finder', 'Windows Explorer', 'rclone', 'Linux (davfs2)', 'Cyberduck and WinSCP', 'Phone or tablet']) {
      await page.getByText(client, { exact: true }).click();
    }
    const main = page.getByRole('main');
    const text = (await main.textContent()) ?? '';
    expect(text).toContain(`Enter this address as Server Address: ${url}`);
    // The sync apps take the bridge's root, not the WebDrive URL: they find home/ and groups/ there.
    expect(text).toContain(`Enter this server address: ${DAV}A Nextcloud app opens`);
    expect(text).toContain('choose Grant access');
    expect(text).not.toContain('refuses such an address');
    expect(text).toContain('FileSizeLimitInBytes');
    expect(text).toContain(`/home/you/driveway davfs user,noauto,uid=you 0 0`);
    expect(text).toContain(`${url} ${ada.email} YOUR-PASSWORD`);
    await page.getByRole('button', { name: 'Copy the rclone configuration' }).click();
    const rclone = await clipboardText(page);
    expect(rclone).toContain(`[driveway]\ntype = webdav\nurl = ${url}\nvendor = owncloud\nuser = ${ada.email}\n`);
    // WinSCP's fields, taken apart from the address.
    for (const [term, value] of [['Host name', 'dav.example.test'], ['Port number', '8443'], ['Remote directory (under Advanced, Directories)', '/webdrive/adaweb/'], ['Encryption', 'TLS/SSL Implicit encryption']]) {
      await expect(page.getByRole('definition').filter({ has: page.getByText(value as string, { exact: true }) }).count()).resolves.toBeGreaterThan(0);
      await expect(page.getByRole('term').filter({ hasText: term as string }).count()).resolves.toBe(1);
    }
    // The address is HTTPS: no warning that Explorer will not send the password.
    expect(text).not.toContain('Explorer will not connect');
    await expectAccessible(page);
    expectClean(watched);
  });

  it('lets a person without a WebDrive URL choose one, saying next to the field why a name is refused', async () => {
    const watched = await signedIn(bob);
    const { page } = watched;
    const main = page.getByRole('main');
    await expect(page.getByRole('region', { name: 'Your drive', exact: true }).getByText(`${DAV}/`, { exact: true }).isVisible()).resolves.toBe(true);
    await expect(main.getByText('None of your groups shows you a WebDrive URL').isVisible()).resolves.toBe(true);
    const field = page.getByLabel('WebDrive name');
    await field.fill('Bob!');
    await page.getByRole('button', { name: 'Create WebDrive URL' }).click();
    await page.locator('#endpoint-error').getByText('Endpoint must be 3 to 10 lowercase letters').waitFor();
    expect(await field.inputValue()).toBe('Bob!');
    await field.fill('adaweb');
    await page.getByRole('button', { name: 'Create WebDrive URL' }).click();
    await page.getByText('This name is already in use. Choose another.').waitFor();
    await expectAccessible(page);
    await field.fill('bobweb');
    await page.getByRole('button', { name: 'Create WebDrive URL' }).click();
    await main.getByText(`${DAV}/webdrive/bobweb/`, { exact: true }).first().waitFor();
    expect(dataOf<{ endpoint: string }>(await apiCall(f.client, bob.session, 'GET', '/api/user/webdrive')).endpoint).toBe('bobweb');
    expectClean(watched);
  });

  it('works with the keyboard alone: a guide opens and an address is copied without a mouse', async () => {
    const watched = await signedIn(ada, { clipboard: true });
    const { page } = watched;
    const focused = () => page.evaluate('document.activeElement && (document.activeElement.getAttribute("aria-label") || document.activeElement.textContent)');
    // From the page's heading, Tab leads to the first Copy button (the WebDrive URL's).
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Copy your WebDrive URL');
    await page.keyboard.press('Enter');
    await expect.poll(() => clipboardText(page)).toBe(`${DAV}/webdrive/adaweb/`);
    for (let i = 0; i < 20 && (await focused()) !== 'rclone'; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('rclone');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Copy the rclone configuration' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Copy the rclone configuration');
    expectClean(watched);
  });

  it('fits a 1,920 px wide screen, and passes axe-core there', async () => {
    const watched = await signedIn(ada, { width: 1920 });
    expect(await sidewaysOverflow(watched.page)).toEqual([]);
    await keepScreenshot(watched.page, 'connect-1920');
    await expectAccessible(watched.page);
    expectClean(watched);
  });

  it('fits a 360 px wide screen with every guide open', async () => {
    const watched = await signedIn(ada, { width: 360 });
    const { page } = watched;
    for (const client of ['Sync apps: Nextcloud and ownCloud', 'macOS Finder', 'Windows Explorer', 'rclone', 'Linux (davfs2)', 'Cyberduck and WinSCP', 'Phone or tablet']) {
      await page.getByText(client, { exact: true }).click();
    }
    expect(await sidewaysOverflow(page)).toEqual([]);
    await keepScreenshot(page, 'connect-360');
    await expectAccessible(page);
    expectClean(watched);
  });

  it('puts an app password in the rclone and davfs2 guides when 2FA is on, and links to making one', async () => {
    // Bob signs in, then 2FA is on for him (as after he turned it on): drive clients cannot ask for a code.
    const watched = await f.openPage({ clipboard: true });
    const { page } = watched;
    await page.goto(`${f.base}/account`);
    await signInThroughForm(page, bob.email, bob.password);
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await f.store.ctx.storage.sql.run('UPDATE users SET twofa = 1 WHERE uuid = ?', [bob.uuid]);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Connect your drive' }).click();
    await page.getByRole('heading', { name: 'Your drive', exact: true }).waitFor();
    for (const client of ['rclone', 'Linux (davfs2)']) await page.getByText(client, { exact: true }).click();
    const main = page.getByRole('main');
    const text = (await main.textContent()) ?? '';
    expect(text).not.toContain('YOUR-PASSWORD');
    expect(text).toContain('run rclone obscure YOUR-APP-PASSWORD');
    expect(text).toContain(` ${bob.email} YOUR-APP-PASSWORD`);
    await page.getByRole('button', { name: 'Copy the rclone command' }).click();
    expect(await clipboardText(page)).toContain(`pass="$(rclone obscure 'YOUR-APP-PASSWORD')"`);
    const links = main.getByRole('link', { name: 'Make an app password in Account' });
    expect(await links.count()).toBe(3);
    for (const width of [360, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await sidewaysOverflow(page)).toEqual([]);
      await keepScreenshot(page, `connect-twofa-${width}`);
      await expectAccessible(page);
    }
    await links.first().click();
    await page.waitForURL((url) => url.pathname === '/account');
    expectClean(watched);
  });
});
