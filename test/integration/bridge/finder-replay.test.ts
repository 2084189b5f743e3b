/**
 * macOS Finder (WebDAVFS) replayed request by request, as docs/client-quirks.md §1 describes it:
 * mount probes, the junk-file probe storm, a listing with AppleDouble props, the upload of a new
 * file (PROPFIND 404, LOCK creating it, chunked PUT with X-Expected-Entity-Length and an untagged
 * If, the `._` companion, UNLOCK, ranged reads) and NFD names. Each step is its own test so a
 * failure names the step; the steps share one user and run in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { chunked, davRequest, rawRequest, requestHead, type DavAnswer, type DavHeaders, type RawAnswer } from '../../helpers/dav-requests.js';
import { bridgeWithUserFolder, type BridgeFixture } from '../../helpers/start-bridge.js';
import { uploadFile } from '../../helpers/seed.js';

const FINDER_UA = 'WebDAVFS/3.0.0 (03008000) Darwin/24.4.0 (arm64)';
const STAT_PROPS =
  '<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:"><D:prop>' +
  '<D:getlastmodified/><D:getcontentlength/><D:creationdate/><D:resourcetype/></D:prop></D:propfind>';
const QUOTA_PROPS =
  '<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:"><D:prop>' +
  '<D:quota-available-bytes/><D:quota-used-bytes/><D:quota/><D:quotaused/></D:prop></D:propfind>';
const LISTING_PROPS =
  '<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:" xmlns:A="http://www.apple.com/webdav_fs/props/"><D:prop>' +
  '<D:getlastmodified/><D:getcontentlength/><D:creationdate/><D:resourcetype/><A:appledoubleheader/></D:prop></D:propfind>';
const FINDER_LOCK =
  '<?xml version="1.0" encoding="utf-8"?>\n<D:lockinfo xmlns:D="DAV:">\n<D:lockscope><D:exclusive/></D:lockscope>\n' +
  '<D:locktype><D:write/></D:locktype>\n<D:owner>\n<D:href>http://www.apple.com/webdav_fs/</D:href>\n</D:owner>\n</D:lockinfo>\n';

/** Deterministic bytes, so ranges can be checked exactly. */
function fileBytes(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return out;
}

