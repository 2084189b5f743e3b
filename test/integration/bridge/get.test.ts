import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { encodeSegment } from '../../../src/bridge/href.js';
import { davRequest, type DavAnswer, type DavHeaders } from '../../helpers/dav-requests.js';
import { basicAuth, bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { ADMIN_PASSWORD } from '../../helpers/start-store.js';
import { createFolder, entryNamed, uploadFile } from '../../helpers/seed.js';
import { MiB, patternBytes, patternStream } from '../../helpers/stream-helpers.js';

const TEXT = 'Hello, bridge! 0123456789 abcdefghij';

function dav(f: BridgeFixture, user: DavUser | undefined, method: string, path: string, headers: DavHeaders = {}, body?: string): Promise<DavAnswer> {
  return davRequest(f.davUrl, method, path, { auth: user?.auth, headers, body });
}

/** After writing straight to the store: the bridge shows others' writes only after its cache TTL. */
const forgetListings = (f: BridgeFixture) => f.bridge.services.cache.clear();

/** Store downloads (GET /resources/...) the bridge made. */
const downloadsOf = (f: BridgeFixture) => (f.proxy ? f.proxy.matching('GET', /^\/resources\//) : []);

describe('GET and HEAD', () => {
  let f: BridgeFixture;
  let user: DavUser;
  let textId: string;

  beforeAll(async () => {
    f = await bridgeFixture({ viaProxy: true });
    user = await f.newDavUser();
    textId = await uploadFile(f.client, user.session, 'home', 'hello.txt', TEXT);
  });
  afterAll(async () => {
    await f.close();
  });

  it('serves the whole file with ETag, Last-Modified, Content-Type, Accept-Ranges and Content-Length', async () => {
    const entry = await entryNamed(f.client, user.session, 'home', 'hello.txt');
    const res = await dav(f, user, 'GET', '/home/hello.txt');
    expect(res.status).toBe(200);
    expect(res.body.toString('utf8')).toBe(TEXT);
    expect(res.headers.etag).toBe(`"${textId}-${entry.revision}"`);
    expect(res.headers['last-modified']).toBe(new Date(entry.updatedMs).toUTCString());
    expect(res.headers['content-type']).toBe('text/plain');
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(TEXT)));
  });

  it('gives the same ETag as PROPFIND getetag and the same size as getcontentlength', async () => {
    const get = await dav(f, user, 'GET', '/home/hello.txt');
    const propfind = await dav(f, user, 'PROPFIND', '/home/hello.txt', { depth: '0', 'content-type': 'application/xml' },
      '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:getcontentlength/></D:prop></D:propfind>');
    expect(propfind.status).toBe(207);
    const xml = propfind.body.toString('utf8');
    const etag = /<D:getetag>([^<]*)<\/D:getetag>/.exec(xml)?.[1]?.replace(/&quot;/g, '"');
    expect(etag).toBe(get.headers.etag);
    expect(xml).toContain(`<D:getcontentlength>${get.headers['content-length']}</D:getcontentlength>`);
  });

  it('serves exact 206 ranges: closed, open-ended, suffix, and an end past EOF clamped', async () => {
    const size = Buffer.byteLength(TEXT);
    const cases: Array<[string, number, number]> = [
      ['bytes=0-4', 0, 4],
      ['bytes=7-', 7, size - 1],
      ['bytes=-6', size - 6, size - 1],
      ['bytes=10-100000', 10, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await dav(f, user, 'GET', '/home/hello.txt', { range });
      expect(res.status, range).toBe(206);
      expect(res.headers['content-range'], range).toBe(`bytes ${start}-${end}/${size}`);
      expect(res.headers['content-length'], range).toBe(String(end - start + 1));
      expect(res.body.toString('utf8'), range).toBe(TEXT.slice(start, end + 1));
    }
  });

  it('answers 416 with Content-Range bytes */size for a range starting past the end', async () => {
    const res = await dav(f, user, 'GET', '/home/hello.txt', { range: 'bytes=999999999-' });
    expect(res.status).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${Buffer.byteLength(TEXT)}`);
    expect(res.body.length).toBe(0);
  });

  it('answers 304 to If-None-Match with the current ETag and to If-Modified-Since with Last-Modified', async () => {
    const first = await dav(f, user, 'GET', '/home/hello.txt');
    const byTag = await dav(f, user, 'GET', '/home/hello.txt', { 'if-none-match': String(first.headers.etag) });
    expect(byTag.status).toBe(304);
    expect(byTag.body.length).toBe(0);
    expect(byTag.headers.etag).toBe(first.headers.etag);
    const byDate = await dav(f, user, 'GET', '/home/hello.txt', { 'if-modified-since': String(first.headers['last-modified']) });
    expect(byDate.status).toBe(304);
    const otherTag = await dav(f, user, 'GET', '/home/hello.txt', { 'if-none-match': '"something-else"' });
    expect(otherTag.status).toBe(200);
    expect(otherTag.body.toString('utf8')).toBe(TEXT);
  });

  it('answers 412 to If-Match with another ETag', async () => {
    const res = await dav(f, user, 'GET', '/home/hello.txt', { 'if-match': '"not-this-one"' });
    expect(res.status).toBe(412);
    expect(res.body.length).toBe(0);
  });

  it('sends the whole file (200) when If-Range does not match, and the range when it does', async () => {
    const first = await dav(f, user, 'GET', '/home/hello.txt');
    const stale = await dav(f, user, 'GET', '/home/hello.txt', { range: 'bytes=0-4', 'if-range': '"an-old-revision"' });
    expect(stale.status).toBe(200);
    expect(stale.body.toString('utf8')).toBe(TEXT);
    const current = await dav(f, user, 'GET', '/home/hello.txt', { range: 'bytes=0-4', 'if-range': String(first.headers.etag) });
    expect(current.status).toBe(206);
    expect(current.body.toString('utf8')).toBe(TEXT.slice(0, 5));
  });

  it('answers HEAD with the GET headers, no body, and without downloading from the store', async () => {
    const get = await dav(f, user, 'GET', '/home/hello.txt');
    f.proxy?.reset();
    const head = await dav(f, user, 'HEAD', '/home/hello.txt');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    for (const name of ['etag', 'last-modified', 'content-type', 'content-length', 'accept-ranges']) expect(head.headers[name], name).toBe(get.headers[name]);
    expect(downloadsOf(f)).toHaveLength(0);
  });

  it('answers 404 for a missing file and for a path below a file', async () => {
    expect((await dav(f, user, 'GET', '/home/missing.txt')).status).toBe(404);
    expect((await dav(f, user, 'GET', '/home/hello.txt/below')).status).toBe(404);
    expect((await dav(f, user, 'HEAD', '/home/nothing/here.txt')).status).toBe(404);
  });

  it('serves files whose names hold # % ? & + space and emoji, addressed by percent-encoded paths', async () => {
    const folder = await createFolder(f.client, user.session, 'home', 'odd names');
    const names = ['a#b.txt', 'e%f.txt', 'c?d.txt', 'x&y.txt', 'g+h.txt', 'sp ace.txt', 'smile 😀.txt'];
    for (const name of names) await uploadFile(f.client, user.session, folder, name, `content of ${name}`);
    forgetListings(f);
    for (const name of names) {
      const res = await dav(f, user, 'GET', `/home/${encodeSegment('odd names')}/${encodeSegment(name)}`);
      expect(res.status, name).toBe(200);
      expect(res.body.toString('utf8'), name).toBe(`content of ${name}`);
    }
  });

  it('answers GET on a collection with an HTML index linking every entry by its encoded href', async () => {
    const folder = await createFolder(f.client, user.session, 'home', 'listed');
    await uploadFile(f.client, user.session, folder, 'one & two.txt', '12');
    await createFolder(f.client, user.session, folder, 'sub#dir');
    forgetListings(f);
    for (const path of ['/home/listed', '/home/listed/']) {
      const res = await dav(f, user, 'GET', path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const html = res.body.toString('utf8');
      expect(html).toContain('href="/home/listed/one%20%26%20two.txt"');
      expect(html).toContain('>one &amp; two.txt<');
      expect(html).toContain('href="/home/listed/sub%23dir/"');
      expect(html).toContain('href="/home/listed/one%20%26%20two.txt?download" download="one &amp; two.txt"');
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'unsafe-inline'/);
    }
  });

  it('links the index page to the web app\'s Connect page, on the host the bridge was reached by', async () => {
    const html = (await dav(f, user, 'GET', '/home/')).body.toString('utf8');
    const storePort = new URL(f.store.url).port;
    expect(html).toContain(`<p class="connect"><a href="http://127.0.0.1:${storePort}/connect">Connect this drive to your computer or phone</a></p>`);
  });

  it('escapes every name it prints, so a name cannot inject markup into the index page', async () => {
    const folder = await createFolder(f.client, user.session, 'home', 'escaping');
    await uploadFile(f.client, user.session, folder, '<img src=x onerror=alert(1)>.txt', 'x');
    forgetListings(f);
    const html = (await dav(f, user, 'GET', '/home/escaping/')).body.toString('utf8');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;.txt');
  });

  it('answers /favicon.ico with an icon, without credentials; it is no resource for PROPFIND', async () => {
    const icon = await dav(f, undefined, 'GET', '/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/png');
    expect(icon.body.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect((await dav(f, user, 'PROPFIND', '/favicon.ico', { depth: '0' })).status).toBe(404);
  });

  it('serves an empty file as an empty 200 with Content-Length 0 and no store download', async () => {
    await uploadFile(f.client, user.session, 'home', 'empty.bin', Buffer.alloc(0));
    forgetListings(f);
    f.proxy?.reset();
    const res = await dav(f, user, 'GET', '/home/empty.bin', { range: 'bytes=0-10' });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('0');
    expect(res.body.length).toBe(0);
    expect(downloadsOf(f)).toHaveLength(0);
  });

  describe('on a large file', () => {
    const size = 8 * MiB;
    beforeAll(async () => {
      await f.client.upload(user.session, { folder: nodeId('home'), name: 'large.bin' }, patternStream(size), size);
      forgetListings(f);
    });

    it('asks the store for the range only: bytes read from the store are about the bytes sent', async () => {
      const start = 6 * MiB + 123;
      const length = 64 * 1024;
      f.proxy?.reset();
      const res = await dav(f, user, 'GET', '/home/large.bin', { range: `bytes=${start}-${start + length - 1}` });
      expect(res.status).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes ${start}-${start + length - 1}/${size}`);
      expect(res.body.equals(patternBytes(start, length))).toBe(true);
      const downloads = downloadsOf(f);
      expect(downloads).toHaveLength(1);
      // Reading from byte 0 would pull more than 6 MiB from the store.
      expect(downloads[0]?.responseBytes).toBe(length);
    });

    it('still answers an exact 206 when the store ignores Range, by skipping bytes itself', async () => {
      f.proxy?.droppedRequestHeaders.add('range');
      try {
        const start = 3 * MiB + 7;
        const length = 1000;
        const res = await dav(f, user, 'GET', '/home/large.bin', { range: `bytes=${start}-${start + length - 1}` });
        expect(res.status).toBe(206);
        expect(res.headers['content-range']).toBe(`bytes ${start}-${start + length - 1}/${size}`);
        expect(res.headers['content-length']).toBe(String(length));
        expect(res.body.equals(patternBytes(start, length))).toBe(true);
      } finally {
        f.proxy?.droppedRequestHeaders.delete('range');
      }
    });

    it('serves the whole large file byte for byte', async () => {
      const res = await dav(f, user, 'GET', '/home/large.bin');
      expect(res.status).toBe(200);
      expect(res.body.length).toBe(size);
      expect(res.body.equals(patternBytes(0, size))).toBe(true);
    });

    it('stops the store download when the client hangs up mid-body, and keeps serving', async () => {
      const big = 48 * MiB;
      await f.client.upload(user.session, { folder: nodeId('home'), name: 'huge.bin' }, patternStream(big), big);
      forgetListings(f);
      f.proxy?.reset();
      const res = await request(`${f.davUrl}/home/huge.bin`, { headers: { authorization: user.auth } });
      expect(res.statusCode).toBe(200);
      for await (const chunk of res.body) {
        expect((chunk as Buffer).length).toBeGreaterThan(0);
        break;
      }
      res.body.destroy();
      await vi.waitFor(() => expect(downloadsOf(f)[0]?.settled).toBe(true), { timeout: 10_000 });
      expect(downloadsOf(f)[0]?.responseBytes).toBeLessThan(big);
      const after = await dav(f, user, 'GET', '/home/hello.txt');
      expect(after.status).toBe(200);
      expect(after.body.toString('utf8')).toBe(TEXT);
    });
  });

  it('serves the new revision with matching headers when the store changed behind a cached listing', async () => {
    const id = await uploadFile(f.client, user.session, 'home', 'changing.txt', 'short');
    forgetListings(f);
    expect((await dav(f, user, 'GET', '/home/changing.txt')).body.toString('utf8')).toBe('short');
    // A new revision written straight to the store: the bridge's cached listing still says 5 bytes.
    await f.client.upload(user.session, { revisionOf: nodeId(id), name: 'changing.txt' }, Readable.from([Buffer.from('a longer body')]), 13);
    const res = await dav(f, user, 'GET', '/home/changing.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('13');
    expect(res.body.toString('utf8')).toBe('a longer body');
    const entry = await entryNamed(f.client, user.session, 'home', 'changing.txt');
    expect(res.headers.etag).toBe(`"${id}-${entry.revision}"`);
  });

  it('answers 401 without credentials', async () => {
    const res = await davRequest(f.davUrl, 'GET', '/home/hello.txt');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic /);
  });
});

describe('GET against an edition 1.0 store (no download endpoint)', () => {
  let f: BridgeFixture;
  let admin: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture({ edition: '1.0' });
    // Edition 1.0 has no user administration: the built-in admin is the user.
    admin = { uuid: f.admin.userId, email: 'admin', password: ADMIN_PASSWORD, session: f.admin, auth: basicAuth('admin', ADMIN_PASSWORD) };
    await uploadFile(f.client, f.admin, 'home', 'old.txt', 'cannot be read');
  });
  afterAll(async () => {
    await f.close();
  });

  it('answers 501 to GET, keeps the file listed, and answers HEAD from the listing', async () => {
    const get = await dav(f, admin, 'GET', '/home/old.txt');
    expect(get.status).toBe(501);
    const head = await dav(f, admin, 'HEAD', '/home/old.txt');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength('cannot be read')));
    expect(head.headers.etag).toMatch(/^"[^"]+"$/);
  });
});
