/**
 * One session per browser (issue 31, item 4) in Debian's Chromium: the tabs of one browser (the
 * pages of one context) share a sign-in; a Ctrl+click opens a tab that is signed in; a reload
 * keeps the session; Sign out in one tab takes every other to sign-in within a second, and a tab
 * that missed it meets the store's 401 at its next call; no script of the page can read the
 * session's token (HttpOnly cookie), and neither storage holds a token or the file access key;
 * the page's uploads reach the bridge with a short-lived token of the session, not its own.
 */
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { uploadFile } from '../helpers/seed.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { expectAccessible, signInThroughForm, tokenOf, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

/** What page script can see of the session: document.cookie and every value of both storages. */
function scriptView(page: Page): Promise<{ cookie: string; local: string[]; session: string[] }> {
  // A string: this file is compiled without the DOM's types.
  return page.evaluate(`({
    cookie: document.cookie,
    local: Object.keys(localStorage).map((k) => k + '=' + localStorage.getItem(k)),
    session: Object.keys(sessionStorage).map((k) => k + '=' + sessionStorage.getItem(k)),
  })`);
}

/** The JWT's claims, unverified (the test reads its own session's tokens). */
function claimsOf(token: string): { jti: string; sub: string; exp: number; iat: number } {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { jti: string; sub: string; exp: number; iat: number };
}

