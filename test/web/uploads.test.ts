/**
 * Uploads that survive (issue 31, items 5-7 and the name-conflict question) in Debian's Chromium:
 * an upload over the quota is refused before any byte moves, in under a second, in the error
 * colour, saying the room left, and goes once the quota is raised (Retry); Cancel stops an upload
 * and Retry sends it again; a name already in the folder asks replace (a new revision), keep
 * both (`name (1).ext`) or skip, once for a batch with "apply to all"; a batch shows one line of
 * counts with its rows folded (its small files sent by the bridge's bulk upload, a few requests
 * for the whole drop); the usage bar in the navigation says what is used of the quota.
 * Then a real driveway process (store + bridge, started and stopped by its PID) is stopped for
 * 30 s in the middle of a tus upload and started again: the uploads list stays in view and says
 * it waits for the server, and the upload finishes by itself with the right SHA-1, one revision.
 * axe-core on each new state at 360 and 1,920 px, no sideways scroll.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { spawnDriveway, ADMIN_PASSWORD, type DrivewayProcess } from '../helpers/driveway-process.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { requireBinary } from '../helpers/require-binary.js';
import { uploadFile } from '../helpers/seed.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

interface Listed {
  uuid: string;
  name: string;
  type: string;
  size: number;
}

/** The error colour of the app's stylesheet (--error: #a8261c), as getComputedStyle answers it. */
const ERROR_COLOUR = 'rgb(168, 38, 28)';

/** Accessible and no sideways scroll, at the width the page has now. */
async function checkLayout(page: Page, name: string): Promise<void> {
  expect(await sidewaysOverflow(page)).toEqual([]);
  await keepScreenshot(page, name);
  await expectAccessible(page);
}

/** Slows the page's uploads to a number of bytes a second (the DevTools protocol's network emulation); answers how to lift the limit. */
async function throttleUploads(watched: WatchedPage, bytesPerSecond: number): Promise<() => Promise<void>> {
  const cdp = await watched.context.newCDPSession(watched.page);
  await cdp.send('Network.enable');
  const limit = (upload: number) => cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: upload });
  await limit(bytesPerSecond);
  return async () => void (await limit(-1));
}

