/**
 * Sharing (issue 24, item 5) in Debian's Chromium, as people use it: Ada makes a link with a
 * password on /share/<uuid> (a past expiry refused next to its field first) and a browser with
 * no session opens it, gives the password and downloads the right bytes; Bob's link request is
 * approved by his approver in another browser and Bob sees it approved, and he withdraws
 * another; Carol accepts one incoming copy (sent from Ada's page) and declines another; another
 * user's node on /share/ is "not found" with nothing of it shown. axe-core on every page, no
 * sideways overflow at 360 and 1,920 px, screenshots kept.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { uploadFile } from '../helpers/seed.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { apiCall, dataOf } from '../helpers/user-api.js';
import { clipboardText, expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webFixture, type WatchedPage, type WebFixture } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('the sharing pages', () => {
  let f: WebFixture;
  let ada: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let vera: TestUser;

  beforeAll(async () => {
    f = await webFixture(chromiumBinary.path);
    ada = await f.newUser({ fullname: 'Ada Lovelace' });
    bob = await f.newUser({ fullname: 'Bob Babbage' });
    carol = await f.newUser({ fullname: 'Carol Shaw' });
    vera = await f.newUser({ fullname: 'Vera Approver' });
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  async function signedIn(user: TestUser, path: string, options: { width?: number; clipboard?: boolean } = {}): Promise<WatchedPage> {
    const watched = await f.openPage(options);
    await watched.page.goto(`${f.base}${path}`);
    await signInThroughForm(watched.page, user.email, user.password);
    return watched;
  }

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  async function looksRight(page: Page, name: string): Promise<void> {
    await expectAccessible(page);
    for (const width of [360, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await sidewaysOverflow(page)).toEqual([]);
      await keepScreenshot(page, `${name}-${width}`);
    }
  }

  it('Ada makes a link with a password, and a browser without a session downloads the file through it', async () => {
    const content = Buffer.from('quarterly figures: 42\n'.repeat(100));
    const file = String(await uploadFile(f.client, ada.session, 'home', 'q1.txt', content));
    const watched = await signedIn(ada, `/share/${file}`, { clipboard: true });
    const { page } = watched;
    await page.getByRole('heading', { name: 'Share q1.txt' }).waitFor();
    const links = page.getByRole('region', { name: 'Links' });
    await links.getByText('This has no links.').waitFor();

    await links.getByLabel('Password (optional)').fill('open sesame');
    await links.getByLabel('Expires after (optional)').fill('2001-01-01');
    await links.getByRole('button', { name: 'Create link' }).click();
    await page.locator('#link-expires-error').getByText('Must be in the future.').waitFor();
    expect(await links.getByLabel('Password (optional)').inputValue()).toBe('open sesame');
    expect(dataOf<unknown[]>(await apiCall(f.client, ada.session, 'GET', `/api/nodes/${file}/shares`))).toEqual([]);

    await links.getByLabel('Expires after (optional)').fill('');
    await links.getByRole('button', { name: 'Create link' }).click();
    await links.getByText('The link is made. Its address is shown only now:').waitFor();
    await links.getByRole('button', { name: 'Copy the link' }).click();
    const url = await clipboardText(page);
    expect(url).toMatch(new RegExp(`^${f.base}/public/[A-Za-z0-9_-]+$`));
    await links.getByText('with a password; never expires', { exact: false }).waitFor();
    await looksRight(page, 'share');
    expectClean(watched);

    // Without the password the link refuses; with it (the browser's password prompt) the file downloads.
    const stranger = await f.browser.newContext();
    expect((await stranger.request.get(url)).status()).toBe(401);
    await stranger.close();
    const anonymous = await f.browser.newContext({ httpCredentials: { username: 'anyone', password: 'open sesame' } });
    const anonPage = await anonymous.newPage();
    const [download] = await Promise.all([anonPage.waitForEvent('download'), anonPage.goto(url).catch(() => undefined)]);
    expect(download.suggestedFilename()).toBe('q1.txt');
    expect(readFileSync(await download.path())).toEqual(content);
    await anonymous.close();

    // Deleting the link stops it.
    await links.getByRole('button', { name: 'Delete this download link' }).click();
    await links.getByText('This has no links.').waitFor();
    const gone = await f.browser.newContext({ httpCredentials: { username: 'anyone', password: 'open sesame' } });
    expect((await gone.request.get(url)).status()).toBe(404);
    await gone.close();
  });

  it('Bob’s link request is approved by his approver in another browser, and he withdraws another', async () => {
    dataOf(await apiCall(f.client, f.admin, 'POST', `/api/admin/users/${bob.uuid}/approvers`, { approver_id: vera.uuid, share_type: 'public' }));
    const report = String(await uploadFile(f.client, bob.session, 'home', 'report.txt', 'report\n'));
    const draft = String(await uploadFile(f.client, bob.session, 'home', 'draft.txt', 'draft\n'));

    const bobs = await signedIn(bob, `/share/${report}`);
    const bobPage = bobs.page;
    const links = bobPage.getByRole('region', { name: 'Links' });
    await links.getByLabel('Comment for approvers (optional)').fill('for the website');
    await links.getByRole('button', { name: 'Create link' }).click();
    await links.getByText('This share needs approval: a request was made.').waitFor();
    await bobPage.goto(`${f.base}/share/${draft}`);
    await bobPage.getByRole('heading', { name: 'Share draft.txt' }).waitFor();
    await bobPage.getByRole('region', { name: 'Links' }).getByRole('button', { name: 'Create link' }).click();
    await bobPage.getByRole('link', { name: 'Requests page' }).click();
    await bobPage.getByRole('heading', { name: 'Share requests' }).waitFor();
    const yours = bobPage.getByRole('region', { name: 'Your requests' });
    await yours.getByText('Download link of report.txt').waitFor();
    expect(await yours.getByText('Status: pending').count()).toBe(2);

    const veras = await signedIn(vera, '/requests');
    const veraPage = veras.page;
    const toDecide = veraPage.getByRole('region', { name: 'Requests for you to decide' });
    await toDecide.getByText('Bob Babbage asks for a download link of report.txt (in Bob Babbage’s workspace).').waitFor();
    await toDecide.getByText('Their comment: for the website').waitFor();
    await looksRight(veraPage, 'requests-approver');
    await toDecide.getByLabel('Your comment on the request for report.txt (optional)').fill('fine');
    await toDecide.getByRole('button', { name: 'Approve the request for report.txt' }).click();
    await toDecide.getByText('asks for a download link of report.txt', { exact: false }).waitFor({ state: 'detached' });
    await toDecide.getByText('Bob Babbage asks for a download link of draft.txt', { exact: false }).waitFor();
    expectClean(veras);

    await bobPage.reload();
    await yours.getByText('Status: approved').waitFor();
    await yours.getByText('Approver’s comment: fine').waitFor();
    const shares = dataOf<Array<{ node_name: string; type: string }>>(await apiCall(f.client, bob.session, 'GET', '/api/shares'));
    expect(shares).toEqual([expect.objectContaining({ node_name: 'report.txt', type: 'public' })]);

    await yours.getByRole('button', { name: 'Withdraw the request for draft.txt' }).click();
    await bobPage.getByRole('status').filter({ hasText: 'The request is withdrawn.' }).waitFor();
    expect(await yours.getByText('draft.txt', { exact: false }).count()).toBe(0);
    expect(dataOf<unknown[]>(await apiCall(f.client, vera.session, 'GET', '/api/pending_shares'))).toEqual([]);
    await looksRight(bobPage, 'requests-requester');
    expectClean(bobs);
  });

  it('Carol accepts a copy Ada sent from her page and declines another; Ada’s node is not found on Carol’s /share/', async () => {
    const plan = String(await uploadFile(f.client, ada.session, 'home', 'plan.txt', 'the plan\n'));
    const memo = String(await uploadFile(f.client, ada.session, 'home', 'memo.txt', 'memo\n'));
    expect((await apiCall(f.client, ada.session, 'POST', `/api/nodes/${memo}`, { share_copy_with: [carol.uuid] })).status).toBe(204);

    const adas = await signedIn(ada, `/share/${plan}`);
    const copy = adas.page.getByRole('region', { name: 'Send a copy' });
    await copy.getByRole('button', { name: 'Send a copy' }).click();
    await copy.getByText('Choose at least one person or group.').waitFor();
    await copy.getByLabel('Find people and groups by name or email').fill('carol');
    await copy.getByRole('button', { name: `Add Carol Shaw (${carol.email})` }).click();
    await copy.getByRole('button', { name: 'Send a copy' }).click();
    await copy.getByText('The copy is offered', { exact: false }).waitFor();

    // A private share with Carol: she sees it in Shared with me until Ada revokes it on /shares.
    const privately = adas.page.getByRole('region', { name: 'Private shares' });
    await privately.getByLabel('Find people and groups by name or email').fill(carol.email);
    await privately.getByRole('button', { name: `Add Carol Shaw (${carol.email})` }).click();
    await privately.getByRole('button', { name: 'Share privately' }).click();
    await privately.getByText('Shared privately.', { exact: true }).waitFor();
    await privately.getByText('with Carol Shaw; read only', { exact: false }).waitFor();
    expectClean(adas);

    const carols = await signedIn(carol, '/shares');
    const page = carols.page;
    await page.getByRole('heading', { name: 'Shares', exact: true }).waitFor();
    const incoming = page.getByRole('region', { name: 'Incoming shares' });
    await incoming.getByText('plan.txt').waitFor();
    await incoming.getByText('memo.txt').waitFor();
    await page.getByRole('region', { name: 'Shared with me' }).getByRole('link', { name: 'plan.txt' }).waitFor();
    await looksRight(page, 'shares');
    await incoming.getByRole('button', { name: 'Accept plan.txt' }).click();
    await incoming.getByText('plan.txt is accepted: it is in the Incoming folder.').waitFor();
    await incoming.getByRole('button', { name: 'Decline memo.txt' }).click();
    await incoming.getByText('memo.txt is declined.').waitFor();
    await incoming.getByText('No incoming shares wait for you.').waitFor();
    const inbox = dataOf<Array<{ name: string }>>(await apiCall(f.client, carol.session, 'GET', '/api/nodes/incoming/dirlist'));
    expect(inbox.map((e) => e.name)).toEqual(['plan.txt']);
    expect(dataOf<unknown[]>(await apiCall(f.client, carol.session, 'GET', '/api/user/pending_incoming'))).toEqual([]);

    await page.goto(`${f.base}/share/${memo}`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await page.getByText('There is no file or folder at this address, or you may not see it.').waitFor();
    expect(await page.locator('main').textContent()).not.toMatch(/memo|Ada/);
    await expectAccessible(page);
    expectClean(carols);

    await adas.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Shares' }).click();
    const mine = adas.page.getByRole('region', { name: 'Your links and shares' });
    await mine.getByRole('button', { name: 'Revoke the private share of plan.txt' }).click();
    await adas.page.getByText('Revoked.').waitFor();
    expect(dataOf<unknown[]>(await apiCall(f.client, carol.session, 'GET', '/api/nodes/shared_with_you/dirlist'))).toEqual([]);
    expectClean(adas);
  });
});