chromiumBinary.describe('one session per browser', () => {
  const f = webSuiteFixture(chromiumBinary.path, { bridge: true });
  let ada: TestUser;

  beforeAll(async () => {
    ada = await f.newUser({ fullname: 'Ada Lovelace' });
    await uploadFile(f.client, ada.session, 'home', 'minutes.txt', 'minutes of the meeting\n');
  }, 120_000);

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign.filter((url) => !url.startsWith(`${f.davUrl}/`))).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  /** A new browser signed in as Ada through the form on /files, and the session token its cookie holds. */
  async function signedInAtFiles(): Promise<{ watched: WatchedPage; page: Page; context: WatchedPage['context']; token: string }> {
    const watched = await f.openPage();
    const { page, context } = watched;
    await page.goto(`${f.base}/files`);
    await signInThroughForm(page, ada.email, ada.password);
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    return { watched, page, context, token: (await tokenOf(page)) ?? '' };
  }

  it('shares the sign-in with a second tab and a link opened in a new tab, keeps it across a reload, and shows page script no token', async () => {
    const { watched, page, context, token } = await signedInAtFiles();
    expect(token).not.toBe('');
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'driveway_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/', secure: false });
    const key = dataOf<{ fileaccesskey: string }>(await apiCall(f.client, undefined, 'GET', '/api/session', undefined, { cookie: `driveway_session=${token}`, 'x-driveway-csrf': '1' })).fileaccesskey;

    // A second tab of the same browser: signed in, no sign-in page on the way.
    const second = await context.newPage();
    await second.goto(`${f.base}/connect`);
    await second.getByRole('heading', { name: 'Connect your drive' }).waitFor();
    expect(second.url()).toBe(`${f.base}/connect`);
    await expect(second.getByText('Signed in as Ada Lovelace').isVisible()).resolves.toBe(true);

    // A file's details opened in a new tab, as Ctrl+click on its link opens it (headless Chromium
    // opens no tab for the click itself): signed in, with the file access key learned from the store.
    const minutes = dataOf<Array<{ uuid: string; name: string }>>(await apiCall(f.client, ada.session, 'GET', '/api/nodes/home/dirlist')).find((e) => e.name === 'minutes.txt');
    const opened = await context.newPage();
    await opened.goto(`${f.base}/item/${minutes?.uuid ?? ''}`);
    await opened.getByRole('heading', { name: 'minutes.txt', level: 1 }).waitFor();
    expect(opened.url()).toMatch(new RegExp(`^${f.base}/item/[0-9a-f-]{36}$`));
    await expect.poll(() => opened.getByRole('link', { name: 'Download' }).first().getAttribute('href')).toContain(`/resources/auth/download/${encodeURIComponent(key)}/`);

    // A reload keeps the session.
    await page.reload();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    expect(page.url()).toBe(`${f.base}/files`);

    // Nothing a script of the page reads holds the token or the file access key.
    for (const tab of [page, second, opened]) {
      const view = await scriptView(tab);
      expect(view.cookie).toBe('');
      for (const value of [...view.local, ...view.session]) {
        expect(value).not.toContain(token);
        expect(value).not.toContain(key);
        expect(value).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
      }
    }
    expect(await tokenOf(page)).toBe(token);
    await expectAccessible(second);
    expectClean(watched);
  });

  it('uploads to the bridge with a short-lived token of the session, never the session\'s own', async () => {
    const watched = await f.openPage();
    const { page } = watched;
    const bridgeAuth: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${f.davUrl}/`) && request.method() !== 'OPTIONS') bridgeAuth.push(request.headers().authorization ?? '');
    });
    await page.goto(`${f.base}/files`);
    await signInThroughForm(page, ada.email, ada.password);
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    const token = (await tokenOf(page)) ?? '';
    // A drop of one file onto the listing, a DataTransfer built in the page as a browser builds one.
    const drop = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['through the bridge\\n'], 'via-bridge.txt', { type: 'text/plain' }));
      return transfer;
    })()`);
    const zone = page.getByRole('region', { name: 'Drop files and folders here to upload them' });
    await zone.dispatchEvent('dragover', { dataTransfer: drop });
    await zone.dispatchEvent('drop', { dataTransfer: drop });
    const uploaded = async () => dataOf<Array<{ name: string; size: number }>>(await apiCall(f.client, ada.session, 'GET', '/api/nodes/home/dirlist')).find((e) => e.name === 'via-bridge.txt')?.size;
    await expect.poll(uploaded, { timeout: 10_000 }).toBe('through the bridge\n'.length);
    expect(bridgeAuth.length).toBeGreaterThan(0);
    // Where the bridge took the upload (tus), it came with a token of this session, not the cookie's.
    for (const auth of bridgeAuth) {
      expect(auth).toMatch(/^Bearer eyJ/);
      const bridgeToken = auth.slice('Bearer '.length);
      expect(bridgeToken).not.toBe(token);
      const claims = claimsOf(bridgeToken);
      expect(claims.jti).toBe(claimsOf(token).jti);
      expect(claims.exp - claims.iat).toBeLessThanOrEqual(600);
    }
    expectClean(watched);
  });

  it('signs out every tab within a second; a tab that missed it lands on sign-in at its next call', async () => {
    const { page, context, token } = await signedInAtFiles();
    const other = await context.newPage();
    await other.goto(`${f.base}/favorites`);
    await other.getByRole('heading', { name: 'Favorites', level: 1 }).waitFor();
    const hint = await other.evaluate(() => localStorage.getItem('driveway.session'));

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();
    const signedOutAt = Date.now();
    await other.getByText('You have signed out in another tab of this browser.').waitFor({ timeout: 1000 });
    expect(Date.now() - signedOutAt).toBeLessThan(1000);
    expect(other.url()).toBe(`${f.base}/sign-in`);
    await expectAccessible(other);
    // The store ended it: the browser holds no cookie, the token is refused.
    expect(await tokenOf(page)).toBeUndefined();
    expect((await apiCall(f.client, token, 'GET', '/api/user')).status).toBe(401);
    // Its next action (to the page it was on) is sign-in again.
    await other.goto(`${f.base}/favorites`);
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(other.url()).toBe(`${f.base}/sign-in?next=${encodeURIComponent('/favorites')}`);

    // A tab that missed the news (it still believes in the session it remembers): the store's 401 sends it to sign-in.
    await page.close();
    await other.evaluate((saved) => localStorage.setItem('driveway.session', saved ?? ''), hint);
    await other.goto(`${f.base}/favorites`);
    await other.getByText('Your session has ended').waitFor();
    expect(other.url()).toBe(`${f.base}/sign-in?next=${encodeURIComponent('/favorites')}`);
    expect(await other.evaluate(() => localStorage.getItem('driveway.session'))).toBeNull();
  });

  it('takes a tab waiting on sign-in along when another tab signs in', async () => {
    const watched = await f.openPage();
    const { page, context } = watched;
    await page.goto(`${f.base}/connect`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const other = await context.newPage();
    await other.goto(`${f.base}/sign-in`);
    await signInThroughForm(other, ada.email, ada.password);
    await other.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Connect your drive' }).waitFor({ timeout: 2000 });
    expect(page.url()).toBe(`${f.base}/connect`);
    // It learned the session's file access key from the store (a file's Download link has it), without a reload.
    const token = (await tokenOf(page)) ?? '';
    const key = dataOf<{ fileaccesskey: string }>(await apiCall(f.client, token, 'GET', '/api/session')).fileaccesskey;
    const minutes = dataOf<Array<{ uuid: string; name: string }>>(await apiCall(f.client, ada.session, 'GET', '/api/nodes/home/dirlist')).find((e) => e.name === 'minutes.txt');
    await page.evaluate(`history.pushState(null, '', '/item/${minutes?.uuid ?? ''}'); dispatchEvent(new PopStateEvent('popstate'))`);
    await page.getByRole('heading', { name: 'minutes.txt', level: 1 }).waitFor();
    await expect.poll(() => page.getByRole('link', { name: 'Download' }).first().getAttribute('href')).toContain(`/resources/auth/download/${encodeURIComponent(key)}/`);
    expectClean(watched);
  });
});
