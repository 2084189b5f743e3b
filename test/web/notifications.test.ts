/**
 * The notifications page (pages/notifications.tsx) and its count in the navigation, in Debian's
 * Chromium: copies offered to a person are listed in the app's words, newest first, and counted
 * beside Notifications; Delete takes one away (the count follows), Delete all the rest, and the
 * store's list is then empty. axe-core finds nothing serious; nothing sticks out sideways at 360
 * or 1,920 px.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uploadFile } from '../helpers/seed.js';
import { requireBinary } from '../helpers/require-binary.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webFixture, type WebFixture } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('the notifications page', () => {
  let f: WebFixture;
  let ada: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    f = await webFixture(chromiumBinary.path);
    ada = await f.newUser({ fullname: 'Ada Lovelace' });
    bob = await f.newUser({ fullname: 'Bob Babbage' });
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  async function fits(page: Page, width: number, name: string): Promise<void> {
    await page.setViewportSize({ width, height: 900 });
    expect(await sidewaysOverflow(page)).toEqual([]);
    await keepScreenshot(page, `notifications-${name}-${width}`);
  }

  it('lists the copies offered, counts them in the navigation, and deletes one and then all', async () => {
    for (const name of ['analytical-engine-notes-with-a-rather-long-name-that-must-wrap.txt', 'note-g.txt']) {
      const file = await uploadFile(f.client, ada.session, 'home', name, `${name}\n`);
      expect((await apiCall(f.client, ada.session, 'POST', `/api/nodes/${file}`, { share_copy_with: [bob.uuid] })).status).toBe(204);
    }
    const watched = await f.openPage({ width: 1920, height: 900 });
    const { page } = watched;
    await page.goto(`${f.base}/notifications`);
    await signInThroughForm(page, bob.email, bob.password);
    await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();

    const items = page.getByRole('main').getByRole('listitem');
    await expect.poll(() => items.count()).toBe(2);
    await expect(items.nth(0).textContent()).resolves.toContain('Ada Lovelace shared a copy of “note-g.txt” with you');
    await expect(items.nth(1).textContent()).resolves.toContain('Ada Lovelace shared a copy of “analytical-engine-notes-with-a-rather-long-name-that-must-wrap.txt” with you');
    const navLink = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Notifications/ });
    await expect.poll(() => navLink.evaluate((a) => a.textContent)).toBe('Notifications2, 2 notifications');
    await expectAccessible(page);
    await fits(page, 360, 'list');
    await expectAccessible(page);
    await fits(page, 1920, 'list');
    // At 1,920 px the navigation is a sidebar, its count in view.

    await page.getByRole('button', { name: 'Delete notification: Ada Lovelace shared a copy of “note-g.txt” with you' }).click();
    await page.getByRole('status').getByText('Notification deleted.').waitFor();
    await expect.poll(() => items.count()).toBe(1);
    await expect.poll(() => navLink.evaluate((a) => a.textContent)).toBe('Notifications1, 1 notification');

    await page.getByRole('button', { name: 'Delete all notifications' }).click();
    await page.getByText('You have no notifications.').waitFor();
    await expect.poll(() => navLink.evaluate((a) => a.textContent)).toBe('Notifications');
    expect(dataOf<unknown[]>(await apiCall(f.client, bob.session, 'GET', '/api/notifications'))).toEqual([]);
    await expectAccessible(page);
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  });
});
