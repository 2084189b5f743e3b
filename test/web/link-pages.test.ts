/**
 * A link's page (issue 31 items 1, 2, "Link pages") in Debian's Chromium, as the person a link
 * was sent to: no account, a fresh browser. A file link shows its name, size, a preview and
 * Download (bytes compared); a password folder link asks in the page (a wrong password in words,
 * the right one opens that link only, not another with the same password), lists its tree,
 * downloads it all as a zip (unzipped, compared byte for byte), goes into a folder and downloads
 * from it; an upload link takes files from the picker and from
 * a drop (stored bytes compared) and lists only what this page sent; expired and unknown links
 * say so in words. axe-core and no sideways scroll at 360 and 1,920 px on every state
 * (screenshots kept as link-*.png).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { expectAccessible, keepScreenshot, sidewaysOverflow, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('a link\'s page for its recipient', () => {
  const f = webSuiteFixture(chromiumBinary.path);
  let ada: TestUser;

  beforeAll(async () => {
    ada = await f.newUser({ fullname: 'Ada Lovelace' });
  }, 120_000);

  const makeLink = async (node: string, body: Record<string, unknown>): Promise<{ url: string; token: string }> => dataOf(await apiCall(f.client, ada.session, 'POST', `/api/nodes/${node}/shares`, body));
  const listing = async (folder: string): Promise<Array<{ uuid: string; name: string }>> => dataOf(await apiCall(f.client, ada.session, 'GET', `/api/nodes/${folder}/dirlist`));
  async function storedText(folder: string, name: string): Promise<string> {
    const entry = (await listing(folder)).find((e) => e.name === name);
    expect(entry, name).toBeDefined();
    const res = await fetch(`${f.base}/resources/auth/download/${ada.session.fileAccessKey}/${entry?.uuid}/999999999999999/x`);
    return res.text();
  }

  /** axe-core at 1,920 and 360 px, nothing sideways, a screenshot of each. */
  async function checkState(page: Page, name: string): Promise<void> {
    for (const width of [1920, 360]) {
      await page.setViewportSize({ width, height: 900 });
      await expectAccessible(page);
      expect(await sidewaysOverflow(page), `${name} at ${width} px`).toEqual([]);
      await keepScreenshot(page, `link-${name}-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }
  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  it('a file link: name, size, preview and Download of the exact bytes, with no account', async () => {
    const bytes = Buffer.from('Notes on the Analytical Engine\n'.repeat(40));
    const file = await uploadFile(f.client, ada.session, 'home', 'notes.txt', bytes);
    const { url } = await makeLink(file, { type: 'public' });
    const watched = await f.openPage();
    const { page } = watched;
    const answer = await page.goto(url);
    expect(answer?.status()).toBe(200);
    await page.getByRole('heading', { name: 'notes.txt', level: 1 }).waitFor();
    await page.getByText(`(${bytes.length.toLocaleString('en')} bytes)`).waitFor();
    // The preview: the store's bytes in a sandboxed frame.
    const frame = page.frameLocator('iframe[title="Preview of notes.txt"]');
    await frame.getByText('Notes on the Analytical Engine').first().waitFor();
    expect(await page.locator('iframe.item-preview').getAttribute('sandbox')).toBe('');
    await checkState(page, 'file');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe('notes.txt');
    expect(readFileSync(await download.path())).toEqual(bytes);
    // Nothing signed in: no navigation of the app, no session kept.
    expect(await page.getByRole('navigation', { name: 'Main' }).count()).toBe(0);
    // Strings: this file is compiled without the DOM's types.
    expect(await page.evaluate('sessionStorage.length + localStorage.length')).toBe(0);
    expectClean(watched);
  });

  it('a password folder link: asked in the page, a wrong password in words, the tree navigable, all of it as a zip and a file downloaded; another password link stays shut', async () => {
    const folder = await createFolder(f.client, ada.session, 'home', 'Engine drawings');
    const inner = await createFolder(f.client, ada.session, folder, 'Mill');
    const drawing = Buffer.from('gear train, sheet 7\n');
    await uploadFile(f.client, ada.session, inner, 'sheet 7.txt', drawing);
    await uploadFile(f.client, ada.session, folder, 'index.txt', 'the index\n');
    const { url } = await makeLink(folder, { type: 'public', password: 'difference' });
    const other = await makeLink(await uploadFile(f.client, ada.session, 'home', 'letters.txt', 'to Babbage\n'), { type: 'public', password: 'difference' });

    const watched = await f.openPage();
    const { page } = watched;
    const statuses: number[] = [];
    page.on('response', (response) => {
      if (response.headers()['www-authenticate']) statuses.push(response.status());
    });
    await page.goto(url);
    await page.getByRole('heading', { name: 'This link has a password', level: 1 }).waitFor();
    await checkState(page, 'password');

    await page.getByLabel('Password').fill('analytical');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByText('That password is not right. Check it and try again.').waitFor();
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    await checkState(page, 'password-wrong');

    await page.getByLabel('Password').fill('difference');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('heading', { name: 'Engine drawings', level: 1 }).waitFor();
    const rows = page.locator('table.link-table tbody tr');
    expect(await rows.count()).toBe(2);
    await page.getByRole('link', { name: 'Download all of Engine drawings as a zip file' }).waitFor();
    await checkState(page, 'folder');

    // Download all: the folder as a zip, streamed by the store (its zip route), unzipped and compared byte for byte.
    const [zip] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download all of Engine drawings as a zip file' }).click()]);
    expect(zip.suggestedFilename()).toBe('Engine drawings.zip');
    const unpacked = makeTmpDir('driveway-link-zip-');
    try {
      execFileSync('unzip', ['-q', await zip.path(), '-d', unpacked.dir]);
      expect(readFileSync(path.join(unpacked.dir, 'Engine drawings/Mill/sheet 7.txt'))).toEqual(drawing);
      expect(readFileSync(path.join(unpacked.dir, 'Engine drawings/index.txt'), 'utf8')).toBe('the index\n');
    } finally {
      unpacked.remove();
    }

    await page.getByRole('link', { name: 'Open folder Mill' }).click();
    await page.getByRole('heading', { name: 'Mill', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/\/Mill$/);
    await checkState(page, 'folder-inner');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download sheet 7.txt' }).click()]);
    expect(readFileSync(await download.path())).toEqual(drawing);
    // Back to the top by the crumbs; a reload keeps it open (the cookie, not the page, holds it).
    await page.getByRole('link', { name: 'Back to the shared folder' }).click();
    await page.getByRole('heading', { name: 'Engine drawings', level: 1 }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Engine drawings', level: 1 }).waitFor();
    // The cookie is not readable by the page.
    expect(await page.evaluate('document.cookie')).toBe('');

    // Another link with the same password: still asks.
    await page.goto(other.url);
    await page.getByRole('heading', { name: 'This link has a password', level: 1 }).waitFor();
    // Never a Basic challenge to the browser.
    expect(statuses).toEqual([]);
    expectClean(watched);
  });

  it('an upload link: files from the picker and from a drop are received and stored, and only this page\'s files are listed', async () => {
    const folder = await createFolder(f.client, ada.session, 'home', 'Submissions');
    const { url, token } = await makeLink(folder, { type: 'upload' });
    // Someone else sent a file before (as curl would).
    const form = new FormData();
    form.append('file', new Blob(['not yours to see']), 'earlier.txt');
    expect((await fetch(`${f.base}/public/${token}/upload`, { method: 'POST', body: form })).status).toBe(200);

    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(url);
    await page.getByRole('heading', { name: 'Send files', level: 1 }).waitFor();
    await checkState(page, 'upload');

    const picked = [
      { name: 'essay.txt', mimeType: 'text/plain', buffer: Buffer.from('my essay\n'.repeat(5000)) },
      { name: 'earlier.txt', mimeType: 'text/plain', buffer: Buffer.from('my own earlier\n') },
    ];
    await page.locator('#link-pick').setInputFiles(picked);
    await page.getByText('2 of 2 files received.').waitFor();
    await page.getByText('Received as earlier (2).txt (15 bytes)').waitFor();
    // A drop onto the zone.
    await page.evaluate(`(() => {
      const data = new DataTransfer();
      data.items.add(new File(['dropped bytes\\n'], 'dropped.txt', { type: 'text/plain' }));
      document.querySelector('.link-drop').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    })()`);
    await page.getByText('3 of 3 files received.').waitFor();
    await checkState(page, 'upload-done');
    // Only what this page sent: the earlier file is nowhere on the page.
    expect(await page.locator('.link-sent li').allTextContents()).toEqual([expect.stringMatching(/^essay\.txt/), expect.stringMatching(/^earlier\.txt.*earlier \(2\)\.txt/), expect.stringMatching(/^dropped\.txt/)]);
    expect(await page.getByText('not yours to see').count()).toBe(0);

    expect((await listing(folder)).map((e) => e.name).sort()).toEqual(['dropped.txt', 'earlier (2).txt', 'earlier.txt', 'essay.txt']);
    expect(await storedText(folder, 'essay.txt')).toBe('my essay\n'.repeat(5000));
    expect(await storedText(folder, 'earlier (2).txt')).toBe('my own earlier\n');
    expect(await storedText(folder, 'dropped.txt')).toBe('dropped bytes\n');
    expect(await storedText(folder, 'earlier.txt')).toBe('not yours to see');
    expectClean(watched);
  });

  it('an expired link and an unknown one say so in words, with 410 and 404; programs still get JSON', async () => {
    const file = await uploadFile(f.client, ada.session, 'home', 'old.txt', 'old');
    const expiring = await makeLink(file, { type: 'public', expires: f.store.clock.now() + 60_000 });
    const folder = await createFolder(f.client, ada.session, 'home', 'Open folder');
    const open = await makeLink(folder, { type: 'public' });
    f.store.clock.advance(61_000);

    const watched = await f.openPage();
    const { page } = watched;
    expect((await page.goto(expiring.url))?.status()).toBe(410);
    await page.getByText('This link has expired. Ask the person who sent it for a new one.').waitFor();
    await page.getByRole('heading', { name: 'This link does not work', level: 1 }).waitFor();
    await checkState(page, 'expired');
    expect((await page.goto(`${f.base}/public/${'Z'.repeat(43)}`))?.status()).toBe(404);
    await page.getByText(/^There is no link at this address/).waitFor();
    await checkState(page, 'unknown');

    // curl and wget: the JSON as documented.
    const program = await fetch(open.url, { headers: { accept: '*/*' } });
    expect(await program.json()).toEqual({ status: 'success', msg: 'shared folder', data: { name: 'Open folder', type: 'Dir', entries: [] } });
    const gone = await fetch(expiring.url, { headers: { accept: '*/*' } });
    expect({ status: gone.status, body: await gone.json() }).toMatchObject({ status: 410, body: { status: 'error', code: 'link_expired' } });
    expectClean(watched);
  });
});
