import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { nodeId, type NodeEntry } from '../../../src/store-client/index.js';
import { bridgeRequests, chunked, rawRequest, requestHead, type RawAnswer } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { createFolder, entryNamed, uploadFile } from '../../helpers/seed.js';
import { MiB, patternBytes, patternStream, readAll } from '../../helpers/stream-helpers.js';

describe('PUT', () => {
  let f: BridgeFixture;
  let user: DavUser;
  let host: string;

  beforeAll(async () => {
    // A long TTL: the 100-file test counts dirlists, and a listing expiring between two PUTs
    // on a loaded machine would be a re-list the bridge did not choose.
    f = await bridgeFixture({ viaProxy: true, bridgeFlags: { cacheTtlMs: 60_000 } });
    user = await f.newDavUser();
    host = new URL(f.davUrl).host;
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav } = bridgeRequests(() => f, () => user);

  async function entry(folder: string, name: string, who: DavUser = user): Promise<NodeEntry> {
    return entryNamed(f.client, who.session, folder, name);
  }

  /** The bytes the store holds for a file (latest revision unless `version`), read through the store's own download. */
  async function stored(file: NodeEntry, version?: number, who: DavUser = user): Promise<Buffer> {
    const download = await f.client.download(who.session, file.id, file.name, version === undefined ? {} : { version });
    return readAll(download.body);
  }

  const forgetListings = () => f.bridge.services.cache.clear();

  it('creates a new file with 201, then replaces it with 204 as a new revision; the store holds both', async () => {
    const created = await dav('PUT', '/home/doc.txt', {}, 'first version');
    expect(created.status).toBe(201);
    const first = await entry('home', 'doc.txt');
    expect((await stored(first)).toString()).toBe('first version');
    expect(created.headers.etag).toBe(`"${first.id}-${first.revision}"`);

    const replaced = await dav('PUT', '/home/doc.txt', {}, 'second, longer version');
    expect(replaced.status).toBe(204);
    const second = await entry('home', 'doc.txt');
    expect(second.id).toBe(first.id);
    expect(second.revision).toBe((first.revision ?? 0) + 1);
    expect(replaced.headers.etag).toBe(`"${second.id}-${second.revision}"`);
    expect((await stored(second)).toString()).toBe('second, longer version');
    expect((await stored(second, first.revision)).toString()).toBe('first version');
  });

  it('shows the new size and content at once to GET, HEAD and PROPFIND (read-after-write)', async () => {
    await dav('PUT', '/home/raw.txt', {}, 'abc');
    await dav('GET', '/home/raw.txt');
    const put = await dav('PUT', '/home/raw.txt', {}, 'abcdefgh');
    const get = await dav('GET', '/home/raw.txt');
    expect(get.body.toString()).toBe('abcdefgh');
    expect(get.headers.etag).toBe(put.headers.etag);
    const head = await dav('HEAD', '/home/raw.txt');
    expect(head.headers['content-length']).toBe('8');
    const propfind = await dav('PROPFIND', '/home/raw.txt', { depth: '0' },
      '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getcontentlength/><D:getetag/></D:prop></D:propfind>');
    const xml = propfind.body.toString();
    expect(xml).toContain('<D:getcontentlength>8</D:getcontentlength>');
    expect(/<D:getetag>([^<]*)<\/D:getetag>/.exec(xml)?.[1]?.replace(/&quot;/g, '"')).toBe(put.headers.etag);
  });

  it('takes a zero-byte PUT (Windows creates, then writes; Hyper Backup synobkpinfo.db)', async () => {
    const empty = await dav('PUT', '/home/synobkpinfo.db', { 'content-length': '0' }, '');
    expect(empty.status).toBe(201);
    const file = await entry('home', 'synobkpinfo.db');
    expect(file.sizeBytes).toBe(0);
    const filled = await dav('PUT', '/home/synobkpinfo.db', {}, 'now with content');
    expect(filled.status).toBe(204);
    expect((await stored(await entry('home', 'synobkpinfo.db'))).toString()).toBe('now with content');
  });

  it('streams a chunked body (no Content-Length) into the store', async () => {
    const size = 3 * MiB + 17;
    const res = await dav('PUT', '/home/chunked.bin', {}, patternStream(size, { chunkBytes: 100_000 }));
    expect(res.status).toBe(201);
    const file = await entry('home', 'chunked.bin');
    expect(file.sizeBytes).toBe(size);
    expect((await stored(file)).equals(patternBytes(0, size))).toBe(true);
  });

  it('takes a Finder PUT: chunked with X-Expected-Entity-Length and the final 0-chunk', async () => {
    const parts = [patternBytes(0, 5000), patternBytes(5000, 3000)];
    const answer = await rawRequest(
      f.davUrl,
      requestHead('PUT', '/home/finder-a.bin', host, { Authorization: user.auth, 'Transfer-Encoding': 'chunked', 'X-Expected-Entity-Length': '8000', 'User-Agent': 'WebDAVFS/3.0.0 (03008000) Darwin/24.4.0 (arm64)' }),
      chunked(parts, true),
    );
    expect(answer.status).toBe(201);
    const file = await entry('home', 'finder-a.bin');
    expect((await stored(file)).equals(patternBytes(0, 8000))).toBe(true);
  });

  it('finishes a Finder PUT after X-Expected-Entity-Length bytes when the 0-chunk never comes', async () => {
    const parts = [patternBytes(0, 4096), patternBytes(4096, 4000)];
    const answer = await rawRequest(
      f.davUrl,
      requestHead('PUT', '/home/finder-b.bin', host, { Authorization: user.auth, 'Transfer-Encoding': 'chunked', 'X-Expected-Entity-Length': '8096' }),
      chunked(parts, false),
    );
    expect(answer.status).toBe(201);
    expect(answer.headers.connection).toBe('close');
    const file = await entry('home', 'finder-b.bin');
    expect(file.sizeBytes).toBe(8096);
    expect((await stored(file)).equals(patternBytes(0, 8096))).toBe(true);
  });

  it('answers 400 when a Finder body ends before X-Expected-Entity-Length, keeping the previous revision', async () => {
    await dav('PUT', '/home/finder-c.bin', {}, 'complete');
    const answer = await rawRequest(
      f.davUrl,
      requestHead('PUT', '/home/finder-c.bin', host, { Authorization: user.auth, 'Transfer-Encoding': 'chunked', 'X-Expected-Entity-Length': '8000' }),
      chunked([patternBytes(0, 3000)], true),
    );
    expect(answer.status).toBe(400);
    const file = await entry('home', 'finder-c.bin');
    expect(file.revision).toBe(1);
    expect((await stored(file)).toString()).toBe('complete');
  });

  it('refuses a PUT with Content-Range (400) and stores nothing', async () => {
    await dav('PUT', '/home/partial.txt', {}, 'whole');
    const res = await dav('PUT', '/home/partial.txt', { 'content-range': 'bytes 0-1/5' }, 'XY');
    expect(res.status).toBe(400);
    expect((await stored(await entry('home', 'partial.txt'))).toString()).toBe('whole');
    const fresh = await dav('PUT', '/home/never.txt', { 'content-range': 'bytes 0-1/2' }, 'XY');
    expect(fresh.status).toBe(400);
    expect((await f.client.listFolder(user.session, nodeId('home'))).some((e) => e.name === 'never.txt')).toBe(false);
  });

  it('answers 409 for a PUT into a missing parent and 405 for a PUT onto a collection', async () => {
    expect((await dav('PUT', '/home/no-such-dir/file.txt', {}, 'x')).status).toBe(409);
    await createFolder(f.client, user.session, 'home', 'a-folder');
    forgetListings();
    const onFolder = await dav('PUT', '/home/a-folder', {}, 'x');
    expect(onFolder.status).toBe(405);
    expect(String(onFolder.headers.allow)).not.toContain('PUT');
    expect((await dav('PUT', '/home', {}, 'x')).status).toBe(405);
    expect((await entry('home', 'a-folder')).kind).toBe('folder');
  });

  it('answers 412 for If-None-Match: * on an existing file and for If-Match with another ETag; the file is untouched', async () => {
    const put = await dav('PUT', '/home/guarded.txt', { 'if-none-match': '*' }, 'original');
    expect(put.status).toBe(201);
    expect((await dav('PUT', '/home/guarded.txt', { 'if-none-match': '*' }, 'clobber')).status).toBe(412);
    expect((await dav('PUT', '/home/guarded.txt', { 'if-match': '"stale-etag"' }, 'clobber')).status).toBe(412);
    expect((await dav('PUT', '/home/not-there.txt', { 'if-match': String(put.headers.etag) }, 'x')).status).toBe(412);
    const file = await entry('home', 'guarded.txt');
    expect(file.revision).toBe(1);
    expect((await stored(file)).toString()).toBe('original');
    const matching = await dav('PUT', '/home/guarded.txt', { 'if-match': String(put.headers.etag) }, 'allowed');
    expect(matching.status).toBe(204);
    expect((await stored(await entry('home', 'guarded.txt'))).toString()).toBe('allowed');
  });

  it('answers 423 for a PUT on a file locked by another token, and 204 with the token in If', async () => {
    await dav('PUT', '/home/locked.txt', {}, 'before');
    const lock = await dav('LOCK', '/home/locked.txt', { 'content-type': 'application/xml', timeout: 'Second-600' },
      '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>');
    expect(lock.status).toBe(200);
    const token = String(lock.headers['lock-token']);
    expect((await dav('PUT', '/home/locked.txt', {}, 'without token')).status).toBe(423);
    expect((await stored(await entry('home', 'locked.txt'))).toString()).toBe('before');
    // Finder's untagged If header.
    expect((await dav('PUT', '/home/locked.txt', { if: `(${token})` }, 'with token')).status).toBe(204);
    expect((await stored(await entry('home', 'locked.txt'))).toString()).toBe('with token');
  });

  it('answers 507 when the user is over quota, and the previous revision stays intact', async () => {
    const small = await f.newDavUser({ quotaBytes: 1000 });
    expect((await dav('PUT', '/home/q.bin', {}, patternBytes(0, 600), small)).status).toBe(201);
    const before = await entry('home', 'q.bin', small);
    const over = await dav('PUT', '/home/q.bin', {}, patternBytes(1, 600), small);
    expect(over.status).toBe(507);
    const after = await entry('home', 'q.bin', small);
    expect(after.revision).toBe(before.revision);
    expect((await stored(after, undefined, small)).equals(patternBytes(0, 600))).toBe(true);
    // The failure did not leave a stale listing behind: the bridge still serves the old bytes.
    const get = await dav('GET', '/home/q.bin', {}, undefined, small);
    expect(get.body.equals(patternBytes(0, 600))).toBe(true);
  });

  it('answers no success when the store connection breaks mid-upload, and keeps the previous revision', async () => {
    await dav('PUT', '/home/fragile.bin', {}, 'the good revision');
    const before = await entry('home', 'fragile.bin');
    f.proxy?.breakNextRequestAfter(/^\/upload\//, 256 * 1024);
    const res = await dav('PUT', '/home/fragile.bin', {}, patternBytes(0, 2 * MiB));
    expect(res.status).toBeGreaterThanOrEqual(500);
    const after = await entry('home', 'fragile.bin');
    expect(after.revision).toBe(before.revision);
    expect((await stored(after)).toString()).toBe('the good revision');
  });

  it('keeps the previous revision when the client hangs up mid-body', async () => {
    await dav('PUT', '/home/abandoned.bin', {}, 'kept');
    const before = await entry('home', 'abandoned.bin');
    f.proxy?.reset();
    const url = new URL(f.davUrl);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`${requestHead('PUT', '/home/abandoned.bin', host, { Authorization: user.auth, 'Content-Length': String(4 * MiB) })}\r\n\r\n`);
    socket.write(patternBytes(0, MiB));
    let answered = '';
    socket.on('data', (chunk: Buffer) => {
      answered += chunk.toString('latin1');
    });
    // Wait until the bridge is streaming into the store, then vanish.
    await vi.waitFor(() => expect(f.proxy?.matching('POST', /^\/upload\//)[0]?.requestBytes ?? 0).toBeGreaterThan(0), { timeout: 10_000 });
    socket.destroy();
    await vi.waitFor(() => expect(f.proxy?.matching('POST', /^\/upload\//)[0]?.settled).toBe(true), { timeout: 10_000 });
    expect(answered).not.toMatch(/^HTTP\/1\.1 2/);
    const after = await entry('home', 'abandoned.bin');
    expect(after.revision).toBe(before.revision);
    expect((await stored(after)).toString()).toBe('kept');
    expect((await dav('GET', '/home/abandoned.bin')).body.toString()).toBe('kept');
  });

  it('keeps the previous revision when the client hangs up inside a small body (read whole before the store sees it)', async () => {
    await dav('PUT', '/home/abandoned-small.txt', {}, 'kept small');
    const before = await entry('home', 'abandoned-small.txt');
    f.proxy?.reset();
    const url = new URL(f.davUrl);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`${requestHead('PUT', '/home/abandoned-small.txt', host, { Authorization: user.auth, 'Content-Length': '4096' })}\r\n\r\n`);
    socket.write(Buffer.alloc(1000, 1));
    // Give the bridge the first 1,000 bytes to wait on, then vanish.
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(f.proxy?.matching('POST', /^\/upload\//) ?? []).toHaveLength(0);
    const after = await entry('home', 'abandoned-small.txt');
    expect(after.revision).toBe(before.revision);
    expect((await dav('GET', '/home/abandoned-small.txt')).body.toString()).toBe('kept small');
    expect((await dav('PUT', '/home/abandoned-small.txt', {}, 'next')).status).toBe(204);
  });

  it('keeps X-OC-Mtime as the file mtime (getlastmodified, Last-Modified) and forgets it on a PUT without one', async () => {
    const put = await dav('PUT', '/home/mtime.txt', { 'x-oc-mtime': '1577836800' }, 'dated');
    expect(put.status).toBe(201);
    expect(put.headers['x-oc-mtime']).toBe('accepted');
    const file = await entry('home', 'mtime.txt');
    expect(await f.bridge.services.props.getMtime(file.id)).toBe(1_577_836_800_000);
    const expected = 'Wed, 01 Jan 2020 00:00:00 GMT';
    expect((await dav('HEAD', '/home/mtime.txt')).headers['last-modified']).toBe(expected);
    const propfind = await dav('PROPFIND', '/home/mtime.txt', { depth: '0' },
      '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getlastmodified/></D:prop></D:propfind>');
    expect(propfind.body.toString()).toContain(`<D:getlastmodified>${expected}</D:getlastmodified>`);

    const again = await dav('PUT', '/home/mtime.txt', { 'x-oc-mtime': '1600000000.5' }, 'redated');
    expect(again.status).toBe(204);
    expect(await f.bridge.services.props.getMtime(file.id)).toBe(1_600_000_000_500);

    const plain = await dav('PUT', '/home/mtime.txt', {}, 'changed without a date');
    expect(plain.headers['x-oc-mtime']).toBeUndefined();
    expect(await f.bridge.services.props.getMtime(file.id)).toBeUndefined();
    expect((await dav('HEAD', '/home/mtime.txt')).headers['last-modified']).not.toBe(expected);
  });

  it('writes 100 files into one folder without a dirlist per PUT', async () => {
    await dav('MKCOL', '/home/many');
    await dav('PUT', '/home/many/file-0.txt', {}, 'file 0');
    f.proxy?.reset();
    for (let i = 1; i <= 100; i += 1) {
      const res = await dav('PUT', `/home/many/file-${i}.txt`, {}, `file ${i}`);
      expect(res.status).toBe(201);
    }
    expect(f.proxy?.matching('GET', /\/dirlist$/)).toHaveLength(0);
    expect(f.proxy?.matching('POST', /^\/upload\//)).toHaveLength(100);
    const listing = await f.client.listFolder(user.session, (await entry('home', 'many')).id);
    expect(listing).toHaveLength(101);
    const propfind = await dav('PROPFIND', '/home/many/', { depth: '1' });
    expect(propfind.body.toString().match(/<D:response>/g)).toHaveLength(102);
  });

  describe('Expect: 100-continue (litmus http/expect100)', () => {
    it('answers 100 Continue, then takes the body', async () => {
      const head = requestHead('PUT', '/home/expect.txt', host, { Authorization: user.auth, 'Content-Length': '5', Expect: '100-continue' });
      const url = new URL(f.davUrl);
      const socket = net.connect(Number(url.port), url.hostname);
      const received: string[] = [];
      const final = new Promise<string>((resolve) => {
        socket.on('data', (chunk: Buffer) => {
          received.push(chunk.toString('latin1'));
          const text = received.join('');
          if (text.startsWith('HTTP/1.1 100') && !text.includes('\r\n\r\nHTTP/1.1 ')) {
            if (!socket.writableEnded && text.endsWith('\r\n\r\n')) socket.write('hello');
            return;
          }
          if (/\r\n\r\nHTTP\/1\.1 \d{3}[^]*\r\n\r\n$/.test(text)) resolve(text);
        });
      });
      socket.write(`${head}\r\n\r\n`);
      const text = await final;
      socket.destroy();
      expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
      expect((await stored(await entry('home', 'expect.txt'))).toString()).toBe('hello');
    });

    it('answers an error at once, without waiting for a body the client never sends', async () => {
      const missingParent = await rawRequest(
        f.davUrl,
        requestHead('PUT', '/home/nowhere/expect.txt', host, { Authorization: user.auth, 'Content-Length': '100', Expect: '100-continue' }),
      );
      expect(missingParent.status).toBe(409);
      const anonymous = await rawRequest(f.davUrl, requestHead('PUT', '/home/expect100', host, { 'Content-Length': '100', Expect: '100-continue' }));
      expect(anonymous.status).toBe(401);
    });
  });

  it('keeps serving after a PUT whose body is cut by a malformed chunk', async () => {
    const answer = await rawRequest(
      f.davUrl,
      requestHead('PUT', '/home/badchunk.txt', host, { Authorization: user.auth, 'Transfer-Encoding': 'chunked' }),
      '5\r\nhello\r\nZZZ\r\n',
    ).catch((err: unknown) => err);
    if (!(answer instanceof Error)) expect((answer as RawAnswer).status).toBeGreaterThanOrEqual(400);
    expect((await f.client.listFolder(user.session, nodeId('home'))).some((e) => e.name === 'badchunk.txt')).toBe(false);
    expect((await dav('PUT', '/home/after-bad.txt', {}, 'fine')).status).toBe(201);
  });

  it('puts into a folder the bridge has not listed yet and into a subfolder made through the store', async () => {
    const folder = await createFolder(f.client, user.session, 'home', 'made-in-store');
    await uploadFile(f.client, user.session, folder, 'existing.txt', 'old');
    forgetListings();
    expect((await dav('PUT', '/home/made-in-store/existing.txt', {}, 'new')).status).toBe(204);
    expect((await stored(await entry(folder, 'existing.txt'))).toString()).toBe('new');
  });
});