describe('Finder (WebDAVFS) request sequence', () => {
  let f: BridgeFixture;
  let auth: string;
  let session: Awaited<ReturnType<BridgeFixture['newDavUser']>>['session'];
  let dirId: string;
  const N = 200_000;
  const content = fileBytes(N, 1);
  let token = '';

  beforeAll(async () => {
    ({ f, auth, session, dirId } = await bridgeWithUserFolder());
    await uploadFile(f.client, session, dirId, 'existing.txt', 'already here');
    await uploadFile(f.client, session, dirId, 'café.txt', 'NFC name');
  });
  afterAll(async () => {
    await f.close();
  });

  function finder(method: string, path: string, headers: DavHeaders = {}, body?: string | Buffer, anonymous = false): Promise<DavAnswer> {
    return davRequest(f.davUrl, method, path, { clientHeaders: { 'user-agent': FINDER_UA }, auth: anonymous ? undefined : auth, headers, body });
  }

  /**
   * A chunked PUT written on a raw socket, as WebDAVFS sends it; without the final 0-chunk when
   * `terminate` is false (Finder sometimes stops there and waits for the answer).
   */
  function chunkedPut(path: string, body: Buffer, headers: DavHeaders, terminate: boolean): Promise<RawAnswer> {
    const { hostname, port } = new URL(f.davUrl);
    const head = requestHead('PUT', path, `${hostname}:${port}`, {
      'User-Agent': FINDER_UA,
      Authorization: auth,
      'Transfer-Encoding': 'chunked',
      ...headers,
    });
    const parts: Buffer[] = [];
    for (let offset = 0; offset < body.length; offset += 65_536) parts.push(body.subarray(offset, offset + 65_536));
    return rawRequest(f.davUrl, head, chunked(parts, terminate));
  }

  it('1) OPTIONS / answers 200 with DAV class 2 (read-write mount)', async () => {
    const answer = await finder('OPTIONS', '/', {}, undefined, true);
    expect(answer.status).toBe(200);
    expect(String(answer.headers.dav).split(',').map((s) => s.trim())).toContain('2');
  });

  it('2) PROPFIND / Depth 0 with the stat properties', async () => {
    const answer = await finder('PROPFIND', '/', { depth: '0', 'content-type': 'text/xml' }, STAT_PROPS);
    expect(answer.status).toBe(207);
    const xml = answer.body.toString();
    expect(xml).toContain('<D:href>/</D:href>');
    expect(xml).toContain('<D:collection/>');
    expect(xml).toMatch(/<D:getlastmodified>[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT<\/D:getlastmodified>/);
  });

  it('3) PROPFIND / Depth 0 with the quota properties', async () => {
    const answer = await finder('PROPFIND', '/', { depth: '0', 'content-type': 'text/xml' }, QUOTA_PROPS);
    expect(answer.status).toBe(207);
    const xml = answer.body.toString();
    // The old Apple names are unknown: a 404 propstat, not an error.
    expect(xml).toContain('404');
    if (xml.includes('<D:quota-available-bytes>')) expect(xml).toMatch(/<D:quota-available-bytes>\d+<\/D:quota-available-bytes>/);
  });

  it('4) answers the probe storm (._*, .DS_Store, .metadata_never_index, Backups.backupdb) with 404 or a virtual file', async () => {
    for (const path of ['/._.', '/.DS_Store', '/.metadata_never_index', '/Backups.backupdb', '/home/._.', '/home/dir/.DS_Store', '/home/dir/._existing.txt', '/mach_kernel']) {
      const answer = await finder('PROPFIND', path, { depth: '0', 'content-type': 'text/xml' }, STAT_PROPS);
      expect([207, 404], `${path} answered ${answer.status}`).toContain(answer.status);
    }
  });

  it('5) PROPFIND /home/dir/ Depth 1 with A:appledoubleheader lists every entry with exact sizes', async () => {
    const answer = await finder('PROPFIND', '/home/dir/', { depth: '1', 'content-type': 'text/xml' }, LISTING_PROPS);
    expect(answer.status).toBe(207);
    const xml = answer.body.toString();
    expect(xml).toContain('<D:href>/home/dir/</D:href>');
    expect(xml).toContain('<D:href>/home/dir/existing.txt</D:href>');
    expect(xml).toContain('<D:getcontentlength>12</D:getcontentlength>');
    expect(xml).toContain('appledoubleheader');
  });

  it('6a) PROPFIND of the new file answers 404', async () => {
    const answer = await finder('PROPFIND', '/home/dir/new.bin', { depth: '0', 'content-type': 'text/xml' }, STAT_PROPS);
    expect(answer.status).toBe(404);
  });

  it('6b) LOCK of the unmapped URL (exclusive, Depth 0, Second-600) creates it: 201 with the token in the body', async () => {
    const answer = await finder('LOCK', '/home/dir/new.bin', { depth: '0', timeout: 'Second-600', 'content-type': 'text/xml; charset="utf-8"' }, FINDER_LOCK);
    expect(answer.status).toBe(201);
    const xml = answer.body.toString();
    const match = /<D:locktoken><D:href>(opaquelocktoken:[^<]+)<\/D:href><\/D:locktoken>/.exec(xml);
    expect(match).not.toBeNull();
    token = (match as RegExpExecArray)[1] as string;
    expect(answer.headers['lock-token']).toBe(`<${token}>`);
    expect(xml).toContain('<D:timeout>Second-600</D:timeout>');
    expect(xml).toContain('<D:href>http://www.apple.com/webdav_fs/</D:href>');
  });

  it('6c) PUT chunked with X-Expected-Entity-Length and If: (<token>), ending with the 0-chunk', async () => {
    expect(token).not.toBe('');
    const answer = await chunkedPut('/home/dir/new.bin', content, { 'X-Expected-Entity-Length': String(N), If: `(<${token}>)`, 'Content-Type': 'application/octet-stream' }, true);
    expect([201, 204]).toContain(answer.status);
    const stored = (await f.client.listFolder(session, nodeId(dirId))).find((e) => e.name === 'new.bin');
    expect(stored?.sizeBytes).toBe(N);
  });

  it('6d) PUT chunked with X-Expected-Entity-Length and no final 0-chunk still finishes after N bytes', async () => {
    const second = fileBytes(N, 2);
    const answer = await chunkedPut('/home/dir/new.bin', second, { 'X-Expected-Entity-Length': String(N), If: `(<${token}>)` }, false);
    expect([201, 204]).toContain(answer.status);
    const file = await f.client.download(session, (await f.client.listFolder(session, nodeId(dirId))).find((e) => e.name === 'new.bin')?.id ?? nodeId(''), 'new.bin');
    const chunks: Buffer[] = [];
    for await (const chunk of file.body) chunks.push(Buffer.from(chunk as Buffer));
    expect(Buffer.concat(chunks).equals(second)).toBe(true);
    content.set(second);
  });

  it('6e) PUT of the AppleDouble companion ._new.bin (4096 bytes) is accepted', async () => {
    const appleDouble = fileBytes(4096, 3);
    const answer = await finder('PUT', '/home/dir/._new.bin', { 'content-type': 'application/octet-stream' }, appleDouble);
    expect([201, 204]).toContain(answer.status);
    const back = await finder('GET', '/home/dir/._new.bin');
    expect(back.status).toBe(200);
    expect(back.body.equals(appleDouble)).toBe(true);
  });

  it('6f) PROPFIND of the new file shows its exact size', async () => {
    const answer = await finder('PROPFIND', '/home/dir/new.bin', { depth: '0', 'content-type': 'text/xml' }, STAT_PROPS);
    expect(answer.status).toBe(207);
    expect(answer.body.toString()).toContain(`<D:getcontentlength>${N}</D:getcontentlength>`);
  });

  it('6g) UNLOCK with the bracketed token answers 204, after which writes need no token', async () => {
    const answer = await finder('UNLOCK', '/home/dir/new.bin', { 'lock-token': `<${token}>` });
    expect(answer.status).toBe(204);
    const relock = await finder('LOCK', '/home/dir/new.bin', { depth: '0', timeout: 'Second-600' }, FINDER_LOCK);
    expect(relock.status).toBe(200);
    const again = /<D:locktoken><D:href>([^<]+)<\/D:href>/.exec(relock.body.toString())?.[1] ?? '';
    expect((await finder('UNLOCK', '/home/dir/new.bin', { 'lock-token': `<${again}>` })).status).toBe(204);
  });

  it('6h) ranged GETs of the first 64 KiB and the last 10 bytes are exact 206 answers', async () => {
    const head = await finder('GET', '/home/dir/new.bin', { range: 'bytes=0-65535' });
    expect(head.status).toBe(206);
    expect(head.headers['content-range']).toBe(`bytes 0-65535/${N}`);
    expect(head.body.equals(content.subarray(0, 65_536))).toBe(true);
    const tail = await finder('GET', '/home/dir/new.bin', { range: `bytes=${N - 10}-${N - 1}` });
    expect(tail.status).toBe(206);
    expect(tail.headers['content-range']).toBe(`bytes ${N - 10}-${N - 1}/${N}`);
    expect(tail.body.equals(content.subarray(N - 10))).toBe(true);
  });

  it('7) an NFD request finds the NFC file and the listing answers this user agent in NFD', async () => {
    const nfd = '/home/dir/cafe%CC%81.txt';
    const answer = await finder('GET', nfd);
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('NFC name');
    const listing = await finder('PROPFIND', '/home/dir/', { depth: '1', 'content-type': 'text/xml' }, STAT_PROPS);
    const xml = listing.body.toString();
    expect(xml).toContain('/home/dir/cafe%CC%81.txt</D:href>');
    expect(xml).not.toContain('caf%C3%A9.txt');
  });
});
