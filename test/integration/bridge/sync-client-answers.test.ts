/**
 * What the Nextcloud and ownCloud sync clients read from the answers to their writes (issue 30,
 * items 3 and 7), against a real store and bridge: ETag, OC-ETag and OC-FileId on PUT, MKCOL,
 * MOVE, COPY and the chunked MOVE; client mtimes kept only when sane (`X-OC-Mtime: accepted`);
 * 412 for a stale ETag in If-Match or If on every form the desktop client sends (PUT, the v2
 * chunked MOVE's tagged If, MOVE, COPY, DELETE), the file unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { davProp } from '../../helpers/multistatus.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

describe('answers the sync clients read', () => {
  let f: BridgeFixture;
  let alice: DavUser;

  beforeAll(async () => {
    // The proxy counts the bridge's store requests: a file's MOVE answers its headers without a listing.
    f = await bridgeFixture({ viaProxy: true, bridgeFlags: { cacheTtlMs: 60_000 } });
    alice = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, storeEntries, move, copy, ocId } = bridgeRequests(() => f, () => alice);
  const files = (): string => `/remote.php/dav/files/${encodeURIComponent(alice.email)}`;
  const uploads = (): string => `/remote.php/dav/uploads/${encodeURIComponent(alice.email)}`;

  async function idOf(name: string, folder = 'home'): Promise<string> {
    const entry = (await storeEntries(folder)).find((e) => e.name === name);
    if (!entry) throw new Error(`${name} is not in ${folder}`);
    return entry.id;
  }

  /** The node's oc:id as PROPFIND answers it, after checking the store lists it. */
  async function ocIdOf(name: string, folder = 'home'): Promise<string> {
    await idOf(name, folder);
    return ocId(`${files()}/${folder}/${encodeURIComponent(name)}`);
  }

  /** The getetag PROPFIND answers for a path: what the answer headers must agree with. */
  async function propfindEtag(path: string): Promise<string> {
    const [stat] = multistatusOf(await dav('PROPFIND', path, { depth: '0' }));
    return davProp(stat!, 'getetag').text;
  }

  async function expectNamed(answer: { headers: Record<string, unknown> }, path: string, name: string, folder = 'home'): Promise<void> {
    expect(answer.headers.etag).toMatch(/^".+"$/);
    expect(answer.headers['oc-etag']).toBe(answer.headers.etag);
    expect(answer.headers['oc-fileid']).toBe(await ocIdOf(name, folder));
    expect(answer.headers.etag).toBe(await propfindEtag(path));
  }

  /** A v2 chunked upload of `content` to home/<name>, its MOVE sent with `headers`. */
  async function chunkedUpload(id: string, name: string, content: string, headers: Record<string, string> = {}): Promise<Awaited<ReturnType<typeof dav>>> {
    const destination = `${f.davUrl}${files()}/home/${name}`;
    expect((await dav('MKCOL', `${uploads()}/${id}/`, { destination })).status).toBe(201);
    expect((await dav('PUT', `${uploads()}/${id}/00001`, { destination, 'content-length': String(Buffer.byteLength(content)) }, content)).status).toBe(201);
    return dav('MOVE', `${uploads()}/${id}/.file`, { destination, ...headers });
  }

  describe('ETag, OC-ETag and OC-FileId on every verb that makes or changes a node', () => {
    it('PUT: the new file and its next revision', async () => {
      const created = await dav('PUT', `${files()}/home/h-put.txt`, {}, 'one');
      expect(created.status).toBe(201);
      await expectNamed(created, `${files()}/home/h-put.txt`, 'h-put.txt');
      const replaced = await dav('PUT', `${files()}/home/h-put.txt`, {}, 'two');
      expect(replaced.status).toBe(204);
      await expectNamed(replaced, `${files()}/home/h-put.txt`, 'h-put.txt');
      expect(replaced.headers.etag).not.toBe(created.headers.etag);
    });

    it('MKCOL: the new folder', async () => {
      const made = await dav('MKCOL', `${files()}/home/h-folder`);
      expect(made.status).toBe(201);
      await expectNamed(made, `${files()}/home/h-folder`, 'h-folder');
    });

    it('MOVE: the moved node keeps its id; onto an existing file, that file’s id and new ETag', async () => {
      await dav('PUT', `${files()}/home/h-move.txt`, {}, 'moving');
      const id = await ocIdOf('h-move.txt');
      f.proxy?.reset();
      const moved = await move(`${files()}/home/h-move.txt`, `${files()}/home/h-moved.txt`);
      expect(moved.status).toBe(201);
      // A file keeps its id and revision when it moves: its headers cost no listing of the destination.
      expect(f.proxy?.matching('GET', /\/dirlist$/) ?? []).toEqual([]);
      await expectNamed(moved, `${files()}/home/h-moved.txt`, 'h-moved.txt');
      expect(moved.headers['oc-fileid']).toBe(id);

      await dav('PUT', `${files()}/home/h-over.txt`, {}, 'to be revised');
      const over = await move(`${files()}/home/h-moved.txt`, `${files()}/home/h-over.txt`);
      expect(over.status).toBe(204);
      await expectNamed(over, `${files()}/home/h-over.txt`, 'h-over.txt');
    });

    it('COPY: the copy’s own id, a file and a folder', async () => {
      await dav('PUT', `${files()}/home/h-copy.txt`, {}, 'copied');
      const copied = await copy(`${files()}/home/h-copy.txt`, `${files()}/home/h-copy-2.txt`);
      expect(copied.status).toBe(201);
      await expectNamed(copied, `${files()}/home/h-copy-2.txt`, 'h-copy-2.txt');
      expect(copied.headers['oc-fileid']).not.toBe(await ocIdOf('h-copy.txt'));
      const folder = await copy(`${files()}/home/h-folder`, `${files()}/home/h-folder-2`);
      expect(folder.status).toBe(201);
      await expectNamed(folder, `${files()}/home/h-folder-2`, 'h-folder-2');
    });

    it('the chunked MOVE: the assembled file', async () => {
      const moved = await chunkedUpload('h-chunked', 'h-chunked.bin', 'assembled');
      expect(moved.status).toBe(201);
      await expectNamed(moved, `${files()}/home/h-chunked.bin`, 'h-chunked.bin');
    });
  });

  describe('client modification times', () => {
    const SANE = 1_600_000_000;
    /** Values no file's time is taken from: absent, 0, within a day of the epoch, negative, not a number, hexadecimal, far future. */
    const insane = (): Array<string | undefined> => [undefined, '0', '86400', '-1', '-1600000000', 'yesterday', '0x5f5e1000', '', String(Math.floor(Date.now() / 1000) + 2 * 86400), '99999999999'];

    it('PUT keeps a sane X-OC-Mtime (accepted) and never an absent, zero, negative, non-numeric or far-future one', async () => {
      const sane = await dav('PUT', `${files()}/home/t-put.txt`, { 'x-oc-mtime': String(SANE) }, 'dated');
      expect(sane.headers['x-oc-mtime']).toBe('accepted');
      const id = await idOf('t-put.txt');
      expect(await f.bridge.services.props.getMtime(id)).toBe(SANE * 1000);
      for (const value of insane()) {
        const before = Date.now();
        const put = await dav('PUT', `${files()}/home/t-put.txt`, value === undefined ? {} : { 'x-oc-mtime': value }, `content for ${value}`);
        expect(put.status, String(value)).toBe(204);
        expect(put.headers['x-oc-mtime'], String(value)).toBeUndefined();
        // The store's own time: the write's, not the client's (and a kept one is forgotten).
        expect(await f.bridge.services.props.getMtime(id), String(value)).toBeUndefined();
        const shown = new Date(davProp(multistatusOf(await dav('PROPFIND', `${files()}/home/t-put.txt`, { depth: '0' }))[0]!, 'getlastmodified').text).getTime();
        expect(shown, String(value)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 2000);
        expect(shown, String(value)).toBeLessThanOrEqual(Date.now() + 1000);
        // Put the sane time back, so the next value must also forget it.
        await dav('PUT', `${files()}/home/t-put.txt`, { 'x-oc-mtime': String(SANE) }, 'dated');
      }
    });

    it('a time within the next day (a client clock a little ahead) is kept', async () => {
      const soon = Math.floor(Date.now() / 1000) + 3600;
      const put = await dav('PUT', `${files()}/home/t-soon.txt`, { 'x-oc-mtime': String(soon) }, 'soon');
      expect(put.headers['x-oc-mtime']).toBe('accepted');
      expect(await f.bridge.services.props.getMtime(await idOf('t-soon.txt'))).toBe(soon * 1000);
    });

    it('the chunked MOVE keeps a sane one and never a far-future or zero one', async () => {
      const sane = await chunkedUpload('t-chunk-sane', 't-chunk.bin', 'sane', { 'x-oc-mtime': String(SANE) });
      expect(sane.status).toBe(201);
      expect(sane.headers['x-oc-mtime']).toBe('accepted');
      const id = await idOf('t-chunk.bin');
      expect(await f.bridge.services.props.getMtime(id)).toBe(SANE * 1000);
      for (const [i, value] of ['0', '99999999999', 'nope'].entries()) {
        const moved = await chunkedUpload(`t-chunk-${i}`, 't-chunk.bin', `insane ${value}`, { 'x-oc-mtime': value });
        expect(moved.status, value).toBe(204);
        expect(moved.headers['x-oc-mtime'], value).toBeUndefined();
        expect(await f.bridge.services.props.getMtime(id), value).toBeUndefined();
      }
    });

    it('MOVE and COPY keep a sane one and never a zero or far-future one', async () => {
      await dav('PUT', `${files()}/home/t-move.txt`, {}, 'moved');
      const bad = await move(`${files()}/home/t-move.txt`, `${files()}/home/t-move-2.txt`, { 'x-oc-mtime': '0' });
      expect(bad.status).toBe(201);
      expect(bad.headers['x-oc-mtime']).toBeUndefined();
      expect(await f.bridge.services.props.getMtime(await idOf('t-move-2.txt'))).toBeUndefined();
      const far = await copy(`${files()}/home/t-move-2.txt`, `${files()}/home/t-copy.txt`, { 'x-oc-mtime': '99999999999' });
      expect(far.status).toBe(201);
      expect(far.headers['x-oc-mtime']).toBeUndefined();
      expect(await f.bridge.services.props.getMtime(await idOf('t-copy.txt'))).toBeUndefined();
      const good = await move(`${files()}/home/t-move-2.txt`, `${files()}/home/t-move-3.txt`, { 'x-oc-mtime': String(SANE) });
      expect(good.headers['x-oc-mtime']).toBe('accepted');
      expect(await f.bridge.services.props.getMtime(await idOf('t-move-3.txt'))).toBe(SANE * 1000);
    });
  });

  describe('conflicts: a stale ETag answers 412 and changes nothing', () => {
    async function content(name: string): Promise<string> {
      return (await dav('GET', `${files()}/home/${name}`)).text;
    }

    it('PUT with If-Match (what the desktop client sends for an existing file): stale 412, gone 412, current 204', async () => {
      const first = await dav('PUT', `${files()}/home/c-put.txt`, {}, 'server edit 1');
      const stale = String(first.headers.etag);
      await dav('PUT', `${files()}/home/c-put.txt`, {}, 'server edit 2');
      const refused = await dav('PUT', `${files()}/home/c-put.txt`, { 'if-match': stale, 'x-oc-mtime': String(1_600_000_000) }, 'client edit');
      expect(refused.status).toBe(412);
      expect(await content('c-put.txt')).toBe('server edit 2');

      await dav('PUT', `${files()}/home/c-gone.txt`, {}, 'soon gone');
      const gone = String((await dav('HEAD', `${files()}/home/c-gone.txt`)).headers.etag);
      expect((await dav('DELETE', `${files()}/home/c-gone.txt`)).status).toBe(204);
      expect((await dav('PUT', `${files()}/home/c-gone.txt`, { 'if-match': gone }, 'client edit')).status).toBe(412);
      expect((await storeEntries()).map((e) => e.name)).not.toContain('c-gone.txt');

      const current = String((await dav('HEAD', `${files()}/home/c-put.txt`)).headers.etag);
      expect((await dav('PUT', `${files()}/home/c-put.txt`, { 'if-match': current }, 'client edit')).status).toBe(204);
    });

    it('the v2 chunked MOVE with If: <destination> (["etag"]) (If-Match turned into a tagged If): stale 412, gone 412, the upload kept', async () => {
      const first = await dav('PUT', `${files()}/home/c-chunk.bin`, {}, 'server 1');
      const stale = String(first.headers.etag);
      await dav('PUT', `${files()}/home/c-chunk.bin`, {}, 'server 2');
      // The client percent-encodes the destination's path (QUrl::toPercentEncoding(destination, "/")): files() is so encoded.
      const tagged = (etag: string, name: string): string => `<${files()}/home/${encodeURIComponent(name)}> ([${etag}])`;
      const refused = await chunkedUpload('c-chunk', 'c-chunk.bin', 'client', { if: tagged(stale, 'c-chunk.bin') });
      expect(refused.status).toBe(412);
      expect(await content('c-chunk.bin')).toBe('server 2');
      const current = String((await dav('HEAD', `${files()}/home/c-chunk.bin`)).headers.etag);
      const retried = await dav('MOVE', `${uploads()}/c-chunk/.file`, { destination: `${f.davUrl}${files()}/home/c-chunk.bin`, if: tagged(current, 'c-chunk.bin') });
      expect(retried.status).toBe(204);
      expect(await content('c-chunk.bin')).toBe('client');

      await dav('PUT', `${files()}/home/c-chunk-gone.bin`, {}, 'gone soon');
      const gone = String((await dav('HEAD', `${files()}/home/c-chunk-gone.bin`)).headers.etag);
      await dav('DELETE', `${files()}/home/c-chunk-gone.bin`);
      const onGone = await chunkedUpload('c-chunk-gone', 'c-chunk-gone.bin', 'client', { if: tagged(gone, 'c-chunk-gone.bin') });
      expect(onGone.status).toBe(412);
      expect((await storeEntries()).map((e) => e.name)).not.toContain('c-chunk-gone.bin');
    });

    it('MOVE, COPY and DELETE with a stale If-Match or If: 412, nothing moved, copied or deleted', async () => {
      const first = await dav('PUT', `${files()}/home/c-verb.txt`, {}, 'one');
      const stale = String(first.headers.etag);
      await dav('PUT', `${files()}/home/c-verb.txt`, {}, 'two');
      const source = `${files()}/home/c-verb.txt`;
      const forms: Array<Record<string, string>> = [{ 'if-match': stale }, { if: `([${stale}])` }, { if: `<${source}> ([${stale}])` }];
      for (const conditions of forms) {
        const label = JSON.stringify(conditions);
        expect((await move(source, `${files()}/home/c-verb-moved.txt`, conditions)).status, label).toBe(412);
        expect((await copy(source, `${files()}/home/c-verb-copied.txt`, conditions)).status, label).toBe(412);
        expect((await dav('DELETE', source, conditions)).status, label).toBe(412);
      }
      const names = (await storeEntries()).map((e) => e.name);
      expect(names).toContain('c-verb.txt');
      expect(names).not.toContain('c-verb-moved.txt');
      expect(names).not.toContain('c-verb-copied.txt');
      expect(await content('c-verb.txt')).toBe('two');
    });
  });
});
