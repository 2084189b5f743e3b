/**
 * What a review of the web app (issue 24, "How it must be") found, each as a person meets it in
 * Debian's Chromium: an "are you sure" step used by keyboard alone (the focus goes into it,
 * Escape leaves it, the focus comes back), a `?next=` with a control character that the URL
 * parser would turn into another site's address, a group tag the store refuses said next to the
 * field that caused it, and the main navigation marking where one is on a page below its entry.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { groupAdmin } from '../helpers/groups.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { requireBinary } from '../helpers/require-binary.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { apiCall } from '../helpers/user-api.js';
import { endSessionWhileAway, expectAccessible, signInThroughForm, tokenOf, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('the web app under review', () => {
  const f = webSuiteFixture(chromiumBinary.path);

  async function signedInAt(user: TestUser, where: string): Promise<WatchedPage> {
    const watched = await f.openPage();
    await watched.page.goto(`${f.base}${where}`);
    await signInThroughForm(watched.page, user.email, user.password);
    await watched.page.waitForURL(`${f.base}${where}`);
    return watched;
  }

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  /** The accessible name of what has the focus (its aria-label or its text). */
  const focused = (page: Page) => page.evaluate("(() => { const e = document.activeElement; return e ? e.getAttribute('aria-label') || e.textContent || e.tagName : '' })()");

  it('takes the keyboard into an "are you sure" step, out of it with Escape, and back to the button that asked', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const old = await uploadFile(f.client, ada.session, 'home', 'old.txt', 'old\n');
    expect((await apiCall(f.client, ada.session, 'DELETE', `/api/nodes/${old}`)).status).toBe(204);
    const watched = await signedInAt(ada, '/trash');
    const { page } = watched;
    const mine = page.getByRole('region', { name: 'Your trash' });
    const ask = mine.getByRole('button', { name: 'Delete for good: old.txt' });
    await ask.focus();
    await page.keyboard.press('Enter');
    await mine.getByText('Delete old.txt for good? It cannot be restored afterwards.').waitFor();
    // Into the step, on the harmless choice: a second Enter does not delete.
    await expect.poll(() => focused(page)).toBe('Cancel');
    await page.keyboard.press('Escape');
    await expect(mine.getByText('Delete old.txt for good?').count()).resolves.toBe(0);
    await expect.poll(() => focused(page)).toBe('Delete for good: old.txt');
    // Cancel by keyboard also gives the focus back; nothing was deleted.
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('Cancel');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('Delete for good: old.txt');
    expect((await apiCall(f.client, ada.session, 'GET', `/api/nodes/${old}`)).status).toBe(200);
    await expectAccessible(page);
    expectClean(watched);
  });

  it('stays on its own site after signing in when ?next= hides another site behind a tab or a newline', async () => {
    const joan = await f.newUser();
    for (const next of ['/\t/evil.example/x', '/\n/evil.example/x', '/\t\\evil.example/']) {
      const watched = await f.openPage();
      const { page } = watched;
      await page.goto(`${f.base}/sign-in?next=${encodeURIComponent(next)}`);
      await signInThroughForm(page, joan.email, joan.password);
      await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
      expect(page.url(), JSON.stringify(next)).toBe(`${f.base}/files`);
      expectClean(watched);
      await watched.context.close();
    }
  });

  it('says a refused tag next to the field that caused it, keeping what was typed', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const group = await groupAdmin(f.client, f.admin).group('Looms');
    await groupAdmin(f.client, f.admin).member(group, ada.uuid, { is_admin: true, node_permissions: ['read'] });
    const watched = await signedInAt(ada, `/groups/${group}`);
    const { page } = watched;
    await page.getByRole('heading', { name: 'Looms', level: 1 }).waitFor();
    await page.getByLabel('Tag name').fill('Urgent');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await page.getByText('(general)').waitFor();
    await page.getByLabel('Tag name').fill('urgent');
    await page.getByRole('button', { name: 'Add tag' }).click();
    const name = page.getByLabel('Tag name');
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    const described = (await name.getAttribute('aria-describedby')) ?? '';
    await expect(page.locator(`[id="${described.split(' ').pop() ?? ''}"]`).textContent()).resolves.toBe('The group has a tag of this name.');
    await expect(name.inputValue()).resolves.toBe('urgent');
    await page.getByLabel('Tag class').fill('nonsense');
    await page.getByLabel('Tag name').fill('Later');
    await page.getByRole('button', { name: 'Add tag' }).click();
    const tagClass = page.getByLabel('Tag class');
    await expect.poll(() => tagClass.getAttribute('aria-invalid')).toBe('true');
    await expect(name.getAttribute('aria-invalid')).resolves.toBe(null);
    await expect(tagClass.inputValue()).resolves.toBe('nonsense');
    await expectAccessible(page);
    expectClean(watched);
  });

  it('marks the navigation entry of the section one is in, on the pages below it too', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const folder = await createFolder(f.client, ada.session, 'home', 'Reports');
    const group = await groupAdmin(f.client, f.admin).group('Mills');
    await groupAdmin(f.client, f.admin).member(group, ada.uuid, { node_permissions: ['read'] });
    const watched = await signedInAt(ada, `/files/${folder}`);
    const { page } = watched;
    const nav = page.getByRole('navigation', { name: 'Main' });
    await page.getByRole('heading', { name: 'Reports', level: 1 }).waitFor();
    await expect(nav.getByRole('link', { name: 'Files' }).getAttribute('aria-current')).resolves.toBe('page');
    await page.goto(`${f.base}/groups/${group}`);
    await page.getByRole('heading', { name: 'Mills', level: 1 }).waitFor();
    await expect(nav.getByRole('link', { name: 'Groups' }).getAttribute('aria-current')).resolves.toBe('page');
    await expect(nav.getByRole('link', { name: 'Files' }).getAttribute('aria-current')).resolves.toBe(null);
    expectClean(watched);
  });

  it('says a refused organization next to its field, keeping what was typed', async () => {
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/admin/organizations`);
    await signInThroughForm(page, 'admin', f.store.adminPassword);
    await page.getByRole('button', { name: 'Create organization' }).waitFor();
    const id = page.getByLabel('Identifier');
    await id.fill('bad id!');
    await page.getByLabel('Name', { exact: true }).fill('Acme');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await expect.poll(() => id.getAttribute('aria-invalid')).toBe('true');
    await expect(page.locator('#org-id-error').textContent()).resolves.toMatch(/^Id must be 1 to 64 letters/);
    await expect(id.getAttribute('aria-describedby')).resolves.toContain('org-id-error');
    await expect(id.inputValue()).resolves.toBe('bad id!');
    await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('Acme');
    await expectAccessible(page);
    expectClean(watched);
  });

  it('announces each finished upload in the overall line, not only the end', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const watched = await signedInAt(ada, '/files');
    const { page } = watched;
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    await page.locator('#files-pick-files').setInputFiles([
      { name: 'a.txt', mimeType: 'text/plain', buffer: Buffer.from('a') },
      { name: 'b.txt', mimeType: 'text/plain', buffer: Buffer.from('b') },
    ]);
    const uploads = page.getByRole('region', { name: 'Uploads' });
    await uploads.getByRole('status').filter({ hasText: 'Overall: 2 of 2 files' }).waitFor();
    // (No expectClean: the page asks the WebDrive URL's bridge whether it takes tus, and none runs here.)
    expect(watched.problems.filter((p) => !/ERR_CONNECTION_REFUSED/.test(p))).toEqual([]);
  });

  // One test per page, each with its own time: twelve pages in one test (two sign-ins each) took
  // 26 s on a quiet machine, too close to the 60 s a test has on a busy one.
  describe('on every page, an ended session goes to sign-in and back to that page; the token is never in a URL nor in localStorage', () => {
    let ada: TestUser;
    let file: string;
    let group: string;
    beforeAll(async () => {
      ada = await f.newUser({ fullname: 'Ada Lovelace' });
      file = await uploadFile(f.client, ada.session, 'home', 'notes.txt', 'notes\n');
      group = await groupAdmin(f.client, f.admin).group('Weavers');
      await groupAdmin(f.client, f.admin).member(group, ada.uuid, { is_admin: true, node_permissions: ['read'] });
    });

    it.each(['/files', '/favorites', '/trash', '/shares', '/requests', '/groups', '/groups/<group>', '/item/<file>', '/share/<file>', '/account', '/connect', '/admin/users'])('%s', async (address) => {
      const where = address.replace('<group>', group).replace('<file>', file);
      const [username, password] = where.startsWith('/admin') ? ['admin', f.store.adminPassword] : [ada.email, ada.password];
      const watched = await f.openPage();
      const { page } = watched;
      const seen: string[] = [];
      page.on('request', (request) => seen.push(request.url()));
      await page.goto(`${f.base}${where}`);
      await signInThroughForm(page, username, password);
      await page.waitForURL(`${f.base}${where}`);
      // The session ends elsewhere (signed out from another tab, or it expired); the person comes
      // back to the page by its address, and the page meets the ended session itself.
      const token = await endSessionWhileAway(f, page);
      await page.goto(`${f.base}${where}`);
      await page.waitForURL(`${f.base}/sign-in?next=${encodeURIComponent(where)}`);
      await page.getByText('Your session has ended.').waitFor();
      await signInThroughForm(page, username, password);
      await page.waitForURL(`${f.base}${where}`);
      const newToken = (await tokenOf(page)) ?? '';
      await expect(page.evaluate('JSON.stringify(localStorage)')).resolves.not.toContain(newToken);
      expect(seen.filter((url) => url.includes(token) || url.includes(newToken))).toEqual([]);
      await watched.context.close();
    });
  });

  it('answers a malformed address (a broken %-escape) with the page and a message, not a blank page', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const watched = await signedInAt(ada, '/files');
    const { page } = watched;
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    for (const where of ['/item/%E0%A4%A', '/files/%zz', '/share/%zz', '/groups/%zz']) {
      await page.goto(`${f.base}${where}`);
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.locator('main').getByText(/does not exist, or you may not see it|no group at this address/).waitFor();
    }
    expect(watched.problems).toEqual([]);
    // The API answers such an address with SPEC's envelope, not the framework's own JSON.
    const answer = await fetch(`${f.base}/api/nodes/%E0%A4%A`, { headers: { authorization: `Bearer ${ada.session.token}` } });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ status: 'error', code: 'invalid_request' });
  });
});