chromiumBinary.describe('uploads on the Files page', () => {
  const f = webSuiteFixture(chromiumBinary.path, { bridge: true });
  let tmp: ReturnType<typeof makeTmpDir>;

  beforeAll(async () => {
    tmp = makeTmpDir('driveway-web-uploads-');
  }, 120_000);
  afterAll(async () => {
    tmp?.remove();
  });

  async function signedIn(user: TestUser, options: { width?: number; height?: number } = {}): Promise<WatchedPage> {
    const watched = await f.openPage(options);
    await watched.page.goto(`${f.base}/files`);
    await signInThroughForm(watched.page, user.email, user.password);
    await watched.page.getByRole('navigation', { name: 'Drives' }).waitFor();
    return watched;
  }
  const listing = async (user: TestUser, folder = 'home'): Promise<Listed[]> => dataOf<Listed[]>(await apiCall(f.client, user.session, 'GET', `/api/nodes/${folder}/dirlist`));
  const named = async (user: TestUser, name: string, folder = 'home'): Promise<Listed | undefined> => (await listing(user, folder)).find((e) => e.name === name);

  it('refuses a file over the quota before any byte moves, in under a second, in the error colour with the room left; Retry sends it once there is room', async () => {
    const kim = await f.newUser({ fullname: 'Kim Quota', quotaBytes: 1_000_000 });
    const watched = await signedIn(kim, { width: 1920, height: 1080 });
    const { page } = watched;
    await page.getByText('This folder is empty.').waitFor();
    // The usage bar in the navigation, on every page.
    const usage = page.getByRole('navigation', { name: 'Main' }).getByText('0 bytes of 977 KiB used');
    await usage.waitFor();
    await expect(page.getByRole('progressbar', { name: 'Storage used' }).getAttribute('max')).resolves.toBe('1000000');
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' || request.method() === 'PATCH') sent.push(`${request.method()} ${request.url()}`);
    });

    // Timed in the page, from the picker's change event to the refusal drawn (the machine's other
    // work and Playwright's own round trips left out). A string: compiled without the DOM's types.
    await page.evaluate(`(() => {
      window.refusedMs = new Promise((resolve) => {
        document.addEventListener('change', () => {
          const started = performance.now();
          const seen = new MutationObserver(() => {
            if ((document.querySelector('.files-uploads')?.textContent ?? '').includes('Not enough room')) {
              seen.disconnect();
              resolve(performance.now() - started);
            }
          });
          seen.observe(document.body, { subtree: true, childList: true, characterData: true });
        }, { capture: true, once: true });
      });
    })()`);
    await page.locator('#files-pick-files').setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(2 * 1024 * 1024, 9) });
    const uploads = page.getByRole('region', { name: 'Uploads' });
    const row = uploads.getByRole('listitem').filter({ hasText: 'big.bin' });
    const refusal = row.getByText('Failed: Not enough room: this file needs 2 MiB, and 977 KiB is left of the 977 KiB quota.');
    await refusal.waitFor();
    expect(await page.evaluate('window.refusedMs')).toBeLessThan(1000);
    await uploads.getByText('0 uploads finished, 1 failed.').waitFor();
    // getComputedStyle through globalThis: this file is compiled without the DOM's types.
    expect(await refusal.evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color)).toBe(ERROR_COLOUR);
    await expect(uploads.getByRole('progressbar', { name: 'Upload of big.bin' }).getAttribute('value')).resolves.toBe('0');
    await expect(uploads.getByRole('progressbar', { name: 'All uploads' }).getAttribute('value')).resolves.toBe('0');
    // No byte left the page: no upload request to the store, no tus creation at the bridge.
    expect(sent.filter((line) => line.includes('/upload/') || line.includes('/home/') || line.includes('/tus/'))).toEqual([]);
    expect(await named(kim, 'big.bin')).toBeUndefined();
    await checkLayout(page, 'uploads-quota-1920');

    // An administrator raises the quota: Retry sends the file.
    expect((await apiCall(f.client, f.admin, 'PUT', `/api/admin/users/${kim.uuid}`, { disk_quota: 10_000_000 })).status).toBe(200);
    await row.getByRole('button', { name: 'Retry upload of big.bin' }).click();
    await uploads.getByText('1 upload finished.').waitFor();
    await expect(row.getByText('Done (resumable)').isVisible()).resolves.toBe(true);
    expect(await named(kim, 'big.bin')).toMatchObject({ size: 2 * 1024 * 1024 });
    await page.getByRole('navigation', { name: 'Main' }).getByText('2 MiB of 9.5 MiB used').waitFor();
    expect(watched.problems.filter((line) => !line.includes('507'))).toEqual([]);
  });

  it('Cancel stops an upload under way and leaves nothing; Retry sends it again', async () => {
    const ada = await f.newUser({ fullname: 'Ada Cancel' });
    const watched = await signedIn(ada, { width: 360, height: 780 });
    const { page } = watched;
    const unthrottle = await throttleUploads(watched, 256 * 1024);
    const bytes = Buffer.alloc(8 * 1024 * 1024, 4);
    // From the disk (a path, not bytes through the DevTools protocol, which the throttle would slow too).
    writeFileSync(path.join(tmp.dir, 'slow.bin'), bytes);
    await page.locator('#files-pick-files').setInputFiles(path.join(tmp.dir, 'slow.bin'));
    const uploads = page.getByRole('region', { name: 'Uploads' });
    const row = uploads.getByRole('listitem').filter({ hasText: 'slow.bin' });
    const bar = uploads.getByRole('progressbar', { name: 'Upload of slow.bin' });
    await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 20_000 }).toBeGreaterThan(0);
    await checkLayout(page, 'uploads-under-way-360');
    await row.getByRole('button', { name: 'Cancel upload of slow.bin' }).click();
    await row.getByText('Cancelled').waitFor();
    await uploads.getByText('0 uploads finished, 0 failed, 1 skipped or cancelled.').waitFor();
    await expect(bar.getAttribute('value')).resolves.toBe('0');
    await checkLayout(page, 'uploads-cancelled-360');
    // Nothing arrives after the cancel: the file is not in the drive.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await named(ada, 'slow.bin')).toBeUndefined();

    await unthrottle();
    await row.getByRole('button', { name: 'Retry upload of slow.bin' }).click();
    await uploads.getByText('1 upload finished.').waitFor();
    expect(await named(ada, 'slow.bin')).toMatchObject({ size: bytes.length });
    expect(watched.problems).toEqual([]);
  }, 60_000);

  it('asks about a name already there: replace makes a new revision, keep both a new name, skip nothing; "apply to all" asks once for a batch', async () => {
    const bea = await f.newUser({ fullname: 'Bea Conflict' });
    await uploadFile(f.client, bea.session, 'home', 'report.txt', 'old\n');
    await uploadFile(f.client, bea.session, 'home', 'notes.txt', 'notes\n');
    const watched = await signedIn(bea, { width: 360, height: 780 });
    const { page } = watched;
    const uploads = page.getByRole('region', { name: 'Uploads' });
    const pick = (files: Array<[string, string]>) => page.locator('#files-pick-files').setInputFiles(files.map(([name, text]) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(text) })));
    const question = page.getByRole('dialog', { name: 'A file of this name is here' });

    // Replace: a new revision of the same file.
    const before = (await named(bea, 'report.txt')) as Listed;
    await pick([['report.txt', 'the new report\n']]);
    await question.getByText('report.txt is already in this folder.').waitFor();
    await checkLayout(page, 'uploads-conflict-360');
    await question.getByRole('button', { name: /^Replace it/ }).click();
    await uploads.getByText('1 upload finished.').waitFor();
    const replaced = (await named(bea, 'report.txt')) as Listed;
    expect(replaced).toMatchObject({ uuid: before.uuid, size: 'the new report\n'.length });
    expect(dataOf<unknown[]>(await apiCall(f.client, bea.session, 'GET', `/api/nodes/${before.uuid}/revisions`))).toHaveLength(2);

    // Keep both: `report (1).txt`, the first one untouched.
    await pick([['report.txt', 'a second report\n']]);
    await question.getByRole('button', { name: 'Keep both (upload this one as report (1).txt)' }).click();
    await uploads.getByText('1 upload finished.').waitFor();
    expect(await named(bea, 'report (1).txt')).toMatchObject({ size: 'a second report\n'.length });
    expect(await named(bea, 'report.txt')).toMatchObject({ size: 'the new report\n'.length });

    // Skip: nothing sent.
    await pick([['notes.txt', 'other notes, longer\n']]);
    await question.getByRole('button', { name: 'Skip this file' }).click();
    await uploads.getByText('0 uploads finished, 0 failed, 1 skipped or cancelled.').waitFor();
    await uploads.getByRole('listitem').filter({ hasText: 'notes.txt' }).getByText('Skipped (a file of that name is here)').waitFor();
    expect(await named(bea, 'notes.txt')).toMatchObject({ size: 'notes\n'.length });

    // Apply to all: two names taken, one question.
    await page.getByRole('button', { name: 'Clear finished uploads' }).click();
    await pick([
      ['report.txt', 'third\n'],
      ['notes.txt', 'more notes\n'],
    ]);
    await question.waitFor();
    await question.getByLabel('Do the same for the other files of this upload with the same question').check();
    await question.getByRole('button', { name: /^Keep both/ }).click();
    // No second question: notes.txt took the same answer.
    await uploads.getByText('All 2 uploads finished.').waitFor();
    await expect(question.count()).resolves.toBe(0);
    expect((await listing(bea)).map((e) => e.name).sort()).toEqual(['notes (1).txt', 'notes.txt', 'report (1).txt', 'report (2).txt', 'report.txt']);
    expect(watched.problems).toEqual([]);
  }, 60_000);

  it('shows a batch as one line of counts with its files folded, and each file when unfolded', async () => {
    const cy = await f.newUser({ fullname: 'Cy Batch', quotaBytes: 100_000 });
    const folder = path.join(tmp.dir, 'batch');
    mkdirSync(folder, { recursive: true });
    for (let i = 0; i < 25; i += 1) writeFileSync(path.join(folder, `part ${String(i).padStart(2, '0')}.txt`), Buffer.alloc(4096, 97 + (i % 26)));
    for (const width of [1920, 360]) {
      const watched = await signedIn(cy, { width, height: width === 360 ? 780 : 1080 });
      const { page } = watched;
      if (width === 360) {
        // Room for none now: every file refused, counted on the one line.
        await page.locator('#files-pick-folder').setInputFiles(folder);
        const uploads = page.getByRole('region', { name: 'Uploads' });
        await uploads.getByText('0 uploads finished, 25 failed.').waitFor();
        await uploads.getByText('Overall: 0 of 25 files – 25 failed').waitFor();
        await checkLayout(page, 'uploads-batch-refused-360');
        continue;
      }
      const posted: Array<{ url: string; status: number }> = [];
      page.on('response', (response) => {
        if (response.request().method() === 'POST') posted.push({ url: response.url(), status: response.status() });
      });
      await page.locator('#files-pick-folder').setInputFiles(folder);
      const uploads = page.getByRole('region', { name: 'Uploads' });
      // 24 x 4 KiB fit in 100,000 bytes; the 25th does not.
      await uploads.getByText('24 uploads finished, 1 failed.').waitFor();
      await uploads.getByText('Overall: 24 of 25 files – 24 done, 1 failed').waitFor();
      await expect(uploads.getByRole('listitem').count()).resolves.toBe(0);
      await checkLayout(page, 'uploads-batch-folded-1920');
      await uploads.getByText('Each file (25)').click();
      // The list is drawn when the <details> says it opened (its toggle event comes after the click).
      await expect.poll(() => uploads.getByRole('listitem').count()).toBe(25);
      await expect(uploads.getByRole('listitem').filter({ hasText: /Failed: Not enough room: this file needs 4 KiB, and 1\.7 KiB is left of the 98 KiB quota\./ }).count()).resolves.toBe(1);
      await checkLayout(page, 'uploads-batch-unfolded-1920');
      const batch = (await named(cy, 'batch')) as Listed;
      expect(await listing(cy, batch.uuid)).toHaveLength(24);
      // Small files of one drop go by the bridge's bulk upload (api/uploader.ts bulkUploader), not one request each.
      const bulk = posted.filter((p) => p.url.endsWith('/remote.php/dav/bulk'));
      expect(bulk.length).toBeGreaterThanOrEqual(1);
      expect(bulk.length).toBeLessThanOrEqual(3);
      expect(bulk.every((p) => p.status === 200)).toBe(true);
      expect(posted.filter((p) => p.url.includes('/tus/') || /\/home\/batch\/?$/.test(p.url))).toEqual([]);
      const stored = await listing(cy, batch.uuid);
      expect(stored.every((e) => e.size === 4096)).toBe(true);
    }
  }, 60_000);
});

