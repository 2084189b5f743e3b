import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGING_PREFIX } from '../../../src/bridge/store-tree.js';
import { bridgeRequests, href } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

describe('MOVE', () => {
  let f: BridgeFixture;
  let u: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture();
    u = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, move, storeEntries, entryIn, mustFind, put, mkcol, get, davNames, lock } = bridgeRequests(() => f, () => u);

  it('renames within a folder (201), keeping the UUID, for names with # % space and emoji', async () => {
    const from = 'a#b 100%.txt';
    const to = 'c d #2 😀 %41.txt';
    await put(href('home', from), 'payload');
    const before = await mustFind('home', from);
    const res = await move(href('home', from), href('home', to));
    expect(res.status).toBe(201);
    expect(await entryIn('home', from)).toBeUndefined();
    expect((await mustFind('home', to)).id).toBe(before.id);
    const names = await davNames('/home/');
    expect(names).toContain(to);
    expect(names).not.toContain(from);
    expect(await get(href('home', to))).toEqual({ status: 200, text: 'payload' });
    expect((await dav('PROPFIND', href('home', from), { depth: '0' })).status).toBe(404);
  });

  it('accepts a path-only Destination as well as an absolute URL', async () => {
    await put('/home/path-only.txt', 'p');
    const res = await dav('MOVE', '/home/path-only.txt', { destination: '/home/path-only-moved.txt' });
    expect(res.status).toBe(201);
    expect(await entryIn('home', 'path-only-moved.txt')).toBeDefined();
  });

  it('renames case-only (x.txt -> X.txt) as a rename, not as an overwrite of itself', async () => {
    await put('/home/x.txt', 'lower');
    const before = await mustFind('home', 'x.txt');
    const res = await move('/home/x.txt', '/home/X.txt');
    expect(res.status).toBe(201);
    const entries = await storeEntries();
    expect(entries.filter((e) => e.name.toLowerCase() === 'x.txt').map((e) => [e.name, e.id])).toEqual([['X.txt', before.id]]);
    const names = await davNames('/home/');
    expect(names).toContain('X.txt');
    expect(names).not.toContain('x.txt');
  });

  it('moves into another folder keeping the name', async () => {
    const dest = await mkcol('/home/dest-keep');
    await put('/home/keep.txt', 'k');
    const before = await mustFind('home', 'keep.txt');
    expect((await move('/home/keep.txt', '/home/dest-keep/keep.txt')).status).toBe(201);
    expect(await entryIn('home', 'keep.txt')).toBeUndefined();
    expect((await mustFind(dest, 'keep.txt')).id).toBe(before.id);
    expect(await davNames('/home/dest-keep/')).toEqual(['keep.txt']);
  });

  it('renames and moves in one MOVE when the new name exists in the source folder and the old one in the target', async () => {
    const src = await mkcol('/home/swap-src');
    const dst = await mkcol('/home/swap-dst');
    await put('/home/swap-src/a.txt', 'the mover');
    await put('/home/swap-src/b.txt', 'stays in src');
    await put('/home/swap-dst/a.txt', 'stays in dst');
    const mover = await mustFind(src, 'a.txt');
    const res = await move('/home/swap-src/a.txt', '/home/swap-dst/b.txt');
    expect(res.status).toBe(201);
    const srcEntries = await storeEntries(src);
    const dstEntries = await storeEntries(dst);
    expect(srcEntries.map((e) => e.name)).toEqual(['b.txt']);
    expect(dstEntries.map((e) => e.name).sort()).toEqual(['a.txt', 'b.txt']);
    expect(dstEntries.find((e) => e.name === 'b.txt')?.id).toBe(mover.id);
    for (const e of [...srcEntries, ...dstEntries]) expect(e.name.startsWith(STAGING_PREFIX)).toBe(false);
    expect(await get('/home/swap-dst/b.txt')).toEqual({ status: 200, text: 'the mover' });
    expect(await get('/home/swap-src/b.txt')).toEqual({ status: 200, text: 'stays in src' });
    expect(await get('/home/swap-dst/a.txt')).toEqual({ status: 200, text: 'stays in dst' });
  });

  it('moves a folder with its contents (rclone: trailing slashes, absolute URL)', async () => {
    const folder = await mkcol('/home/tree');
    await mkcol('/home/tree/sub');
    await put('/home/tree/sub/deep.txt', 'deep');
    await put('/home/tree/top.txt', 'top');
    const res = await move('/home/tree/', '/home/tree-moved/');
    expect(res.status).toBe(201);
    expect(await entryIn('home', 'tree')).toBeUndefined();
    expect((await mustFind('home', 'tree-moved')).id).toBe(folder);
    expect((await davNames('/home/tree-moved/')).sort()).toEqual(['sub', 'top.txt']);
    expect(await get('/home/tree-moved/sub/deep.txt')).toEqual({ status: 200, text: 'deep' });
    expect((await dav('PROPFIND', '/home/tree/', { depth: '0' })).status).toBe(404);
  });

  it('onto an existing file with Overwrite: T (204): its next revision, the same node; the one-revision source is gone for good', async () => {
    await put('/home/over-src.txt', 'new');
    await put('/home/over-dst.txt', 'old');
    const src = await mustFind('home', 'over-src.txt');
    const old = await mustFind('home', 'over-dst.txt');
    const res = await move('/home/over-src.txt', '/home/over-dst.txt', { overwrite: 'T' });
    expect(res.status).toBe(204);
    expect(await entryIn('home', 'over-src.txt')).toBeUndefined();
    const now = await mustFind('home', 'over-dst.txt');
    expect(now.id).toBe(old.id);
    expect(now.revision).toBe((old.revision ?? 0) + 1);
    expect((await storeEntries('trash')).some((e) => e.id === old.id || e.id === src.id)).toBe(false);
    expect(await get('/home/over-dst.txt')).toEqual({ status: 200, text: 'new' });
  });

  it('replaces an existing folder with Overwrite absent (T by default): 204, the old subtree is gone from the path', async () => {
    await mkcol('/home/dir-src');
    await put('/home/dir-src/fresh.txt', 'fresh');
    const old = await mkcol('/home/dir-dst');
    await put('/home/dir-dst/stale.txt', 'stale');
    const res = await move('/home/dir-src/', '/home/dir-dst/');
    expect(res.status).toBe(204);
    expect(await davNames('/home/dir-dst/')).toEqual(['fresh.txt']);
    expect((await storeEntries('trash')).some((e) => e.id === old)).toBe(true);
  });

  it('answers 412 with Overwrite: F onto an existing resource and changes nothing', async () => {
    await put('/home/f-src.txt', 'src');
    await put('/home/f-dst.txt', 'dst');
    const res = await move('/home/f-src.txt', '/home/f-dst.txt', { overwrite: 'F' });
    expect(res.status).toBe(412);
    expect(await get('/home/f-src.txt')).toEqual({ status: 200, text: 'src' });
    expect(await get('/home/f-dst.txt')).toEqual({ status: 200, text: 'dst' });
  });

  it('answers 201 with Overwrite: F onto a free name', async () => {
    await put('/home/f-free.txt', 'free');
    expect((await move('/home/f-free.txt', '/home/f-free-2.txt', { overwrite: 'F' })).status).toBe(201);
  });

  it('answers 409 when the destination parent is missing, and the source stays', async () => {
    await put('/home/orphan.txt', 'o');
    expect((await move('/home/orphan.txt', '/home/nowhere/orphan.txt')).status).toBe(409);
    expect(await entryIn('home', 'orphan.txt')).toBeDefined();
  });

  it('answers 403 when source and destination are the same', async () => {
    await put('/home/same.txt', 's');
    expect((await move('/home/same.txt', '/home/same.txt')).status).toBe(403);
    await mkcol('/home/same-dir');
    expect((await move('/home/same-dir', '/home/same-dir/')).status).toBe(403);
    expect(await entryIn('home', 'same.txt')).toBeDefined();
  });

  it('answers 403 for a collection moved into itself, and for a destination that contains the source (412 with Overwrite: F)', async () => {
    const outer = await mkcol('/home/self');
    await mkcol('/home/self/child');
    expect((await move('/home/self/', '/home/self/child/self/')).status).toBe(403);
    expect((await move('/home/self/child/', '/home/self/', { overwrite: 'T' })).status).toBe(403);
    expect((await move('/home/self/child/', '/home/self/', { overwrite: 'F' })).status).toBe(412);
    expect((await mustFind('home', 'self')).id).toBe(outer);
    expect((await storeEntries(outer)).map((e) => e.name)).toEqual(['child']);
  });

  it('answers 403 for moving a top-level folder or onto a top-level name', async () => {
    expect((await move('/incoming/', '/home/incoming/')).status).toBe(403);
    await put('/home/to-top.txt', 't');
    expect((await move('/home/to-top.txt', '/newtop')).status).toBe(403);
    expect((await move('/home/to-top.txt', '/incoming')).status).toBe(403);
    expect(await entryIn('home', 'to-top.txt')).toBeDefined();
  });

  it('answers 502 for a Destination on another server, 400 without one or with a malformed one', async () => {
    await put('/home/stay.txt', 's');
    expect((await dav('MOVE', '/home/stay.txt', { destination: 'http://elsewhere.example:8080/home/x.txt' })).status).toBe(502);
    expect((await dav('MOVE', '/home/stay.txt')).status).toBe(400);
    expect((await dav('MOVE', '/home/stay.txt', { destination: 'not a url' })).status).toBe(400);
    expect((await dav('MOVE', '/home/stay.txt', { destination: '/home/%zz' })).status).toBe(400);
    expect((await dav('MOVE', '/home/stay.txt', { destination: '/home/x.txt', overwrite: 'maybe' })).status).toBe(400);
    expect(await entryIn('home', 'stay.txt')).toBeDefined();
  });

  it('answers 404 for a missing source', async () => {
    expect((await move('/home/none.txt', '/home/none-2.txt')).status).toBe(404);
  });

  it('answers 400 for a collection MOVE with Depth: 0', async () => {
    await mkcol('/home/depth0');
    expect((await move('/home/depth0', '/home/depth0-moved', { depth: '0' })).status).toBe(400);
    expect(await entryIn('home', 'depth0')).toBeDefined();
  });

  it('answers 423 for a locked source without the token; with it the MOVE succeeds and the lock stays behind', async () => {
    await put('/home/locked-src.txt', 'l');
    const token = await lock('/home/locked-src.txt');
    const refused = await move('/home/locked-src.txt', '/home/locked-src-moved.txt');
    expect(refused.status).toBe(423);
    expect(refused.text).toContain('lock-token-submitted');
    expect(await entryIn('home', 'locked-src.txt')).toBeDefined();

    const res = await move('/home/locked-src.txt', '/home/locked-src-moved.txt', { if: `(<${token}>)` });
    expect(res.status).toBe(201);
    expect(await f.bridge.services.locks.get(token)).toBeUndefined();
    // The moved file is not locked: a write without a token works.
    expect((await dav('PUT', '/home/locked-src-moved.txt', {}, 'free')).status).toBe(204);
  });

  it('answers 423 for a folder with a locked member unless the member token is submitted', async () => {
    await mkcol('/home/lock-holder');
    await put('/home/lock-holder/m.txt', 'm');
    const token = await lock('/home/lock-holder/m.txt');
    expect((await move('/home/lock-holder/', '/home/lock-holder-2/')).status).toBe(423);
    const res = await move('/home/lock-holder/', '/home/lock-holder-2/', { if: `<${f.davUrl}/home/lock-holder/m.txt> (<${token}>)` });
    expect(res.status).toBe(201);
    expect(await f.bridge.services.locks.get(token)).toBeUndefined();
  });

  it('answers 423 for a locked destination without its token, and writes it with the token (tagged If), its lock kept', async () => {
    await put('/home/ld-src.txt', 'src');
    await put('/home/ld-dst.txt', 'dst');
    const token = await lock('/home/ld-dst.txt');
    expect((await move('/home/ld-src.txt', '/home/ld-dst.txt')).status).toBe(423);
    expect(await get('/home/ld-dst.txt')).toEqual({ status: 200, text: 'dst' });
    const res = await move('/home/ld-src.txt', '/home/ld-dst.txt', { if: `<${f.davUrl}/home/ld-dst.txt> (<${token}>)` });
    expect(res.status).toBe(204);
    expect(await get('/home/ld-dst.txt')).toEqual({ status: 200, text: 'src' });
    // A new revision of the same resource, as a PUT writes it: the lock holder still holds it.
    expect(await f.bridge.services.locks.get(token)).toBeDefined();
  });

  it('answers 423 for a destination inside a depth-infinity locked folder without the token', async () => {
    await mkcol('/home/locked-target');
    const token = await lock('/home/locked-target/', 'infinity');
    await put('/home/into-locked.txt', 'i');
    expect((await move('/home/into-locked.txt', '/home/locked-target/into-locked.txt')).status).toBe(423);
    const res = await move('/home/into-locked.txt', '/home/locked-target/into-locked.txt', { if: `<${f.davUrl}/home/locked-target/> (<${token}>)` });
    expect(res.status).toBe(201);
  });

  it('keeps dead properties with the moved node and applies X-OC-Mtime to the destination', async () => {
    await put('/home/props-src.txt', 'p');
    const patch = await dav(
      'PROPPATCH',
      '/home/props-src.txt',
      { 'content-type': 'application/xml' },
      '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:test"><D:set><D:prop><Z:color>teal</Z:color></D:prop></D:set></D:propertyupdate>',
    );
    expect(patch.status).toBe(207);
    const res = await move('/home/props-src.txt', '/home/props-dst.txt', { 'x-oc-mtime': '1577836800' });
    expect(res.status).toBe(201);
    expect(res.headers['x-oc-mtime']).toBe('accepted');
    const found = await dav('PROPFIND', '/home/props-dst.txt', { depth: '0' });
    expect(found.text).toContain('teal');
    expect(found.text).toContain('<D:getlastmodified>Wed, 01 Jan 2020 00:00:00 GMT</D:getlastmodified>');
  });

  it('undoes the first steps of a rename + move the store refuses half-way, leaving no hidden passing name', async () => {
    await mkcol('/home/binned');
    await put('/home/binned/a.txt', 'binned');
    expect((await dav('DELETE', '/home/binned/')).status).toBe(204);
    const roll = await mkcol('/home/roll');
    await put('/home/roll/a.txt', 'mover');
    await put('/home/roll/b.txt', 'other');
    const mover = await mustFind(roll, 'a.txt');
    // Needs a passing name (b.txt taken here, a.txt there); the store refuses moves into the trash.
    const res = await move('/home/roll/a.txt', '/trash/binned/b.txt');
    expect(res.status).toBe(403);
    const entries = await storeEntries(roll);
    expect(entries.map((e) => e.name)).toEqual(['a.txt', 'b.txt']);
    expect(entries.find((e) => e.name === 'a.txt')?.id).toBe(mover.id);
    expect(await davNames('/home/roll/')).toEqual(['a.txt', 'b.txt']);
  });

  it('restores a node from the trash with a MOVE out of /trash', async () => {
    await put('/home/restore-me.txt', 'back');
    const before = await mustFind('home', 'restore-me.txt');
    expect((await dav('DELETE', '/home/restore-me.txt')).status).toBe(204);
    expect((await move('/trash/restore-me.txt', '/home/restored.txt')).status).toBe(201);
    expect((await mustFind('home', 'restored.txt')).id).toBe(before.id);
    expect((await storeEntries('trash')).some((e) => e.id === before.id)).toBe(false);
  });
});
