import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, href } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

describe('MKCOL', () => {
  let f: BridgeFixture;
  let u: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture();
    u = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, davAs, storeEntries, entryIn, davNames } = bridgeRequests(() => f, () => u);

  async function folderId(folder: string, name: string): Promise<string> {
    const entry = await entryIn(folder, name);
    if (entry?.kind !== 'folder') throw new Error(`no folder ${name} in ${folder}`);
    return entry.id;
  }

  it('creates a collection (201) that the store lists as a folder and PROPFIND shows at once', async () => {
    const name = 'new #1 100% 😀';
    const res = await dav('MKCOL', href('home', name));
    expect(res.status).toBe(201);
    const entry = await entryIn('home', name);
    expect(entry?.kind).toBe('folder');
    expect(await davNames('/home/')).toContain(name);
    const depth0 = await dav('PROPFIND', href('home', name), { depth: '0' });
    expect(depth0.status).toBe(207);
    expect(depth0.text).toContain('<D:collection/>');
  });

  it('accepts the URL with a trailing slash and creates nested collections one level at a time', async () => {
    expect((await dav('MKCOL', '/home/outer/')).status).toBe(201);
    expect((await dav('MKCOL', '/home/outer/inner/')).status).toBe(201);
    const inner = await entryIn(await folderId('home', 'outer'), 'inner');
    expect(inner?.kind).toBe('folder');
  });

  it('answers 405 with Allow when a collection or a file already has the name, and changes nothing', async () => {
    expect((await dav('MKCOL', '/home/twice')).status).toBe(201);
    const again = await dav('MKCOL', '/home/twice/');
    expect(again.status).toBe(405);
    expect(String(again.headers.allow)).toContain('PROPFIND');
    expect(String(again.headers.allow)).not.toContain('MKCOL');

    expect((await dav('PUT', '/home/plain.txt', {}, 'text')).status).toBe(201);
    expect((await dav('MKCOL', '/home/plain.txt')).status).toBe(405);
    const entries = await storeEntries();
    expect(entries.filter((e) => e.name === 'twice')).toHaveLength(1);
    expect(entries.find((e) => e.name === 'plain.txt')?.kind).toBe('file');
  });

  it('answers parallel MKCOLs of one name with one 201 and 405 for the rest, never 409 (rclone makes parents in parallel)', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => dav('MKCOL', '/home/raced')));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 405, 405, 405, 405, 405, 405, 405]);
    expect((await storeEntries()).filter((e) => e.name === 'raced')).toHaveLength(1);
  });

  it('answers 405 for the root and the existing top-level folders', async () => {
    for (const path of ['/', '/home', '/trash/']) expect((await dav('MKCOL', path)).status).toBe(405);
  });

  it('answers 403 for a new name at the top level (top-level folders are fixed)', async () => {
    const res = await dav('MKCOL', '/newtop');
    expect(res.status).toBe(403);
    const root = await dav('PROPFIND', '/', { depth: '1' });
    expect(root.text).not.toContain('newtop');
  });

  it('answers 409 when the parent is missing or is a file, and creates nothing', async () => {
    expect((await dav('MKCOL', '/home/missing/child')).status).toBe(409);
    expect(await entryIn('home', 'missing')).toBeUndefined();
    expect((await dav('PUT', '/home/file-parent.txt', {}, 'x')).status).toBe(201);
    expect((await dav('MKCOL', '/home/file-parent.txt/child')).status).toBe(409);
  });

  it('answers 415 for a request body (litmus mkcol_with_body), also a chunked one, and creates nothing', async () => {
    const res = await dav('MKCOL', '/home/with-body', { 'content-type': 'xzy-foo/bar-512' }, 'afafafaf');
    expect(res.status).toBe(415);
    const chunked = await dav('MKCOL', '/home/with-body', {}, Readable.from([Buffer.from('<x/>')]));
    expect(chunked.status).toBe(415);
    expect(await entryIn('home', 'with-body')).toBeUndefined();
    // An empty chunked body is no body.
    const empty = await dav('MKCOL', '/home/empty-chunked', {}, Readable.from([]));
    expect(empty.status).toBe(201);
  });

  it('passes on the store refusing a folder inside the trash (403)', async () => {
    const res = await dav('MKCOL', '/trash/not-here');
    expect(res.status).toBe(403);
    expect((await storeEntries('trash')).map((e) => e.name)).not.toContain('not-here');
  });

  it('answers 423 under a depth-infinity lock on the parent unless its token is submitted', async () => {
    expect((await dav('MKCOL', '/home/locked')).status).toBe(201);
    const lock = await dav(
      'LOCK',
      '/home/locked/',
      { depth: 'infinity', 'content-type': 'application/xml' },
      '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>',
    );
    expect(lock.status).toBe(200);
    const token = /<(opaquelocktoken:[^>]+)>/.exec(String(lock.headers['lock-token']))?.[1] as string;

    const refused = await dav('MKCOL', '/home/locked/sub');
    expect(refused.status).toBe(423);
    expect(refused.text).toContain('lock-token-submitted');
    const locked = await folderId('home', 'locked');
    expect(await storeEntries(locked)).toEqual([]);

    expect((await dav('MKCOL', '/home/locked/sub', { if: `(<${token}>)` })).status).toBe(201);
    expect((await dav('MKCOL', '/home/locked/sub2', { if: `<${f.davUrl}/home/locked/> (<${token}>)` })).status).toBe(201);
    expect((await storeEntries(locked)).map((e) => e.name).sort()).toEqual(['sub', 'sub2']);
  });

  it('answers 412 when the If header names a token no lock has', async () => {
    const res = await dav('MKCOL', '/home/cond', { if: '(<opaquelocktoken:00000000-0000-0000-0000-000000000000>)' });
    expect(res.status).toBe(412);
    expect(await entryIn('home', 'cond')).toBeUndefined();
  });

  it('answers 401 without credentials', async () => {
    const res = await davAs(undefined, 'MKCOL', '/home/anon');
    expect(res.status).toBe(401);
    expect(await entryIn('home', 'anon')).toBeUndefined();
  });
});