/** A driveway process (store + bridge, the built app) on fixed ports, so that it can be stopped and started again at the same addresses. */
async function startProcess(dataDir: string, config: string, ports: { store: number; dav: number }): Promise<DrivewayProcess> {
  return spawnDriveway({ dataDir, args: ['--config', config], env: { DRIVEWAY_STORE_PORT: String(ports.store), DRIVEWAY_DAV_PORT: String(ports.dav), DRIVEWAY_LOG_LEVEL: 'warn' } });
}

chromiumBinary.describe('an upload through a server stopped for 30 s', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let instance: DrivewayProcess | undefined;

  beforeAll(() => {
    tmp = makeTmpDir('driveway-web-outage-');
  });
  afterAll(() => {
    instance?.kill();
    tmp?.remove();
  });

  it('keeps the uploads list in view, waits for the server, and finishes by itself with the right SHA-1', async () => {
    const dataDir = path.join(tmp.dir, 'data');
    const config = path.join(tmp.dir, 'driveway.yaml');
    writeFileSync(config, `store:\n  webDir: ${JSON.stringify(inject('webDir'))}\n`);
    const ports = { store: await freeLoopbackPort(), dav: await freeLoopbackPort() };
    instance = await startProcess(dataDir, config, ports);
    const base = instance.storeUrl.replace(/\/+$/, '');
    const json = async (method: string, url: string, token: string | undefined, body?: unknown) => {
      const res = await fetch(`${base}${url}`, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
      return (await res.json()) as { status: string; data?: unknown; token?: string; fileaccesskey?: string };
    };
    const admin = (await json('POST', '/auth', undefined, { username: 'admin', password: ADMIN_PASSWORD })).token as string;
    const email = 'dora@example.test';
    const password = 'Outage-Passw0rd';
    expect((await json('POST', '/api/admin/users', admin, { fullname: 'Dora Outage', email, password, disk_quota: 0, is_active: true, is_admin: false })).status).toBe('success');

    const bytes = Buffer.alloc(40 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE((i * 2654435761) >>> 0, i);
    const sha1 = createHash('sha1').update(bytes).digest('hex');
    const file = path.join(tmp.dir, 'survivor.bin');
    writeFileSync(file, bytes);

    const browser = await launchChromium(chromiumBinary.path);
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(err.message));
      await page.goto(`${base}/files`);
      await signInThroughForm(page, email, password);
      await page.getByText('This folder is empty.').waitFor();
      // Slow enough to stop the server in the middle: about 8 s for the 40 MiB.
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 5 * 1024 * 1024 });
      await page.locator('#files-pick-files').setInputFiles(file);
      const uploads = page.getByRole('region', { name: 'Uploads' });
      const bar = uploads.getByRole('progressbar', { name: 'Upload of survivor.bin' });
      // Past the first 16 MiB chunk (the creation's), so the bridge holds an offset to resume from.
      await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 30_000, interval: 100 }).toBeGreaterThan(20 * 1024 * 1024);

      // Stopped (SIGTERM, by its PID); killed if it has not ended in 5 s (a stop that waits for the upload is no outage).
      const stopping = instance;
      stopping.child.kill('SIGTERM');
      const timer = setTimeout(() => stopping.kill(), 5000);
      await stopping.exited;
      clearTimeout(timer);
      instance = undefined;
      await uploads.getByText('Waiting for the server: this goes on by itself when it answers.').waitFor({ timeout: 20_000 });
      await uploads.getByText('The server cannot be reached. The uploads wait for it and go on by themselves when it answers.').waitFor();
      await checkLayout(page, 'uploads-waiting-1280');
      await page.setViewportSize({ width: 360, height: 780 });
      await checkLayout(page, 'uploads-waiting-360');
      await page.setViewportSize({ width: 1920, height: 1080 });
      await checkLayout(page, 'uploads-waiting-1920');
      await new Promise((resolve) => setTimeout(resolve, 30_000));
      // Still in view after 30 s away: the list, the file waiting, no page of errors in its place.
      await expect(uploads.isVisible()).resolves.toBe(true);
      await expect(uploads.getByText('Waiting for the server: this goes on by itself when it answers.').isVisible()).resolves.toBe(true);

      instance = await startProcess(dataDir, config, ports);
      await uploads.getByText('1 upload finished.').waitFor({ timeout: 60_000 });
      await expect(uploads.getByText('Done (resumable)').isVisible()).resolves.toBe(true);

      const dora = await json('POST', '/auth', undefined, { username: email, password });
      const listed = (await json('GET', '/api/nodes/home/dirlist', dora.token)).data as Listed[];
      const stored = listed.find((e) => e.name === 'survivor.bin') as Listed;
      expect(stored).toMatchObject({ size: bytes.length });
      expect((await json('GET', `/api/nodes/${stored.uuid}/revisions`, dora.token)).data).toHaveLength(1);
      const download = await fetch(`${base}/resources/auth/download/${dora.fileaccesskey}/${stored.uuid}/999999999999999/survivor.bin`);
      expect(download.status).toBe(200);
      expect(createHash('sha1').update(Buffer.from(await download.arrayBuffer())).digest('hex')).toBe(sha1);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 240_000);
});
