/**
 * The look of the app (issue 31, "a page that reads as a product") in Debian's Chromium: at
 * 360 px the header is one short row and the navigation folds behind a Menu button (pointer and
 * keyboard, Escape closes it and gives the focus back); the listing shows a file-kind icon per
 * row and the store's thumbnail for an image (and the icon where the store has none), Details a
 * larger thumbnail; axe-core on Files, Details, Account and the open menu at 360 and 1,920 px,
 * with nothing sticking out sideways.
 */
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { pngBytes } from '../helpers/images.js';
import { requireBinary } from '../helpers/require-binary.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('the look of the app', () => {
  const f = webSuiteFixture(chromiumBinary.path);
  let ada: TestUser;
  let photo: string;
  let fakePhoto: string;

  beforeAll(async () => {
    ada = await f.newUser({ fullname: 'Ada Lovelace' });
    await createFolder(f.client, ada.session, 'home', 'Holiday');
    photo = await uploadFile(f.client, ada.session, 'home', 'beach.png', pngBytes(120, 80, [40, 120, 200]));
    // Named as an image, but not one: the store makes no thumbnail, the row keeps its icon.
    fakePhoto = await uploadFile(f.client, ada.session, 'home', 'not-really.jpg', 'these are words, not pixels');
    await uploadFile(f.client, ada.session, 'home', 'report.pdf', '%PDF-1.4 nothing much');
    await uploadFile(f.client, ada.session, 'home', 'budget.xlsx', 'PK not really a sheet');
  }, 120_000);

  async function signedInAt(where: string, width: number): Promise<WatchedPage> {
    const watched = await f.openPage({ width, height: width === 360 ? 780 : 1080 });
    await watched.page.goto(`${f.base}${where}`);
    await signInThroughForm(watched.page, ada.email, ada.password);
    await watched.page.waitForURL(`${f.base}${where}`);
    return watched;
  }

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  async function expectFits(page: Page, name: string): Promise<void> {
    expect(await sidewaysOverflow(page)).toEqual([]);
    await expectAccessible(page);
    await keepScreenshot(page, name);
  }

  /** The loaded size of an <img>, once it has loaded (0 while it has not). */
  const naturalWidth = (page: Page, selector: string) => page.locator(selector).evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth);

  it('keeps the header to one row at 360 px, the navigation behind a Menu button that opens and closes by pointer and keyboard', async () => {
    const watched = await signedInAt('/files', 360);
    const { page } = watched;
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    const header = await page.locator('header').boundingBox();
    expect(header?.height).toBeLessThanOrEqual(70);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const menu = page.getByRole('button', { name: 'Menu' });
    await expect(nav.isVisible()).resolves.toBe(false);
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
    await expectFits(page, 'look-files-360');

    await menu.click();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
    await nav.getByRole('link', { name: 'Files' }).waitFor();
    await expect(nav.getByRole('link', { name: 'Files' }).getAttribute('aria-current')).resolves.toBe('page');
    await expectFits(page, 'look-menu-360');
    // Escape folds it and the focus is back on the button.
    await page.keyboard.press('Escape');
    await expect(nav.isVisible()).resolves.toBe(false);
    await expect(menu.evaluate((button) => button === (button as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).resolves.toBe(true);
    // The keyboard alone: Enter opens, Tab reaches the links, a link goes there and folds the menu.
    await page.keyboard.press('Enter');
    await nav.getByRole('link', { name: 'Account' }).waitFor();
    await nav.getByRole('link', { name: 'Account' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await expect(nav.isVisible()).resolves.toBe(false);
    await expectFits(page, 'look-account-360');
    expectClean(watched);
  });

  it('shows the navigation as a sidebar at 1,920 px, with no Menu button', async () => {
    const watched = await signedInAt('/account', 1920);
    const { page } = watched;
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link', { name: 'Account' }).getAttribute('aria-current')).resolves.toBe('page');
    await expect(page.getByRole('button', { name: 'Menu' }).count()).resolves.toBe(0);
    const box = await nav.boundingBox();
    expect(box?.x).toBe(0);
    expect(box?.height).toBeGreaterThan(500);
    await expectFits(page, 'look-account-1920');
    expectClean(watched);
  });

  for (const width of [360, 1920]) {
    it(`shows icons and an image's thumbnail in the listing and in Details at ${width} px`, async () => {
      const watched = await signedInAt('/files', width);
      const { page } = watched;
      const row = (name: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name, exact: true }) });
      await row('beach.png').waitFor();
      // The image: the store's 64 px WebP, loaded.
      const thumb = row('beach.png').locator('img');
      // The browser's own sign-in has its own file access key.
      expect(await thumb.getAttribute('src')).toMatch(new RegExp(`^/resources/auth/thumbnail/[A-Za-z0-9_-]+/${photo}/1/64$`));
      await expect.poll(() => naturalWidth(page, `img[src$="/${photo}/1/64"]`)).toBe(64);
      // Everything else an icon: the folder, the PDF, the sheet; the fake photo falls back to its icon.
      for (const [name, kind] of [['Holiday', 'folder'], ['report.pdf', 'pdf'], ['budget.xlsx', 'spreadsheet'], ['not-really.jpg', 'image']] as const) {
        await row(name).locator(`svg.icon-${kind}`).waitFor();
      }
      await expect(row('not-really.jpg').locator('img').count()).resolves.toBe(0);
      // A thumbnail is decoration beside the name: the link's name is the file's.
      await expect(row('beach.png').getByRole('link').textContent()).resolves.toBe('beach.png');
      await expectFits(page, `look-files-thumbs-${width}`);

      await row('beach.png').getByRole('link').click();
      const big = page.getByRole('img', { name: 'Thumbnail of beach.png' });
      await big.waitFor();
      expect(await big.getAttribute('srcset')).toContain(`/${photo}/1/1024 1024w`);
      // Loaded: at one device pixel per CSS pixel, the 256 px one (srcset scales naturalWidth: 120 px at 256w in a 160 px box).
      await expect.poll(() => big.evaluate((img) => { const i = img as unknown as { currentSrc: string; naturalWidth: number }; return `${i.currentSrc.replace(/^.*\//, '')} ${i.naturalWidth}`; })).toBe('256 75');
      await expectFits(page, `look-details-${width}`);

      await page.goto(`${f.base}/item/${fakePhoto}`);
      await page.getByRole('heading', { name: 'not-really.jpg', level: 1 }).waitFor();
      await page.locator('.item-picture svg.icon-image').waitFor();
      expectClean(watched);
    });
  }
});
