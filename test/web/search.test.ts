/**
 * The filter box of the Files page searching every drive (issue 32 item 5) in Debian's Chromium:
 * the open folder's rows narrow as before and come first; below them the matches in all the
 * caller's drives and groups' drives (the store's search extension, the query SEARCH answers
 * from), each with where it lies and a link there; never another user's file or a trashed one.
 * axe-core at 360 and 1,920 px.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { expectAccessible, sidewaysOverflow, signInThroughForm, webFixture, type WebFixture } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('the Files filter box searches the whole drive', () => {
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

  it('lists this folder’s matches first, then the matches elsewhere in the drive with their folders, and none of another user’s or the trash’s', async () => {
    const here = await createFolder(f.client, ada.session, 'home', 'Here');
    const deep = await createFolder(f.client, ada.session, here, 'Deep');
    const projects = await createFolder(f.client, ada.session, 'home', 'Projects');
    await uploadFile(f.client, ada.session, here, 'Budget here.txt', 'a');
    await uploadFile(f.client, ada.session, here, 'other.txt', 'b');
    await uploadFile(f.client, ada.session, deep, 'budget deep.txt', 'c');
    await uploadFile(f.client, ada.session, projects, 'BUDGET 2027.ods', 'd');
    const gone = await uploadFile(f.client, ada.session, projects, 'budget gone.txt', 'e');
    await f.client.remove(ada.session, gone);
    await uploadFile(f.client, bob.session, 'home', 'budget of bob.txt', 'f');

    const watched = await f.openPage({ width: 1920, height: 1000 });
    const { page } = watched;
    await page.goto(`${f.base}/files/${here}`);
    await signInThroughForm(page, ada.email, ada.password);
    await page.getByRole('checkbox', { name: 'Select other.txt', exact: true }).waitFor();
    await page.getByRole('searchbox', { name: 'Filter this folder by name' }).fill('budget');
    await page.getByRole('status').filter({ hasText: '1 of 3 items match the filter' }).waitFor();
    expect(await page.getByRole('rowheader').allInnerTexts()).toEqual(['Budget here.txt']);
    const elsewhere = page.getByRole('region', { name: 'Matches in all your drives' });
    await elsewhere.getByRole('link', { name: 'budget deep.txt' }).waitFor();
    const items = await elsewhere.getByRole('listitem').allInnerTexts();
    expect(items).toEqual(['BUDGET 2027.ods in Home / Projects', 'budget deep.txt in Home / Here / Deep']);
    expect(await elsewhere.getByRole('link', { name: 'budget deep.txt' }).getAttribute('href')).toBe(`/files/${deep}`);

    await expectAccessible(page);
    expect(await sidewaysOverflow(page)).toEqual([]);
    await page.setViewportSize({ width: 360, height: 780 });
    await expectAccessible(page);
    expect(await sidewaysOverflow(page)).toEqual([]);

    await elsewhere.getByRole('link', { name: 'BUDGET 2027.ods' }).click();
    await page.getByRole('checkbox', { name: 'Select BUDGET 2027.ods', exact: true }).waitFor();
    expect(watched.problems).toEqual([]);
  }, 120_000);
});
