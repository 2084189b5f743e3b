/**
 * A person opens their WebDrive URL in a real browser (issue 6): Debian's Chromium, headless,
 * driven by playwright-core (no browser download: the system one). They log in through the Basic
 * prompt, see their folder's entries with sizes and dates, open a folder and come back up by the
 * path links, sort by size, open a file, download another through its link and get the same
 * bytes, while the page loads nothing from elsewhere and runs no script. Files a browser would
 * run as a page (HTML) arrive as sandboxed attachments.
 *
 * Chromium is started as the environment notes say it must be here (as root, no sandbox, no
 * background networking: its connections out are refused on this closed network).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { requireBinary } from '../helpers/require-binary.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const browserBinary = requireBinary('chromium');

const README = 'r'.repeat(2048);
const AWKWARD = 'Über ñ #1 & 50%.txt';

browserBinary.describe('the WebDrive page in headless Chromium', () => {
  let f: BridgeFixture;
  let user: DavUser;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let tmp: ReturnType<typeof makeTmpDir>;
  const problems: string[] = [];
  let base = '';

  /** Rows of the entry table as the person reads them: name, size, date. */
  async function rows(): Promise<Array<{ name: string; size: string; modified: string }>> {
    return page.$$eval('tbody tr.folder, tbody tr.file', (trs) =>
      trs.map((tr) => ({
        name: (tr.querySelector('td.name a')?.textContent ?? '').trim(),
        size: (tr.querySelector('td.size')?.textContent ?? '').trim(),
        modified: (tr.querySelector('td.modified')?.textContent ?? '').trim(),
      })),
    );
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    user = await f.newDavUser();
    tmp = makeTmpDir('driveway-browser-');
    const sub = await createFolder(f.client, user.session, 'home', 'sub dir');
    await uploadFile(f.client, user.session, sub, 'inner.txt', 'inside the sub folder');
    await uploadFile(f.client, user.session, 'home', 'readme.txt', README);
    await uploadFile(f.client, user.session, 'home', AWKWARD, 'awkward but fine');
    await uploadFile(f.client, user.session, 'home', 'big.bin', Buffer.alloc(3 * 1024 * 1024 + 5, 7));
    await uploadFile(f.client, user.session, 'home', 'page.html', '<script>document.title = "ran"</script>');
    const res = await f.client.http.requestRaw({ method: 'POST', path: '/api/user/webdrive', token: user.session.token, json: { endpoint: 'brws' } });
    expect(res.status).toBe(200);
    base = `${f.davUrl}/webdrive/brws/`;

    browser = await launchChromium(browserBinary.path);
    context = await browser.newContext({ httpCredentials: { username: user.email, password: user.password }, acceptDownloads: true });
    page = await context.newPage();
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await f?.close();
    tmp?.remove();
  });

  it('shows the folder’s entries, folders first, with human sizes and dates, and the path back up', async () => {
    const response = await page.goto(base);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe('brws – driveway');
    expect((await page.textContent('nav.crumbs'))?.replace(/\s+/g, ' ').trim()).toBe('driveway/webdrive/brws');
    const listed = await rows();
    expect(listed.map((r) => r.name)).toEqual(['sub dir/', 'big.bin', 'page.html', 'readme.txt', AWKWARD]);
    expect(listed.find((r) => r.name === 'readme.txt')?.size).toBe('2.0 KiB');
    expect(listed.find((r) => r.name === 'big.bin')?.size).toBe('3.0 MiB');
    expect(listed.find((r) => r.name === 'sub dir/')?.size).toBe('');
    const today = new Date().toISOString().slice(0, 10);
    for (const row of listed) expect(row.modified).toMatch(new RegExp(`^${today} \\d\\d:\\d\\d UTC$`));
    expect(await page.textContent('p.summary')).toBe('1 folder, 4 files (3.0 MiB)');
  });

  it('opens a folder by its link and comes back up through the path links', async () => {
    await page.click('text=sub dir/');
    await page.waitForURL(`${base}sub%20dir/`);
    expect((await rows()).map((r) => r.name)).toEqual(['inner.txt']);
    await page.click('nav.crumbs >> text=brws');
    await page.waitForURL(base);
    await page.click('text=sub dir/');
    await page.click('text=Parent folder');
    await page.waitForURL(base);
    expect((await rows()).length).toBe(5);
  });

  it('sorts by size, largest first, through the column link', async () => {
    await page.click('th.size a');
    await page.click('th.size a');
    expect(page.url()).toBe(`${base}?sort=size&order=desc`);
    // 3 MiB, 2,048 bytes, 39 bytes, 16 bytes.
    expect((await rows()).map((r) => r.name)).toEqual(['sub dir/', 'big.bin', 'readme.txt', 'page.html', AWKWARD]);
    await page.goto(base);
  });

  it('opens a file with an awkward name by its link', async () => {
    await page.click(`text=${AWKWARD}`);
    await page.waitForLoadState();
    expect(decodeURIComponent(page.url())).toBe(`${base}${AWKWARD}`);
    expect(await page.textContent('body')).toBe('awkward but fine');
    await page.goto(base);
  });

  it('downloads a file through its Download link, with the same bytes', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('tr:has-text("readme.txt") >> text=Download')]);
    expect(download.suggestedFilename()).toBe('readme.txt');
    const saved = path.join(tmp.dir, 'readme.txt');
    await download.saveAs(saved);
    expect(readFileSync(saved, 'utf8')).toBe(README);
  });

  it('never runs an HTML file from the drive: it arrives as a sandboxed attachment', async () => {
    const res = await context.request.get(`${base}page.html`);
    expect(res.status()).toBe(200);
    expect(res.headers()['content-disposition']).toMatch(/^attachment; filename="page\.html"/);
    expect(res.headers()['content-security-policy']).toMatch(/^sandbox; default-src 'none'/);
    expect(await page.title()).toBe('brws – driveway');
  });

  it('asks who you are first: without credentials the browser gets 401 with a Basic challenge', async () => {
    const anonymous = await browser.newContext();
    try {
      const res = await anonymous.request.get(base);
      expect(res.status()).toBe(401);
      expect(res.headers()['www-authenticate']).toMatch(/^Basic realm=/);
    } finally {
      await anonymous.close();
    }
  });

  it('loaded nothing from elsewhere and logged no error', () => {
    expect(problems).toEqual([]);
  });
});
