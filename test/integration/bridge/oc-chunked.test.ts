/**
 * ownCloud's legacy chunked upload, `OC-Chunked: 1` (bridge/uploads/oc-chunked.ts), against a real
 * store and bridge, as the Nextcloud and ownCloud desktop clients send it when the capabilities
 * do not announce `dav.chunking` (propagateuploadv1.cpp): PUT `<name>-chunking-<transfer>-<count>-<index>`
 * with OC-Chunked, OC-Total-Length, OC-Chunk-Size, X-OC-Mtime and If-Match on every chunk, the
 * chunks before the last in parallel, the last alone with OC-Checksum; an ETag only in the answer
 * that completes the file. Never a file under a chunk's name; refusals; two transfers apart; expiry.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, type DavAnswer } from '../../helpers/dav-requests.js';
import { partSessions } from '../../helpers/upload-parts.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { patternBytes, readAll } from '../../helpers/stream-helpers.js';

const sha1 = (bytes: Buffer): string => createHash('sha1').update(bytes).digest('hex');

describe('legacy chunked upload (OC-Chunked: 1)', () => {
  let f: BridgeFixture;
  let alice: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 3600 } });
    alice = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, storeEntries, lock, ocId } = bridgeRequests(() => f, () => alice);
  const files = (who: DavUser = alice): string => `/remote.php/dav/files/${encodeURIComponent(who.email)}`;

  async function storedBytes(name: string, who: DavUser = alice): Promise<Buffer> {
    const entry = (await storeEntries('home', who)).find((e) => e.name === name);
    if (!entry) throw new Error(`${name} is not in home`);
    return readAll((await f.client.download(who.session, entry.id, entry.name)).body);
  }

  const homeNames = async (who: DavUser = alice): Promise<string[]> => (await storeEntries('home', who)).map((e) => e.name);

  interface Transfer {
    /** The folder URL the file goes into (no trailing slash). */
    folder: string;
    name: string;
    content: Buffer;
    chunkBytes: number;
    transfer: number;
    mtime?: number;
    ifMatch?: string;
    checksum?: string;
    who?: DavUser;
  }

  const countOf = (t: Transfer): number => Math.ceil(t.content.length / t.chunkBytes);

  /** Chunk `index` of a transfer, with the headers the desktop client sends (PropagateUploadFileV1::startNextChunk). */
  function sendChunk(t: Transfer, index: number, extra: Record<string, string> = {}): Promise<DavAnswer> {
    const count = countOf(t);
    const bytes = t.content.subarray(index * t.chunkBytes, (index + 1) * t.chunkBytes);
    const last = index === count - 1;
    return dav('PUT', `${t.folder}/${encodeURIComponent(`${t.name}-chunking-${t.transfer}-${count}-${index}`)}`, {
      'content-type': 'application/octet-stream',
      'content-length': String(bytes.length),
      'oc-chunked': '1',
      'oc-total-length': String(t.content.length),
      'oc-chunk-size': String(t.chunkBytes),
      'x-oc-mtime': String(t.mtime ?? 1_650_000_000),
      ...(t.ifMatch ? { 'if-match': t.ifMatch } : {}),
      ...(last ? { 'oc-checksum': t.checksum ?? `SHA1:${sha1(t.content)}` } : {}),
      ...extra,
    }, bytes, t.who);
  }

  /** The whole sequence: every chunk but the last at once, then the last alone; every answer but the last carries no ETag. */
  async function upload(t: Transfer): Promise<DavAnswer> {
    const count = countOf(t);
    const early = await Promise.all(Array.from({ length: count - 1 }, (_, i) => sendChunk(t, i)));
    for (const answer of early) {
      expect(answer.status, answer.text).toBe(201);
      expect(answer.headers.etag).toBeUndefined();
      expect(answer.headers['oc-etag']).toBeUndefined();
    }
    return sendChunk(t, count - 1);
  }

  it('assembles the file when its last chunk arrives: 201 with ETag, OC-ETag, OC-FileId and X-OC-Mtime; no file under a chunk name; the upload gone', async () => {
    const content = patternBytes(3, 3 * 65536 + 1234);
    const done = await upload({ folder: `${files()}/home`, name: 'big30.bin', content, chunkBytes: 65536, transfer: 3_141_592_653, mtime: 1_650_000_000 });
    expect(done.status, done.text).toBe(201);
    const entry = (await storeEntries()).find((e) => e.name === 'big30.bin');
    expect(done.headers['oc-fileid']).toBe(await ocId(`${files()}/home/big30.bin`));
    expect(done.headers.etag).toMatch(/^".+"$/);
    expect(done.headers['oc-etag']).toBe(done.headers.etag);
    expect(done.headers['x-oc-mtime']).toBe('accepted');
    expect((await dav('HEAD', `${files()}/home/big30.bin`)).headers.etag).toBe(done.headers.etag);
    expect(sha1(await storedBytes('big30.bin'))).toBe(sha1(content));
    expect(await f.bridge.services.props.getMtime(entry!.id)).toBe(1_650_000_000_000);
    expect((await homeNames()).filter((n) => n.includes('-chunking-'))).toEqual([]);
    expect(await partSessions(f)).toEqual([]);
    // Not a folder of the Nextcloud uploads space either.
    const space = await dav('PROPFIND', `/remote.php/dav/uploads/${encodeURIComponent(alice.email)}/`, { depth: '1' });
    expect(space.text).not.toContain('oc-chunked');
  });

  it('writes a new revision with If-Match of the current ETag (204), on the drive’s own paths too', async () => {
    const first = await upload({ folder: '/home', name: 'revised.bin', content: patternBytes(1, 5000), chunkBytes: 2000, transfer: 11 });
    expect(first.status).toBe(201);
    const second = patternBytes(2, 4500);
    const again = await upload({ folder: '/home', name: 'revised.bin', content: second, chunkBytes: 2000, transfer: 12, ifMatch: String(first.headers.etag) });
    expect(again.status, again.text).toBe(204);
    expect(again.headers['oc-fileid']).toBe(first.headers['oc-fileid']);
    expect(again.headers.etag).not.toBe(first.headers.etag);
    expect(sha1(await storedBytes('revised.bin'))).toBe(sha1(second));
    const entry = (await storeEntries()).find((e) => e.name === 'revised.bin');
    expect(entry?.revision).toBe(2);
  });

  it('refuses a chunk name it cannot read, a count out of range and an index past the count with 400, keeping nothing', async () => {
    const put = (name: string): Promise<DavAnswer> => dav('PUT', `${files()}/home/${encodeURIComponent(name)}`, { 'oc-chunked': '1', 'content-length': '3' }, 'abc');
    for (const name of ['plain.bin', 'x.bin-chunking-1-2', 'x.bin-chunking-a-2-0', 'x.bin-chunking-1-2-0-extra', '-chunking-1-2-0', 'x.bin-chunking-1-0-0', 'x.bin-chunking-1-10001-0', 'x.bin-chunking-1-2-2', 'x.bin-chunking-1-2-7']) {
      const answer = await put(name);
      expect(answer.status, name).toBe(400);
      expect(answer.text, name).toMatch(/chunk/);
    }
    expect(await homeNames()).not.toContain('plain.bin');
    expect((await homeNames()).filter((n) => n.startsWith('x.bin'))).toEqual([]);
    expect(await partSessions(f)).toEqual([]);
  });

  it('refuses a chunk whose count differs from its transfer’s earlier chunks (400), and one without a Content-Length (411)', async () => {
    const t: Transfer = { folder: `${files()}/home`, name: 'counted.bin', content: patternBytes(5, 3000), chunkBytes: 1000, transfer: 77 };
    expect((await sendChunk(t, 0)).status).toBe(201);
    const other = await dav('PUT', `${files()}/home/counted.bin-chunking-77-4-1`, { 'oc-chunked': '1', 'content-length': '3' }, 'abc');
    expect(other.status).toBe(400);
    expect(other.text).toContain('3 chunks, not 4');
    // A stream of unknown length goes chunked, without a Content-Length.
    const chunked = await dav('PUT', `${files()}/home/counted.bin-chunking-77-3-1`, { 'oc-chunked': '1' }, Readable.from([Buffer.from('abc')]));
    expect(chunked.status).toBe(411);
    expect((await sendChunk(t, 1)).status).toBe(201);
    const done = await sendChunk(t, 2);
    expect(done.status).toBe(201);
    expect(sha1(await storedBytes('counted.bin'))).toBe(sha1(t.content));
  });

  it('keeps two transfers to one file apart, and one transfer id of two files apart', async () => {
    const a: Transfer = { folder: `${files()}/home`, name: 'twice.bin', content: patternBytes(10, 3000), chunkBytes: 1500, transfer: 500 };
    const b: Transfer = { ...a, content: patternBytes(11, 3000), transfer: 501 };
    const c: Transfer = { ...a, name: 'other.bin', content: patternBytes(12, 3000) };
    expect((await sendChunk(a, 0)).status).toBe(201);
    expect((await sendChunk(b, 0)).status).toBe(201);
    expect((await sendChunk(c, 0)).status).toBe(201);
    const bDone = await sendChunk(b, 1);
    expect(bDone.status).toBe(201);
    expect(sha1(await storedBytes('twice.bin'))).toBe(sha1(b.content));
    const aDone = await sendChunk(a, 1);
    expect(aDone.status).toBe(204);
    expect(sha1(await storedBytes('twice.bin'))).toBe(sha1(a.content));
    expect((await sendChunk(c, 1)).status).toBe(201);
    expect(sha1(await storedBytes('other.bin'))).toBe(sha1(c.content));
    expect(await partSessions(f)).toEqual([]);
  });

  describe('conflicts: If-Match against the target', () => {
    it('a stale ETag is 412 at the first chunk, before any byte is kept; the file unchanged', async () => {
      const first = await dav('PUT', `${files()}/home/conflict.bin`, {}, 'server 1');
      await dav('PUT', `${files()}/home/conflict.bin`, {}, 'server 2');
      const t: Transfer = { folder: `${files()}/home`, name: 'conflict.bin', content: patternBytes(20, 3000), chunkBytes: 1000, transfer: 900, ifMatch: String(first.headers.etag) };
      expect((await sendChunk(t, 0)).status).toBe(412);
      expect(await partSessions(f)).toEqual([]);
      expect((await storedBytes('conflict.bin')).toString()).toBe('server 2');
    });

    it('a change during the upload is 412 at the last chunk, the file unchanged; the last chunk again with the new ETag assembles', async () => {
      const first = await dav('PUT', `${files()}/home/midway.bin`, {}, 'server 1');
      const t: Transfer = { folder: `${files()}/home`, name: 'midway.bin', content: patternBytes(21, 3000), chunkBytes: 1000, transfer: 901, ifMatch: String(first.headers.etag) };
      expect((await sendChunk(t, 0)).status).toBe(201);
      expect((await sendChunk(t, 1)).status).toBe(201);
      const edit = await dav('PUT', `${files()}/home/midway.bin`, {}, 'server edit meanwhile');
      expect((await sendChunk(t, 2)).status).toBe(412);
      expect((await storedBytes('midway.bin')).toString()).toBe('server edit meanwhile');
      const retried = await sendChunk({ ...t, ifMatch: String(edit.headers.etag) }, 2);
      expect(retried.status, retried.text).toBe(204);
      expect(sha1(await storedBytes('midway.bin'))).toBe(sha1(t.content));
    });

    it('If-Match naming a file that is gone is 412; a lock without its token is 423', async () => {
      const put = await dav('PUT', `${files()}/home/gone.bin`, {}, 'soon gone');
      await dav('DELETE', `${files()}/home/gone.bin`);
      const t: Transfer = { folder: `${files()}/home`, name: 'gone.bin', content: patternBytes(22, 2000), chunkBytes: 1000, transfer: 902, ifMatch: String(put.headers.etag) };
      expect((await sendChunk(t, 0)).status).toBe(412);
      expect(await homeNames()).not.toContain('gone.bin');

      await dav('PUT', `${files()}/home/locked.bin`, {}, 'locked');
      const token = await lock(`${files()}/home/locked.bin`);
      const l: Transfer = { folder: `${files()}/home`, name: 'locked.bin', content: patternBytes(23, 2000), chunkBytes: 1000, transfer: 903 };
      expect((await sendChunk(l, 0)).status).toBe(423);
      expect((await sendChunk(l, 0, { if: `(<${token}>)` })).status).toBe(201);
      expect((await sendChunk(l, 1, { if: `(<${token}>)` })).status).toBe(204);
      expect(sha1(await storedBytes('locked.bin'))).toBe(sha1(l.content));
    });
  });

  it('refuses an OC-Checksum the assembled bytes contradict (400), nothing written; the last chunk again with the right one assembles', async () => {
    const t: Transfer = { folder: `${files()}/home`, name: 'summed.bin', content: patternBytes(30, 2500), chunkBytes: 1000, transfer: 42, checksum: `SHA1:${'0'.repeat(40)}` };
    const refused = await upload(t);
    expect(refused.status).toBe(400);
    expect(await homeNames()).not.toContain('summed.bin');
    const done = await sendChunk({ ...t, checksum: `SHA1:${sha1(t.content)}` }, 2);
    expect(done.status, done.text).toBe(201);
    expect(sha1(await storedBytes('summed.bin'))).toBe(sha1(t.content));
  });

  it('holds the upload to the quota: an OC-Total-Length past it is 507 at the first chunk, nothing kept', async () => {
    const small = await f.newDavUser({ quotaBytes: 10_000 });
    const t: Transfer = { folder: `${files(small)}/home`, name: 'huge.bin', content: patternBytes(40, 12_000), chunkBytes: 4000, transfer: 5, who: small };
    expect((await sendChunk(t, 0)).status).toBe(507);
    expect(await partSessions(f)).toEqual([]);
    expect(await homeNames(small)).toEqual([]);
  });

  it('refuses a target where no file can go as a PUT would: a folder there 405, no folder 409, the root 403', async () => {
    await dav('MKCOL', `${files()}/home/a-folder`);
    const chunk = (path: string): Promise<DavAnswer> => dav('PUT', `${path}-chunking-1-2-0`, { 'oc-chunked': '1', 'content-length': '3' }, 'abc');
    expect((await chunk(`${files()}/home/a-folder`)).status).toBe(405);
    expect((await chunk(`${files()}/home/no-such-folder/x.bin`)).status).toBe(409);
    expect((await chunk(`${files()}/top.bin`)).status).toBe(403);
    expect(await partSessions(f)).toEqual([]);
  });
});

describe('legacy chunked upload: expiry', () => {
  let f: BridgeFixture;
  let user: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 1 } });
    user = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, storeEntries } = bridgeRequests(() => f, () => user);

  it('removes an abandoned transfer and its chunks after bridge.uploadExpirySec; its last chunk then completes nothing', async () => {
    const folder = `/remote.php/dav/files/${encodeURIComponent(user.email)}/home`;
    const put = (index: number): Promise<DavAnswer> => dav('PUT', `${folder}/left.bin-chunking-8-2-${index}`, { 'oc-chunked': '1', 'content-length': '5', 'oc-total-length': '10' }, 'hello');
    expect((await put(0)).status).toBe(201);
    expect(await partSessions(f)).toHaveLength(1);
    const deadline = Date.now() + 10_000;
    while ((await partSessions(f)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await partSessions(f)).toEqual([]);
    const late = await put(1);
    expect(late.status).toBe(201);
    expect(late.headers.etag).toBeUndefined();
    expect((await storeEntries()).map((e) => e.name)).toEqual([]);
  });
});
