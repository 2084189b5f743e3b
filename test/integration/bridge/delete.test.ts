import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, href } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

describe('DELETE', () => {
  let f: BridgeFixture;
  let u: DavUser;

  beforeAll(async () => {
    // A long TTL: dropping the properties of a subtree deleted for good reads the cached
    // listings, and a slow run must not let them expire between two requests.
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 60_000 } });
    u = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, davAs, storeEntries, entryIn, mustFind, put, setColor, lock } = bridgeRequests(() => f, () => u);

  it('moves a file into the trash (204): the store keeps its UUID there and PROPFIND no longer finds it', async () => {
    const name = 'gone #1 50% 😀.txt';
    await put(href('home', name), 'bye');
    const before = await mustFind('home', name);
    const res = await dav('DELETE', href('home', name));
    expect(res.status).toBe(204);
    expect(await entryIn('home', name)).toBeUndefined();
    expect((await storeEntries('trash')).find((e) => e.id === before.id)?.name).toBe(name);
    expect((await dav('PROPFIND', href('home', name), { depth: '0' })).status).toBe(404);
    const listing = await dav('PROPFIND', '/home/', { depth: '1' });
    expect(listing.text).not.toContain(encodeURIComponent('gone'));
  });

  it('deletes a collection with its whole subtree, with or without the trailing slash', async () => {
    for (const [name, path] of [
      ['tree-a', '/home/tree-a/'],
      ['tree-b', '/home/tree-b'],
    ] as const) {
      expect((await dav('MKCOL', `/home/${name}`)).status).toBe(201);
      expect((await dav('MKCOL', `/home/${name}/sub`)).status).toBe(201);
      await put(`/home/${name}/sub/deep.txt`, 'deep');
      await put(`/home/${name}/top.txt`, 'top');
      const folder = await mustFind('home', name);
      expect((await dav('DELETE', path)).status).toBe(204);
      expect(await entryIn('home', name)).toBeUndefined();
      const trashed = (await storeEntries('trash')).find((e) => e.id === folder.id);
      expect(trashed?.kind).toBe('folder');
      expect((await storeEntries(folder.id)).map((e) => e.name).sort()).toEqual(['sub', 'top.txt']);
      expect((await dav('PROPFIND', `/home/${name}/sub/deep.txt`, { depth: '0' })).status).toBe(404);
    }
  });

  it('keeps dead properties of a node moved into the trash and drops them when it is deleted for good there', async () => {
    expect((await dav('MKCOL', '/home/propdir')).status).toBe(201);
    await put('/home/propdir/inner.txt', 'x');
    await setColor('/home/propdir/', 'blue');
    await setColor('/home/propdir/inner.txt', 'blue');
    const folder = await mustFind('home', 'propdir');
    const inner = await mustFind(folder.id, 'inner.txt');
    const { props } = f.bridge.services;

    expect((await dav('DELETE', '/home/propdir/')).status).toBe(204);
    expect(await props.list(folder.id)).toHaveLength(1);
    const inTrash = await dav('PROPFIND', '/trash/propdir/inner.txt', { depth: '0' });
    expect(inTrash.status).toBe(207);
    expect(inTrash.text).toContain('blue');

    expect((await dav('DELETE', '/trash/propdir/')).status).toBe(204);
    expect((await storeEntries('trash')).find((e) => e.id === folder.id)).toBeUndefined();
    expect(await props.list(folder.id)).toEqual([]);
    expect(await props.list(inner.id)).toEqual([]);
    expect((await dav('PROPFIND', '/trash/propdir/', { depth: '0' })).status).toBe(404);
  });

  it('answers 404 for a missing resource and for a missing parent', async () => {
    expect((await dav('DELETE', '/home/never-was.txt')).status).toBe(404);
    expect((await dav('DELETE', '/home/no-parent/x.txt')).status).toBe(404);
  });

  it('answers 403 for the root and the top-level folders, which stay', async () => {
    await put('/home/keep.txt', 'k');
    for (const path of ['/', '/home', '/home/', '/trash']) expect((await dav('DELETE', path)).status).toBe(403);
    expect(await entryIn('home', 'keep.txt')).toBeDefined();
  });

  it('answers 400 for a collection DELETE with Depth other than infinity, and deletes nothing', async () => {
    expect((await dav('MKCOL', '/home/depth0')).status).toBe(201);
    expect((await dav('DELETE', '/home/depth0', { depth: '0' })).status).toBe(400);
    expect(await entryIn('home', 'depth0')).toBeDefined();
    expect((await dav('DELETE', '/home/depth0', { depth: 'infinity' })).status).toBe(204);
  });

  it('refuses a Request-URI with a fragment (litmus delete_fragment) and keeps the collection', async () => {
    expect((await dav('MKCOL', '/home/frag')).status).toBe(201);
    // undici would strip `#ment` as a URL fragment; send the raw request-target.
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(f.davUrl);
      const req = http.request({ host: url.hostname, port: url.port, method: 'DELETE', path: '/home/frag/#ment', headers: { authorization: u.auth } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(400);
    expect((await mustFind('home', 'frag')).kind).toBe('folder');
  });

  it('answers 423 for a locked file without its token; with the token it deletes and the lock is gone', async () => {
    await put('/home/locked.txt', 'l');
    const token = await lock('/home/locked.txt');
    const refused = await dav('DELETE', '/home/locked.txt');
    expect(refused.status).toBe(423);
    expect(refused.text).toContain('lock-token-submitted');
    expect(await entryIn('home', 'locked.txt')).toBeDefined();

    expect((await dav('DELETE', '/home/locked.txt', { if: `(<${token}>)` })).status).toBe(204);
    expect(await entryIn('home', 'locked.txt')).toBeUndefined();
    expect(await f.bridge.services.locks.get(token)).toBeUndefined();
  });

  it('answers 423 for a collection with a locked member unless the member token is submitted', async () => {
    expect((await dav('MKCOL', '/home/holder')).status).toBe(201);
    await put('/home/holder/member.txt', 'm');
    const token = await lock('/home/holder/member.txt');
    expect((await dav('DELETE', '/home/holder/')).status).toBe(423);
    expect(await entryIn('home', 'holder')).toBeDefined();
    const memberHref = `${f.davUrl}/home/holder/member.txt`;
    expect((await dav('DELETE', '/home/holder/', { if: `<${memberHref}> (<${token}>)` })).status).toBe(204);
    expect(await entryIn('home', 'holder')).toBeUndefined();
    expect(await f.bridge.services.locks.get(token)).toBeUndefined();
  });

  it('answers 412 when an If condition on the resource fails', async () => {
    await put('/home/cond.txt', 'c');
    const res = await dav('DELETE', '/home/cond.txt', { if: '(["not-the-etag"])' });
    expect(res.status).toBe(412);
    expect(await entryIn('home', 'cond.txt')).toBeDefined();
  });

  it("never reaches another user's locked file: the other user's DELETE resolves in their own home", async () => {
    const other = await f.newDavUser();
    await put('/home/mine.txt', 'mine');
    const token = await lock('/home/mine.txt');
    const res = await dav('DELETE', '/home/mine.txt', { if: `(<${token}>)` }, undefined, other);
    expect(res.status).toBe(404);
    expect(await entryIn('home', 'mine.txt')).toBeDefined();
    expect(await f.bridge.services.locks.get(token)).toBeDefined();
  });

  it('answers 401 without credentials', async () => {
    await put('/home/anon.txt', 'a');
    const res = await davAs(undefined, 'DELETE', '/home/anon.txt');
    expect(res.status).toBe(401);
    expect(await entryIn('home', 'anon.txt')).toBeDefined();
  });
});
