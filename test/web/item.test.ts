/**
 * Details, Trash and Favorites (issue 24, item 4) in Debian's Chromium, as a person uses them:
 * Ada reads a file's size and checksums, stars it and finds it in Favorites, restores an older
 * revision (the store then serves the old bytes), previews a text file in a sandboxed frame
 * where a stored `<script>` does not run and an image from its 1,024 px thumbnail, restores a
 * deleted file from the trash to its folder and deletes others for good; another user's UUID
 * shows a not-found message and nothing of the file. axe-core on every page, no sideways overflow at 360 and 1,920 px.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ALL_NODE_PERMISSIONS, groupAdmin } from '../helpers/groups.js';
import { pngBytes } from '../helpers/images.js';
import { requireBinary } from '../helpers/require-binary.js';
import { checksumsOf, createFolder, names, uploadFile } from '../helpers/seed.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('the details, trash and favorites pages', () => {
  const f = webSuiteFixture(chromiumBinary.path);

  /** Opens `where` as a person with a bookmark does: sign-in first, then back there. */
  async function signedInAt(user: TestUser, where: string, options: { width?: number } = {}): Promise<WatchedPage> {
    const watched = await f.openPage(options);
    await watched.page.goto(`${f.base}${where}`);
    await signInThroughForm(watched.page, user.email, user.password);
    await watched.page.waitForURL(`${f.base}${where}`);
    return watched;
  }

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  async function latestBytes(user: TestUser, uuid: string, name: string): Promise<string> {
    const answer = await fetch(`${f.base}/resources/auth/download/${user.session.fileAccessKey}/${uuid}/999999999999999/${name}`);
    expect(answer.status).toBe(200);
    return answer.text();
  }

  /** Keeps every message posted to the page in `window.heard` (a frame's script would post one). */
  async function listen(page: Page): Promise<void> {
    // A string: this file is compiled without the DOM's types.
    await page.evaluate("window.heard = []; window.addEventListener('message', (event) => window.heard.push(event.data))");
  }

  async function fitsAt(page: Page, width: number, name: string): Promise<void> {
    await page.setViewportSize({ width, height: 900 });
    expect(await sidewaysOverflow(page)).toEqual([]);
    await keepScreenshot(page, `${name}-${width}`);
  }

  it('shows a file’s size and checksums, stars it into Favorites, and restores its first revision', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const reports = await createFolder(f.client, ada.session, 'home', 'Reports');
    const first = 'first draft\n';
    const file = await uploadFile(f.client, ada.session, reports, 'q1.txt', first);
    const watched = await signedInAt(ada, `/item/${file}`);
    const { page } = watched;
    await page.getByRole('heading', { level: 1, name: 'q1.txt' }).waitFor();
    const where = page.getByRole('navigation', { name: 'Where it is' });
    await expect(where.getByRole('link', { name: 'Home' }).getAttribute('href')).resolves.toBe('/files');
    await expect(where.getByRole('link', { name: 'Reports' }).getAttribute('href')).resolves.toBe(`/files/${reports}`);
    const facts = page.getByRole('region', { name: 'About it' });
    await facts.getByText('12 bytes').waitFor();
    await facts.getByText(checksumsOf(first).sha1).waitFor();
    await facts.getByText(checksumsOf(first).md5).waitFor();
    await facts.getByText('Ada Lovelace').waitFor();
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Add to favorites' }).click();
    await page.getByRole('status').filter({ hasText: 'q1.txt is in your favorites.' }).waitFor();
    await expect(page.getByRole('button', { name: 'Remove from favorites' }).getAttribute('aria-pressed')).resolves.toBe('true');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Favorites' }).click();
    await page.getByRole('heading', { level: 1, name: 'Favorites' }).waitFor();
    await page.getByRole('button', { name: 'Unstar q1.txt' }).waitFor();
    await expectAccessible(page);
    await fitsAt(page, 360, 'favorites');
    await page.getByRole('link', { name: 'q1.txt' }).click();
    await page.getByRole('heading', { level: 1, name: 'q1.txt' }).waitFor();

    // A second revision arrives from elsewhere (a drive client, here the API).
    await uploadFile(f.client, ada.session, reports, 'q1.txt', 'second draft, longer\n');
    await page.reload();
    const revisions = page.getByRole('region', { name: 'Revisions' });
    await revisions.getByText('Revision 2', { exact: true }).waitFor();
    await revisions.getByRole('button', { name: 'Restore revision 1' }).click();
    await revisions.getByText('Restore revision 1? Its content becomes revision 3; nothing is lost.').waitFor();
    expect(await latestBytes(ada, file, 'q1.txt')).toBe('second draft, longer\n');
    await revisions.getByRole('button', { name: 'Yes, restore revision 1' }).click();
    await page.getByRole('status').filter({ hasText: 'Revision 1 is restored: it is now revision 3.' }).waitFor();
    await revisions.getByText('Revision 3', { exact: true }).waitFor();
    expect(await latestBytes(ada, file, 'q1.txt')).toBe(first);
    expect(dataOf<Array<{ revision: number }>>(await apiCall(f.client, ada.session, 'GET', `/api/nodes/${file}/revisions`)).map((r) => r.revision)).toEqual([1, 2, 3]);
    expect(await revisions.getByRole('link', { name: 'Download revision 2' }).getAttribute('href')).toMatch(new RegExp(`^/resources/auth/download/[A-Za-z0-9_-]+/${file}/2/q1\\.txt$`));
    await expectAccessible(page);
    await fitsAt(page, 360, 'item-file');
    await fitsAt(page, 1920, 'item-file');

    // Unstarred from Favorites, it is gone from there and from the store's list.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Favorites' }).click();
    await page.getByRole('button', { name: 'Unstar q1.txt' }).click();
    await page.getByText('You have no favorites yet').waitFor();
    expect(dataOf<unknown[]>(await apiCall(f.client, ada.session, 'GET', '/api/nodes/favorites/dirlist'))).toEqual([]);
    await fitsAt(page, 1920, 'favorites');

    // A folder's details: no revisions nor preview, a way into it.
    await page.goto(`${f.base}/item/${reports}`);
    await page.getByRole('heading', { level: 1, name: 'Reports' }).waitFor();
    await page.getByRole('region', { name: 'About it' }).getByText('Folder', { exact: true }).waitFor();
    await expect(page.getByRole('link', { name: 'Open the folder' }).getAttribute('href')).resolves.toBe(`/files/${reports}`);
    await expect(page.getByRole('region', { name: 'Revisions' }).count()).resolves.toBe(0);
    await expectAccessible(page);
    expectClean(watched);
  });

  it('previews text and images in a sandboxed frame where a stored script does not run', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    // Each would set the page's title and post a message to the page if it ran.
    const script = "<script>document.title='ran';parent.postMessage('ran','*');top.document.title='ran'</script>";
    const text = await uploadFile(f.client, ada.session, 'home', 'notes.txt', `${script}\nplain words\n`);
    const image = await uploadFile(f.client, ada.session, 'home', 'pixel.png', pngBytes(40, 30));
    const html = await uploadFile(f.client, ada.session, 'home', 'page.html', `<!doctype html><title>x</title>${script}<p>hello</p>`);
    const watched = await signedInAt(ada, `/item/${text}`);
    const { page } = watched;
    await listen(page);
    const heard = () => page.evaluate<unknown[]>('window.heard');

    const frame = page.getByTitle('Preview of notes.txt');
    await frame.waitFor();
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await frame.getAttribute('src')).toMatch(new RegExp(`^/resources/auth/view/[A-Za-z0-9_-]+/${text}/1/notes\\.txt$`));
    // Shown as text: the script's source is visible, so it was not parsed as HTML.
    await page.frameLocator('iframe[title="Preview of notes.txt"]').getByText("parent.postMessage('ran','*')").waitFor();
    expect(await page.title()).toBe('notes.txt – driveway');
    expect(await heard()).toEqual([]);
    await expectAccessible(page);
    await fitsAt(page, 360, 'item-preview-text');

    // An image is shown from the store's thumbnail (never enlarged: 40 px stays 40).
    await page.goto(`${f.base}/item/${image}`);
    const shown = page.getByRole('img', { name: 'Preview of pixel.png' });
    await shown.waitFor();
    expect(await shown.getAttribute('src')).toMatch(new RegExp(`^/resources/auth/thumbnail/[A-Za-z0-9_-]+/${image}/1/1024$`));
    await expect.poll(() => shown.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(40);
    await expectAccessible(page);
    await fitsAt(page, 1920, 'item-preview-image');

    // HTML gets no frame: the store sends it as an attachment, and the page says so.
    await page.goto(`${f.base}/item/${html}`);
    await page.getByText('No preview for this kind of file').waitFor();
    await expect(page.locator('iframe').count()).resolves.toBe(0);
    // Framed anyway, as the page frames (same sandbox, under the app's policy), it runs nothing.
    await listen(page);
    // A string: this file is compiled without the DOM's types.
    await page.evaluate(`new Promise((settled) => {
      const framed = document.createElement('iframe');
      framed.setAttribute('sandbox', '');
      framed.title = 'page.html framed';
      framed.src = '/resources/auth/view/${ada.session.fileAccessKey}/${html}/1/page.html';
      framed.addEventListener('load', settled);
      document.body.append(framed);
      setTimeout(settled, 3000);
    })`);
    expect(await page.title()).toBe('page.html – driveway');
    expect(await heard()).toEqual([]);
    // Chromium reports the blocked download of the attachment in the sandboxed frame; nothing else.
    expect(watched.problems.filter((p) => !/sandbox|download/i.test(p))).toEqual([]);
    expect(watched.foreign).toEqual([]);
  });

  it('shows a large photo from its 1,024 px thumbnail scaled to the column (not at its natural size), and falls back to the frame when the store makes none', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    // 3,000 x 2,000 (a PNG of one colour: small to send, large to show).
    const photo = await uploadFile(f.client, ada.session, 'home', 'big.png', pngBytes(3000, 2000, [20, 90, 160]));
    // Named as an image, bytes of none: the store makes no thumbnail, the view frame takes over.
    const broken = await uploadFile(f.client, ada.session, 'home', 'broken.png', 'these bytes are no picture');
    const watched = await signedInAt(ada, `/item/${photo}`, { width: 360 });
    const { page } = watched;
    const shown = page.getByRole('img', { name: 'Preview of big.png' });
    await shown.waitFor();
    await expect.poll(() => shown.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(1024);
    const size = () => shown.evaluate((img) => [(img as unknown as { clientWidth: number }).clientWidth, (img as unknown as { naturalHeight: number }).naturalHeight]);
    const [narrow, naturalHeight] = await size();
    expect(naturalHeight).toBe(683);
    expect(narrow).toBeLessThan(360);
    await expectAccessible(page);
    await fitsAt(page, 360, 'item-preview-thumbnail');
    await page.setViewportSize({ width: 1920, height: 900 });
    const [wide] = await size();
    expect(wide).toBeGreaterThan(narrow!);
    expect(wide).toBeLessThanOrEqual(1024);
    await expectAccessible(page);
    await fitsAt(page, 1920, 'item-preview-thumbnail');

    await page.goto(`${f.base}/item/${broken}`);
    await page.getByText(/No preview for this kind of file|Preview of broken\.png/).or(page.getByTitle('Preview of broken.png')).first().waitFor();
    await expect(page.getByRole('img', { name: 'Preview of broken.png' }).count()).resolves.toBe(0);
    await expectAccessible(page);
    // The thumbnail's 404 is the one problem the page met.
    expect(watched.problems.filter((p) => !/404|Not Found/i.test(p))).toEqual([]);
    expect(watched.foreign).toEqual([]);
  });

  it('restores a deleted file to its folder from the trash, and deletes others for good', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const projects = await createFolder(f.client, ada.session, 'home', 'Projects');
    const plan = await uploadFile(f.client, ada.session, projects, 'plan.txt', 'the plan\n');
    const old = await uploadFile(f.client, ada.session, 'home', 'old.txt', 'old\n');
    const scraps = [await uploadFile(f.client, ada.session, 'home', 'scrap-1.txt', 'a'), await uploadFile(f.client, ada.session, 'home', 'scrap-2.txt', 'b')];
    for (const id of [plan, old]) expect((await apiCall(f.client, ada.session, 'DELETE', `/api/nodes/${id}`)).status).toBe(204);

    const watched = await signedInAt(ada, '/favorites', { width: 360 });
    const { page } = watched;
    // At 360 px the navigation is behind the Menu button.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
    await page.getByRole('heading', { level: 1, name: 'Trash' }).waitFor();
    const mine = page.getByRole('region', { name: 'Your trash' });
    await mine.getByText('From Home/Projects').waitFor();
    await expect(mine.getByText(/deleted /).count()).resolves.toBe(2);
    await expectAccessible(page);
    await fitsAt(page, 360, 'trash');
    await fitsAt(page, 1920, 'trash');

    await mine.getByRole('button', { name: 'Restore plan.txt' }).click();
    await mine.getByRole('status').filter({ hasText: 'plan.txt is back in Home/Projects.' }).waitFor();
    expect(await names(f.client, ada.session, projects)).toEqual(['plan.txt']);
    await expect(mine.getByRole('link', { name: 'Open Home/Projects' }).getAttribute('href')).resolves.toBe(`/files/${projects}`);

    await mine.getByRole('button', { name: 'Delete for good: old.txt' }).click();
    await mine.getByText('Delete old.txt for good? It cannot be restored afterwards.').waitFor();
    expect(await names(f.client, ada.session, 'trash')).toEqual(['old.txt']);
    await mine.getByRole('button', { name: 'Yes, delete old.txt for good' }).click();
    await mine.getByRole('status').filter({ hasText: 'old.txt is deleted for good.' }).waitFor();
    await mine.getByText('The trash is empty.').waitFor();
    expect(await names(f.client, ada.session, 'trash')).toEqual([]);
    expect((await apiCall(f.client, ada.session, 'GET', `/api/nodes/${old}`)).status).toBe(404);

    // Emptying asks first, then deletes every entry for good.
    for (const id of scraps) expect((await apiCall(f.client, ada.session, 'DELETE', `/api/nodes/${id}`)).status).toBe(204);
    await page.reload();
    await mine.getByText('scrap-2.txt').waitFor();
    await mine.getByRole('button', { name: 'Empty trash (Your trash)' }).click();
    await mine.getByText('Delete all 2 items in this trash for good?').waitFor();
    await expectAccessible(page);
    await mine.getByRole('button', { name: 'Yes, empty the trash' }).click();
    await mine.getByRole('status').filter({ hasText: 'The trash is empty now.' }).waitFor();
    expect(await names(f.client, ada.session, 'trash')).toEqual([]);
    expectClean(watched);
  });

  it('shows a group drive’s trash to its members, with restore and delete only for those who may', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const cy = await f.newUser({ fullname: 'Cy Reader' });
    const groups = groupAdmin(f.client, f.admin);
    const engines = await groups.group('Engines');
    await groups.member(engines, ada.uuid, { node_permissions: ALL_NODE_PERMISSIONS });
    await groups.member(engines, cy.uuid, { node_permissions: ['read'] });
    const designs = await createFolder(f.client, ada.session, `home:${engines}`, 'Designs');
    const gear = await uploadFile(f.client, ada.session, designs, 'gear.txt', 'teeth: 12\n');
    expect((await apiCall(f.client, ada.session, 'DELETE', `/api/nodes/${gear}`)).status).toBe(204);

    const reader = await signedInAt(cy, '/trash');
    const theirs = reader.page.getByRole('region', { name: 'Trash of Engines' });
    await theirs.getByText('From Engines: Home/Designs').waitFor();
    await expect(theirs.getByRole('button').count()).resolves.toBe(0);
    await expectAccessible(reader.page);
    expectClean(reader);

    const watched = await signedInAt(ada, '/trash');
    const group = watched.page.getByRole('region', { name: 'Trash of Engines' });
    await group.getByRole('button', { name: 'Restore gear.txt' }).click();
    await group.getByRole('status').filter({ hasText: 'gear.txt is back in Engines: Home/Designs.' }).waitFor();
    expect(await names(f.client, ada.session, designs)).toEqual(['gear.txt']);
    await watched.page.getByRole('region', { name: 'Your trash' }).getByText('The trash is empty.').waitFor();
    expectClean(watched);
  });

  it('answers another user’s file with a not-found message and nothing of it', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const bob = await f.newUser({ fullname: 'Bob Babbage' });
    const secret = await uploadFile(f.client, bob.session, 'home', 'bob-secret.txt', 'for Bob only\n');
    const watched = await signedInAt(ada, `/item/${secret}`);
    const { page } = watched;
    await page.getByRole('alert').filter({ hasText: 'This file or folder does not exist, or you may not see it.' }).waitFor();
    await expect(page.getByText('bob-secret.txt').count()).resolves.toBe(0);
    await expect(page.getByText('Bob Babbage').count()).resolves.toBe(0);
    await expect(page.locator('iframe').count()).resolves.toBe(0);
    await page.getByRole('link', { name: 'Go to your files' }).waitFor();
    await expectAccessible(page);
    await fitsAt(page, 360, 'item-not-found');
    expectClean(watched);
  });
});
