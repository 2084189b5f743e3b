/**
 * The search extension over HTTP (POST /api/search, docs/extensions.md "Search"): the SPEC
 * envelope, a bad body refused 400 naming the field (nothing answered), another user's folder as
 * a scope 404 (unknown and not-yours alike), the trash searched only when asked, pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, dataOf } from '../../helpers/user-api.js';
import { createFolder, uploadFile } from '../../helpers/seed.js';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';

interface Answer {
  hits: Array<{ name: string; type: string; path: Array<{ name: string; uuid: string }> }>;
  more: boolean;
}

describe('POST /api/search', () => {
  let f: StoreFixture;
  let ada: TestUser;
  let bob: TestUser;
  let bobFolder: string;
  const search = (who: TestUser, body: unknown) => apiCall(f.client, who.session, 'POST', '/api/search', body);

  beforeAll(async () => {
    f = await storeFixture();
    [ada, bob] = await Promise.all([f.newUser(), f.newUser()]);
    const letters = await createFolder(f.client, ada.session, 'home', 'Letters');
    for (const name of ['letter-a.txt', 'letter-b.txt', 'letter-c.txt']) await uploadFile(f.client, ada.session, letters, name, name);
    const gone = await uploadFile(f.client, ada.session, letters, 'letter-gone.txt', 'x');
    await f.client.remove(ada.session, gone);
    bobFolder = await createFolder(f.client, bob.session, 'home', 'Bob letters');
    await uploadFile(f.client, bob.session, bobFolder, 'letter-bob.txt', 'b');
  });
  afterAll(async () => {
    await f?.close();
  });

  it('answers a page of the caller’s hits with their paths, the next page on asking, the trash only when asked', async () => {
    const first = dataOf<Answer>(await search(ada, { where: { and: [{ name: 'letter-%' }, { kind: 'file' }] }, order: [{ by: 'name' }], limit: 2 }));
    expect(first.hits.map((h) => h.name)).toEqual(['letter-a.txt', 'letter-b.txt']);
    expect(first.more).toBe(true);
    expect(first.hits[0]?.path.map((p) => p.name)).toEqual(['home', 'Letters', 'letter-a.txt']);
    const second = dataOf<Answer>(await search(ada, { where: { name: 'letter-%' }, order: [{ by: 'name' }], limit: 2, offset: 2 }));
    expect(second).toEqual({ hits: [expect.objectContaining({ name: 'letter-c.txt' })], more: false });
    const withTrash = dataOf<Answer>(await search(ada, { where: { name_contains: 'GONE' }, trash: true }));
    expect(withTrash.hits.map((h) => [h.name, h.path[0]?.name])).toEqual([['letter-gone.txt', 'trash']]);
    expect(dataOf<Answer>(await search(ada, { where: { name_contains: 'gone' } })).hits).toEqual([]);
  });

  // The mime pattern was a backtracking RegExp tried on ~1,000 types: twelve `%` froze the server for minutes.
  it('answers a mime pattern of many % at once, matching as LIKE does', { timeout: 10_000 }, async () => {
    expect(dataOf<Answer>(await search(ada, { where: { mime: '%%%%%%%%%%%%!' } }))).toEqual({ hits: [], more: false });
    const plain = dataOf<Answer>(await search(ada, { where: { mime: '%%%%%%%%%%%%/plai_' }, order: [{ by: 'name' }] }));
    expect(plain.hits.map((h) => h.name)).toEqual(['letter-a.txt', 'letter-b.txt', 'letter-c.txt']);
  });

  it('walks every depth: a scope finds what lies below it at any level (not the scope itself, nor its siblings), several scopes their union', async () => {
    const carol = await f.newUser();
    const top = await createFolder(f.client, carol.session, 'home', 'deep');
    let level = top;
    const folders: string[] = [top];
    for (let depth = 1; depth <= 5; depth += 1) {
      level = await createFolder(f.client, carol.session, level, `deep${depth}`);
      folders.push(level);
      await uploadFile(f.client, carol.session, level, `file${depth}.txt`, `at ${depth}`);
    }
    const aside = await createFolder(f.client, carol.session, 'home', 'deep-aside');
    await uploadFile(f.client, carol.session, aside, 'file-aside.txt', 'aside');
    const names = async (body: unknown) => dataOf<Answer>(await search(carol, { ...(body as object), order: [{ by: 'name' }], limit: 100 })).hits.map((h) => h.name);
    expect(await names({ where: { name: 'deep%' } })).toEqual(['deep', 'deep-aside', 'deep1', 'deep2', 'deep3', 'deep4', 'deep5']);
    expect(await names({ where: { kind: 'file' } })).toEqual(['file-aside.txt', 'file1.txt', 'file2.txt', 'file3.txt', 'file4.txt', 'file5.txt']);
    expect(await names({ scope: [folders[2]], where: { name: 'deep%' } })).toEqual(['deep3', 'deep4', 'deep5']);
    expect(await names({ scope: [folders[2]], where: { mime: 'text/%' } })).toEqual(['file2.txt', 'file3.txt', 'file4.txt', 'file5.txt']);
    expect(await names({ scope: [folders[4], aside], where: { kind: 'file' } })).toEqual(['file-aside.txt', 'file4.txt', 'file5.txt']);
    const deepest = dataOf<Answer>(await search(carol, { where: { name: 'file5%' } })).hits[0];
    expect(deepest?.path.map((p) => p.name)).toEqual(['home', 'deep', 'deep1', 'deep2', 'deep3', 'deep4', 'deep5', 'file5.txt']);
  });

  it('refuses a bad body 400 naming what is wrong, and another user’s folder as a scope 404', async () => {
    const bad = await search(ada, { where: { name: 'x' }, limit: 5000 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 'error', msg: expect.stringContaining('limit') });
    expect((await search(ada, { where: { owner: 'bob' } })).status).toBe(400);
    const foreign = await search(ada, { scope: [bobFolder] });
    expect(foreign.status).toBe(404);
    expect(dataOf<Answer>(await search(bob, { scope: [bobFolder], where: { name: '%letter%' } })).hits.map((h) => h.name)).toEqual(['letter-bob.txt']);
  });
});
