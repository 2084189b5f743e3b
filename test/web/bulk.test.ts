/**
 * Bulk work on the Files and Trash pages (issue 31 item 8) in Debian's Chromium: 50 items
 * selected by pointer (a Shift+click range) and moved in one action, selected from the keyboard
 * (Ctrl+A) and trashed in one action, several restored in one action from the Trash; a folder
 * and a selection downloaded as zips, unpacked and compared byte for byte; the filter box and
 * keyboard selection (Space, Shift+Down, Escape); every name of a folder in the page for the
 * browser's Find. The store holds what the page said; axe-core at 360 and 1,920 px on each new state.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { expectAccessible, sidewaysOverflow, signInThroughForm, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

interface Listed {
  uuid: string;
  name: string;
  type: string;
}

chromiumBinary.describe('bulk work on the Files page', () => {
  const f = webSuiteFixture(chromiumBinary.path);
  let ada: TestUser;
  let tmp: ReturnType<typeof makeTmpDir>;

  beforeAll(async () => {
    ada = await f.newUser({ fullname: 'Ada Lovelace' });
    tmp = makeTmpDir('driveway-web-bulk-');
  }, 120_000);
  afterAll(async () => {
    tmp?.remove();
  });

  async function signedIn(at: string, width = 1920): Promise<WatchedPage> {
    const watched = await f.openPage({ width, height: 1000 });
    await watched.page.goto(`${f.base}${at}`);
    await signInThroughForm(watched.page, ada.email, ada.password);
    await watched.page.getByRole('navigation', { name: 'Drives' }).waitFor();
    return watched;
  }
  const listing = async (folder: string): Promise<Listed[]> => dataOf<Listed[]>(await apiCall(f.client, ada.session, 'GET', `/api/nodes/${folder}/dirlist`));
  const box = (page: Page, name: string) => page.getByRole('checkbox', { name: `Select ${name}`, exact: true });
  const status = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();
  async function checkedAtBothWidths(watched: WatchedPage): Promise<void> {
    await expectAccessible(watched.page);
    expect(await sidewaysOverflow(watched.page)).toEqual([]);
    await watched.page.setViewportSize({ width: 360, height: 780 });
    await expectAccessible(watched.page);
    expect(await sidewaysOverflow(watched.page)).toEqual([]);
    await watched.page.setViewportSize({ width: 1920, height: 1000 });
  }
  /** A download's zip unpacked with `unzip` (which checks every CRC); the folder it went to. */
  function unpack(file: string, label: string): string {
    const dir = path.join(tmp.dir, label);
    execFileSync('unzip', ['-q', file, '-d', dir]);
    return dir;
  }

  it('moves 50 selected items in one action, trashes them in one action, and restores several in one action', async () => {
    const batch = await createFolder(f.client, ada.session, 'home', 'Batch');
    const target = await createFolder(f.client, ada.session, 'home', 'Target');
    const names = Array.from({ length: 50 }, (_, i) => `item ${String(i + 1).padStart(2, '0')}.txt`);
    for (const name of names) await uploadFile(f.client, ada.session, batch, name, `${name}\n`);

    const watched = await signedIn(`/files/${batch}`);
    const { page } = watched;
    await box(page, 'item 01.txt').waitFor();
    // Every row is in the page (the browser's Find sees every name).
    await expect.poll(() => page.getByRole('row').count()).toBe(51);
    // Pointer: one box, then Shift+click on the last selects the range.
    await box(page, 'item 01.txt').click();
    await page.getByText('1 item selected').waitFor();
    await box(page, 'item 50.txt').click({ modifiers: ['Shift'] });
    const toolbar = page.getByRole('group', { name: 'Selected items' });
    await toolbar.getByText('50 items selected').waitFor();
    await checkedAtBothWidths(watched);

    await toolbar.getByRole('button', { name: 'Move…' }).click();
    const mover = page.getByRole('dialog', { name: 'Move 50 items' });
    await mover.getByRole('button', { name: 'Open Target' }).click();
    await mover.getByText('Folder chosen: Home / Target').waitFor();
    await mover.getByRole('button', { name: 'Move here' }).click();
    await status(page, '50 items moved to Home / Target.');
    await page.getByText('This folder is empty.').waitFor();
    expect((await listing(target)).map((e) => e.name).sort()).toEqual(names);
    expect(await listing(batch)).toEqual([]);

    // Keyboard: Ctrl+A in the list selects all, then one action trashes them.
    await page.goto(`${f.base}/files/${target}`);
    await box(page, 'item 01.txt').focus();
    await page.keyboard.press('Control+A');
    await toolbar.getByText('50 items selected').waitFor();
    await toolbar.getByRole('button', { name: 'Move to trash' }).click();
    await status(page, '50 items moved to the trash.');
    await page.getByRole('link', { name: 'Open the trash' }).waitFor();
    expect(await listing(target)).toEqual([]);
    expect((await listing('trash')).length).toBe(50);

    // Trash: three ticked, restored in one action, back where they were.
    await page.getByRole('link', { name: 'Open the trash' }).click();
    for (const name of ['item 03.txt', 'item 07.txt', 'item 42.txt']) await page.getByRole('checkbox', { name: `Select ${name} to restore` }).check();
    await checkedAtBothWidths(watched);
    await page.getByRole('button', { name: 'Restore 3 items' }).click();
    await status(page, '3 items restored.');
    expect((await listing(target)).map((e) => e.name).sort()).toEqual(['item 03.txt', 'item 07.txt', 'item 42.txt']);
    expect((await listing('trash')).length).toBe(47);
    await checkedAtBothWidths(watched);
    expect(watched.problems).toEqual([]);
    expect(watched.foreign).toEqual([]);
  }, 180_000);

  it('downloads a folder as a zip and several items as one zip, byte for byte', async () => {
    const album = await createFolder(f.client, ada.session, 'home', 'Album');
    const photo = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251));
    await uploadFile(f.client, ada.session, album, 'photo.bin', photo);
    await uploadFile(f.client, ada.session, album, 'notes.txt', 'album notes\n');
    const sub = await createFolder(f.client, ada.session, album, 'Sub');
    await uploadFile(f.client, ada.session, sub, 'deep.txt', 'deep\n');
    await createFolder(f.client, ada.session, album, 'Empty');
    await uploadFile(f.client, ada.session, 'home', 'loose.txt', 'loose\n');

    const watched = await signedIn('/files');
    const { page } = watched;
    await page.getByRole('button', { name: 'Actions for Album', exact: true }).click();
    const actions = page.getByRole('dialog', { name: 'Actions for Album' });
    const [folderZip] = await Promise.all([page.waitForEvent('download'), actions.getByRole('link', { name: 'Download folder as zip' }).click()]);
    expect(folderZip.suggestedFilename()).toBe('Album.zip');
    const whole = unpack(await folderZip.path(), 'album');
    expect(readFileSync(path.join(whole, 'Album/photo.bin')).equals(photo)).toBe(true);
    expect(readFileSync(path.join(whole, 'Album/notes.txt'), 'utf8')).toBe('album notes\n');
    expect(readFileSync(path.join(whole, 'Album/Sub/deep.txt'), 'utf8')).toBe('deep\n');
    expect(statSync(path.join(whole, 'Album/Empty')).isDirectory()).toBe(true);

    await box(page, 'Album').check();
    await box(page, 'loose.txt').check();
    const toolbar = page.getByRole('group', { name: 'Selected items' });
    await toolbar.getByText('2 items selected').waitFor();
    const [several] = await Promise.all([page.waitForEvent('download'), toolbar.getByRole('link', { name: 'Download as zip' }).click()]);
    expect(several.suggestedFilename()).toBe('Home.zip');
    const both = unpack(await several.path(), 'several');
    expect(readFileSync(path.join(both, 'Album/photo.bin')).equals(photo)).toBe(true);
    expect(readFileSync(path.join(both, 'loose.txt'), 'utf8')).toBe('loose\n');
    expect(watched.problems).toEqual([]);
  }, 120_000);

  it('filters the folder by name and selects from the keyboard', async () => {
    const mixed = await createFolder(f.client, ada.session, 'home', 'Mixed');
    for (const name of ['Alpha report.txt', 'beta.txt', 'ALPHABET.md', 'gamma.txt']) await uploadFile(f.client, ada.session, mixed, name, name);
    const watched = await signedIn(`/files/${mixed}`);
    const { page } = watched;
    await box(page, 'beta.txt').waitFor();
    await page.getByRole('searchbox', { name: 'Filter this folder by name' }).fill('alpha');
    await status(page, '2 of 4 items match the filter');
    expect(await page.getByRole('rowheader').allInnerTexts()).toEqual(['Alpha report.txt', 'ALPHABET.md']);
    await checkedAtBothWidths(watched);
    await page.getByRole('searchbox', { name: 'Filter this folder by name' }).fill('zzz');
    await page.getByText('Nothing here matches the filter.').waitFor();
    await page.getByRole('searchbox', { name: 'Filter this folder by name' }).fill('');
    await status(page, '4 items');

    // Space toggles the focused row; Shift+Down extends to the next and moves there; Escape clears.
    await box(page, 'Alpha report.txt').focus();
    await page.keyboard.press('Space');
    await page.getByText('1 item selected').waitFor();
    await page.keyboard.press('Shift+ArrowDown');
    await page.getByText('2 items selected').waitFor();
    expect(await page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe('Select ALPHABET.md');
    await expect(box(page, 'ALPHABET.md').isChecked()).resolves.toBe(true);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Space');
    await page.getByText('3 items selected').waitFor();
    await checkedAtBothWidths(watched);
    await page.keyboard.press('Escape');
    await expect(page.getByRole('group', { name: 'Selected items' }).count()).resolves.toBe(0);
    expect(watched.problems).toEqual([]);
  }, 120_000);
});
