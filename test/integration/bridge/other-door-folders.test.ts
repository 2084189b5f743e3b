/**
 * Writes through another door than the bridge (the store's REST API: the web app) and the
 * bridge's listings. The TTL is far beyond the test, so only what the tests name can show them.
 * - A folder made through the REST API (the web app makes a dropped folder's tree before it
 *   uploads into it) is written into through the bridge at once, whatever listing of its parent
 *   the bridge holds: a folder on the way that the cached listing lacks is asked of the store
 *   once more before the path is called unmapped (tree/resolver.ts tryStat). Any transport.
 * - In-process, the store announces the folders its REST API changed apart from the bridge's own
 *   writes (SQLite: storage/dialects/sqlite-changes.ts; PostgreSQL, in integration-pg-bridge: the
 *   bridge's transactions mark themselves, migration 038): the bridge lists those folders
 *   again at once (a rename shows, and a PUT to the old name makes a new file instead of a
 *   version of the renamed one), while its own uploads into a folder patch the listing and
 *   fetch none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { createFolder, entryNamed } from '../../helpers/seed.js';
import { parseMultistatus } from '../../helpers/multistatus.js';
import { bridgeFixture, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

let f: BridgeFixture;
let u: DavUser;

beforeAll(async () => {
  f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 600_000 } });
  u = await f.newDavUser();
});
afterAll(async () => {
  await f?.close();
});

/** A PROPFIND Depth 1 of `path`: the bridge then holds its listing. */
async function listed(path: string): Promise<void> {
  expect((await davRequest(f.davUrl, 'PROPFIND', path, { auth: u.auth, headers: { depth: '1' } })).status).toBe(207);
}

describe('a folder made through the store’s REST API', () => {
  it('takes a PUT and a MKCOL through the bridge at once, two levels down, though the bridge listed its parent before', async () => {
    await listed('/home/');
    const album = await createFolder(f.client, u.session, 'home', 'album');
    const summer = await createFolder(f.client, u.session, album, 'summer');
    await createFolder(f.client, u.session, summer, 'beach');
    const put = await davRequest(f.davUrl, 'PUT', '/home/album/summer/beach/shell.txt', { auth: u.auth, body: 'a shell\n' });
    expect(put.status, put.text).toBe(201);
    expect((await davRequest(f.davUrl, 'MKCOL', '/home/album/summer/dunes', { auth: u.auth })).status).toBe(201);
    const entries = await f.client.listFolder(u.session, summer);
    expect(entries.map((e) => e.name).sort()).toEqual(['beach', 'dunes']);
    const got = await davRequest(f.davUrl, 'GET', '/home/album/summer/beach/shell.txt', { auth: u.auth });
    expect(got.text).toBe('a shell\n');
  });

  it('still refuses a PUT below a folder that is not there with 409, and a GET with 404', async () => {
    await listed('/home/');
    expect((await davRequest(f.davUrl, 'PUT', '/home/nowhere/x.txt', { auth: u.auth, body: 'x' })).status).toBe(409);
    expect((await davRequest(f.davUrl, 'GET', '/home/nowhere/x.txt', { auth: u.auth })).status).toBe(404);
    expect((await f.client.listFolder(u.session, nodeId('home'))).map((e) => e.name)).not.toContain('nowhere');
  });
});

/** The names a PROPFIND Depth 1 of `path` shows below it. */
async function namesIn(path: string): Promise<string[]> {
  const res = await davRequest(f.davUrl, 'PROPFIND', path, { auth: u.auth, headers: { depth: '1' } });
  expect(res.status).toBe(207);
  return parseMultistatus(res.text)
    .map((r) => decodeURIComponent(r.href.replace(/\/+$/, '').split('/').pop() ?? ''))
    .slice(1)
    .sort();
}

describe.skipIf(TEST_TRANSPORT === 'http')('a write through the store’s REST API, in-process', () => {
  it('shows in the folder’s listing at once: a rename, then a PUT to the old name makes a new file and leaves the renamed one whole', async () => {
    const folder = await createFolder(f.client, u.session, 'home', 'renamed-here');
    expect((await davRequest(f.davUrl, 'PUT', '/home/renamed-here/draft.txt', { auth: u.auth, body: 'the draft\n' })).status).toBe(201);
    expect(await namesIn('/home/renamed-here/')).toEqual(['draft.txt']);
    const draft = await entryNamed(f.client, u.session, folder, 'draft.txt');
    await f.client.rename(u.session, draft.id, 'final.txt');
    expect(await namesIn('/home/renamed-here/')).toEqual(['final.txt']);
    expect((await davRequest(f.davUrl, 'PUT', '/home/renamed-here/draft.txt', { auth: u.auth, body: 'a new draft\n' })).status).toBe(201);
    expect((await davRequest(f.davUrl, 'GET', '/home/renamed-here/final.txt', { auth: u.auth })).text).toBe('the draft\n');
    expect(await namesIn('/home/renamed-here/')).toEqual(['draft.txt', 'final.txt']);
  });

  it('lists a folder again for none of the bridge’s own uploads into it', async () => {
    await createFolder(f.client, u.session, 'home', 'filling');
    expect(await namesIn('/home/filling/')).toEqual([]);
    const cache = f.bridge.services.cache;
    const before = cache.misses;
    for (let i = 0; i < 20; i++) {
      expect((await davRequest(f.davUrl, 'PUT', `/home/filling/f${i}.txt`, { auth: u.auth, body: `file ${i}` })).status).toBe(201);
    }
    expect(await namesIn('/home/filling/')).toHaveLength(20);
    // The tree-fresh PROPFIND lists /home/filling's parent chain again (tree versions moved), never the folder per upload.
    expect(cache.misses - before).toBeLessThan(5);
  });
});
