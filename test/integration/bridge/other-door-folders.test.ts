/**
 * A folder made through another door (the store's REST API, as the web app makes a dropped
 * folder's tree before it uploads into it) is written into through the bridge at once, whatever
 * listing of its parent the bridge holds: a folder on the way that the cached listing lacks is
 * asked of the store once more before the path is called unmapped (tree/resolver.ts tryStat).
 * The TTL is far beyond the test, so only that second ask can find the folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { createFolder } from '../../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

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
