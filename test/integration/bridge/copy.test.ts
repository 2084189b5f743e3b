import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGING_PREFIX } from '../../../src/bridge/store-tree.js';
import { nodeId, type NodeEntry } from '../../../src/store-client/index.js';
import { bridgeRequests, href } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

describe('COPY', () => {
  let f: BridgeFixture;
  let u: DavUser;

  beforeAll(async () => {
    // A long TTL: the dead properties of members are copied from cached listings, and a slow
    // run must not let them expire between the PROPPATCH and the COPY.
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 60_000 } });
    u = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, copy, storeEntries, entryIn, mustFind, put, mkcol, get, davNames, setColor, lock } = bridgeRequests(() => f, () => u);

  function expectNoStaging(entries: readonly NodeEntry[]): void {
    for (const e of entries) expect(e.name.startsWith(STAGING_PREFIX)).toBe(false);
  }

  it('copies a file into another folder under the same name (201): a new node with the same bytes', async () => {
    const dest = await mkcol('/home/copy-dest');
    await put('/home/orig.txt', 'original bytes');
    const source = await mustFind('home', 'orig.txt');
    const res = await copy('/home/orig.txt', '/home/copy-dest/orig.txt');
    expect(res.status).toBe(201);
    const copied = await mustFind(dest, 'orig.txt');
    expect(copied.id).not.toBe(source.id);
    expect(copied.sizeBytes).toBe(source.sizeBytes);
    expect(await entryIn('home', 'orig.txt')).toBeDefined();
    expect(await davNames('/home/copy-dest/')).toEqual(['orig.txt']);
    expect(await get('/home/copy-dest/orig.txt')).toEqual({ status: 200, text: 'original bytes' });
  });

  it('copies into the same folder under a new name with # % space emoji, leaving no staging folder behind', async () => {
    const name = 'copy #1 of 100% 😀.txt';
    await put('/home/same-folder.txt', 'twin');
    const res = await copy('/home/same-folder.txt', href('home', name));
    expect(res.status).toBe(201);
    const entries = await storeEntries();
    expect(entries.filter((e) => e.name === 'same-folder.txt' || e.name === name)).toHaveLength(2);
    expectNoStaging(entries);
    expectNoStaging(await storeEntries('trash'));
    expect(await davNames('/home/')).toContain(name);
    expect(await get(href('home', name))).toEqual({ status: 200, text: 'twin' });
  });

  it('copies a folder with its contents (Depth infinity by default)', async () => {
    await mkcol('/home/tree');
    await mkcol('/home/tree/sub');
    await put('/home/tree/sub/deep.txt', 'deep');
    await put('/home/tree/top.txt', 'top');
    const res = await copy('/home/tree/', '/home/tree-copy/');
    expect(res.status).toBe(201);
    const copy1 = await mustFind('home', 'tree-copy');
    expect((await storeEntries(copy1.id)).map((e) => e.name)).toEqual(['sub', 'top.txt']);
    const sub = await mustFind(copy1.id, 'sub');
    expect((await storeEntries(sub.id)).map((e) => e.name)).toEqual(['deep.txt']);
    expect(await get('/home/tree-copy/sub/deep.txt')).toEqual({ status: 200, text: 'deep' });
    expect((await davNames('/home/tree/')).sort()).toEqual(['sub', 'top.txt']);
  });

  it('copies a folder under a new name into the same folder (Depth: infinity)', async () => {
    await mkcol('/home/dup');
    await put('/home/dup/a.txt', 'a');
    expect((await copy('/home/dup', '/home/dup 2', { depth: 'infinity' })).status).toBe(201);
    const dup2 = await mustFind('home', 'dup 2');
    expect((await storeEntries(dup2.id)).map((e) => e.name)).toEqual(['a.txt']);
    expectNoStaging(await storeEntries());
  });

  it('copies only the collection with Depth: 0, with its dead properties', async () => {
    await mkcol('/home/shallow');
    await put('/home/shallow/member.txt', 'm');
    await setColor('/home/shallow/', 'green');
    const res = await copy('/home/shallow/', '/home/shallow-copy/', { depth: '0' });
    expect(res.status).toBe(201);
    const copied = await mustFind('home', 'shallow-copy');
    expect(copied.kind).toBe('folder');
    expect(await storeEntries(copied.id)).toEqual([]);
    const found = await dav('PROPFIND', '/home/shallow-copy/', { depth: '0' });
    expect(found.text).toContain('green');
  });

  it('answers 400 for Depth: 1', async () => {
    await mkcol('/home/depth1');
    expect((await copy('/home/depth1', '/home/depth1-copy', { depth: '1' })).status).toBe(400);
    expect(await entryIn('home', 'depth1-copy')).toBeUndefined();
  });

  it('copies dead properties and client mtimes to the copy and to members of a copied folder', async () => {
    await mkcol('/home/props');
    await mkcol('/home/props/inner');
    await put('/home/props/inner/leaf.txt', 'leaf');
    await put('/home/props/plain.txt', 'plain');
    await setColor('/home/props/', 'red');
    await setColor('/home/props/inner/leaf.txt', 'violet');
    expect((await dav('PUT', '/home/props/plain.txt', { 'x-oc-mtime': '1577836800' }, 'plain')).status).toBe(204);

    const res = await copy('/home/props/', '/home/props-copy/');
    expect(res.status).toBe(201);
    expect((await dav('PROPFIND', '/home/props-copy/', { depth: '0' })).text).toContain('red');
    expect((await dav('PROPFIND', '/home/props-copy/inner/leaf.txt', { depth: '0' })).text).toContain('violet');
    expect((await dav('PROPFIND', '/home/props-copy/plain.txt', { depth: '0' })).text).toContain(
      '<D:getlastmodified>Wed, 01 Jan 2020 00:00:00 GMT</D:getlastmodified>',
    );
    // The copy's properties are its own: changing them leaves the source's alone.
    await setColor('/home/props-copy/inner/leaf.txt', 'black');
    expect((await dav('PROPFIND', '/home/props/inner/leaf.txt', { depth: '0' })).text).toContain('violet');
  });

  it('applies X-OC-Mtime to the copy and answers X-OC-Mtime: accepted', async () => {
    await put('/home/mtime.txt', 'm');
    const res = await copy('/home/mtime.txt', '/home/mtime-copy.txt', { 'x-oc-mtime': '1600000000' });
    expect(res.status).toBe(201);
    expect(res.headers['x-oc-mtime']).toBe('accepted');
    const copied = await dav('PROPFIND', '/home/mtime-copy.txt', { depth: '0' });
    expect(copied.text).toContain('<D:getlastmodified>Sun, 13 Sep 2020 12:26:40 GMT</D:getlastmodified>');
    const source = await dav('PROPFIND', '/home/mtime.txt', { depth: '0' });
    expect(source.text).not.toContain('Sun, 13 Sep 2020');
  });

  it('onto an existing file with Overwrite: T (204): its next revision, the same node, nothing in the trash', async () => {
    await put('/home/ow-src.txt', 'new');
    await put('/home/ow-dst.txt', 'old');
    const old = await mustFind('home', 'ow-dst.txt');
    const res = await copy('/home/ow-src.txt', '/home/ow-dst.txt', { overwrite: 'T' });
    expect(res.status).toBe(204);
    const now = await mustFind('home', 'ow-dst.txt');
    expect(now.id).toBe(old.id);
    expect(now.revision).toBe((old.revision ?? 0) + 1);
    expect((await storeEntries('trash')).some((e) => e.id === old.id)).toBe(false);
    expect(await get('/home/ow-dst.txt')).toEqual({ status: 200, text: 'new' });
    expect(await get('/home/ow-src.txt')).toEqual({ status: 200, text: 'new' });
  });

  it('replaces an existing folder with Overwrite: T (204)', async () => {
    await mkcol('/home/owd-src');
    await put('/home/owd-src/fresh.txt', 'fresh');
    const old = await mkcol('/home/owd-dst');
    await put('/home/owd-dst/stale.txt', 'stale');
    const res = await copy('/home/owd-src/', '/home/owd-dst/');
    expect(res.status).toBe(204);
    expect(await davNames('/home/owd-dst/')).toEqual(['fresh.txt']);
    expect((await storeEntries('trash')).some((e) => e.id === old)).toBe(true);
  });

  it('answers 412 with Overwrite: F onto an existing resource and changes nothing', async () => {
    await put('/home/f-src.txt', 'src');
    await put('/home/f-dst.txt', 'dst');
    const before = await mustFind('home', 'f-dst.txt');
    expect((await copy('/home/f-src.txt', '/home/f-dst.txt', { overwrite: 'F' })).status).toBe(412);
    expect((await mustFind('home', 'f-dst.txt')).id).toBe(before.id);
    expect(await get('/home/f-dst.txt')).toEqual({ status: 200, text: 'dst' });
  });

  it('answers 409 when the destination parent is missing', async () => {
    await put('/home/np.txt', 'n');
    expect((await copy('/home/np.txt', '/home/nonesuch/np.txt')).status).toBe(409);
    expect(await entryIn('home', 'nonesuch')).toBeUndefined();
  });

  it('answers 403 when source and destination are the same, or a collection would be copied into itself', async () => {
    await put('/home/same.txt', 's');
    expect((await copy('/home/same.txt', '/home/same.txt')).status).toBe(403);
    const folder = await mkcol('/home/selfcopy');
    expect((await copy('/home/selfcopy/', '/home/selfcopy/inside/')).status).toBe(403);
    expect(await storeEntries(folder)).toEqual([]);
  });

  it('answers 502 for a Destination on another server and 400 without a Destination', async () => {
    await put('/home/here.txt', 'h');
    expect((await dav('COPY', '/home/here.txt', { destination: 'https://other.example/home/x.txt' })).status).toBe(502);
    expect((await dav('COPY', '/home/here.txt')).status).toBe(400);
    expect((await storeEntries()).filter((e) => e.name === 'x.txt')).toEqual([]);
  });

  it('copies a locked source without its token; the copy carries no lock', async () => {
    await put('/home/locked-src.txt', 'l');
    const token = await lock('/home/locked-src.txt');
    expect((await copy('/home/locked-src.txt', '/home/locked-src-copy.txt')).status).toBe(201);
    expect((await dav('PUT', '/home/locked-src-copy.txt', {}, 'free')).status).toBe(204);
    expect(await f.bridge.services.locks.get(token)).toBeDefined();
  });

  it('answers 423 for a locked destination without its token, and writes it with the token, its lock kept', async () => {
    await put('/home/ld-src.txt', 'src');
    await put('/home/ld-dst.txt', 'dst');
    const token = await lock('/home/ld-dst.txt');
    const refused = await copy('/home/ld-src.txt', '/home/ld-dst.txt');
    expect(refused.status).toBe(423);
    expect(await get('/home/ld-dst.txt')).toEqual({ status: 200, text: 'dst' });
    const res = await copy('/home/ld-src.txt', '/home/ld-dst.txt', { if: `<${f.davUrl}/home/ld-dst.txt> (<${token}>)` });
    expect(res.status).toBe(204);
    expect(await get('/home/ld-dst.txt')).toEqual({ status: 200, text: 'src' });
    expect(await f.bridge.services.locks.get(token)).toBeDefined();
  });

  it('answers 507 when the copy would pass the quota, leaving no partial copy or staging folder', async () => {
    const small: DavUser = await f.newDavUser({ quotaBytes: 1500 });
    const put1 = await dav('PUT', '/home/big.bin', {}, 'x'.repeat(1000), small);
    expect(put1.status).toBe(201);
    const res = await dav('COPY', '/home/big.bin', { destination: '/home/big 2.bin' }, undefined, small);
    expect(res.status).toBe(507);
    const entries = await f.client.listFolder(small.session, nodeId('home'));
    expect(entries.map((e) => e.name)).toEqual(['big.bin']);
  });
});
