/**
 * Checksums computed by the server (issue 22, item 1), through the bridge: PROPFIND
 * oc:checksums and ME:sha1hex (asked, allprop, propname), oc:fileid and oc:permissions,
 * OC-Checksum on GET and HEAD, and a client's OC-Checksum on PUT verified before anything is
 * recorded. The expected values come from sha1sum and md5sum, the programs clients compare with.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { requireBinary } from '../../helpers/require-binary.js';
import { MiB, patternBytes, readAll } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const PROPFIND_SUMS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:ME="ME:"><d:prop><d:getcontentlength/><oc:checksums/><ME:sha1hex/><oc:fileid/><oc:permissions/></d:prop></d:propfind>`;

describe('checksums over WebDAV', () => {
  let f: BridgeFixture;
  let user: DavUser;
  const tmp = makeTmpDir('driveway-checksums-');

  beforeAll(async () => {
    requireBinary('sha1sum');
    requireBinary('md5sum');
    f = await bridgeFixture();
    user = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
    tmp.remove();
  });

  const { dav, entryIn } = bridgeRequests(() => f, () => user);

  /** sha1sum and md5sum of `bytes`, written to a file as a client would have it. */
  function sums(bytes: Buffer): { sha1: string; md5: string } {
    const file = path.join(tmp.dir, 'content');
    writeFileSync(file, bytes);
    const first = (program: string) => execFileSync(program, [file], { encoding: 'utf8' }).split(' ')[0] as string;
    return { sha1: first('sha1sum'), md5: first('md5sum') };
  }

  const propfind = (href: string, body?: string, depth = '0') => dav('PROPFIND', href, { depth, ...(body ? { 'content-type': 'application/xml' } : {}) }, body);

  for (const [label, bytes] of [
    ['a small file held inline in the database', Buffer.from('hello checksums\n')],
    ['a 5 MiB file kept by the blob backend', patternBytes(0, 5 * MiB)],
  ] as const) {
    it(`publishes sha1sum and md5sum of ${label} in PROPFIND, GET and HEAD`, async () => {
      const name = `f-${bytes.length}.bin`;
      expect((await dav('PUT', `/home/${name}`, {}, bytes)).status).toBe(201);
      const { sha1, md5 } = sums(bytes);
      const node = await entryIn('home', name);

      const asked = await propfind(`/home/${name}`, PROPFIND_SUMS);
      expect(asked.status).toBe(207);
      expect(asked.text).toMatch(new RegExp(`<oc:checksums><oc:checksum[^>]*>SHA1:${sha1} MD5:${md5}</oc:checksum></oc:checksums>`));
      expect(asked.text).toContain(`<ME:sha1hex>${sha1}</ME:sha1hex>`);
      expect(asked.text).toContain(`<oc:fileid>${node?.fileId}</oc:fileid>`);
      expect(asked.text).toContain('<oc:permissions>RDNVW</oc:permissions>');
      expect(asked.text).toContain('xmlns:oc="http://owncloud.org/ns"');
      expect(asked.text).toContain('xmlns:ME="ME:"');

      // Depth 1 from the listing, without asking: allprop.
      const allprop = await propfind('/home/', undefined, '1');
      expect(allprop.text).toContain(`SHA1:${sha1} MD5:${md5}`);
      expect(allprop.text).toContain(`<ME:sha1hex>${sha1}</ME:sha1hex>`);

      const get = await dav('GET', `/home/${name}`);
      expect(get.headers['oc-checksum']).toBe(`SHA1:${sha1}`);
      expect(get.body.equals(bytes)).toBe(true);
      expect((await dav('HEAD', `/home/${name}`)).headers['oc-checksum']).toBe(`SHA1:${sha1}`);
    });
  }

  it('names the properties for propname, and leaves them out when not asked', async () => {
    await dav('PUT', '/home/named.txt', {}, 'named');
    const names = await propfind('/home/named.txt', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>');
    expect(names.text).toContain('<oc:checksums/>');
    expect(names.text).toContain('<ME:sha1hex/>');
    expect(names.text).toContain('<oc:fileid/>');
    expect(names.text).toContain('<oc:permissions/>');
    const plain = await propfind('/home/named.txt', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>');
    expect(plain.text).not.toContain('checksum');
    expect(plain.text).not.toContain('sha1hex');
  });

  it('refuses a PUT whose OC-Checksum contradicts its bytes with 400, keeping the old content, revision and ETag', async () => {
    const old = Buffer.from('the old content\n');
    expect((await dav('PUT', '/home/guarded.txt', {}, old)).status).toBe(201);
    const before = await entryIn('home', 'guarded.txt');
    const etag = (await dav('HEAD', '/home/guarded.txt')).headers.etag;
    const fresh = Buffer.from('the new content, same size?\n');
    const other = sums(Buffer.from('something else'));

    for (const [claim, body] of [
      [`SHA1:${other.sha1}`, fresh],
      [`MD5:${other.md5}`, fresh],
      [`SHA1:${sums(fresh).sha1} MD5:${other.md5}`, fresh],
      [`SHA1:${other.sha1}`, patternBytes(7, 3 * MiB)],
    ] as const) {
      const refused = await dav('PUT', '/home/guarded.txt', { 'oc-checksum': claim }, body);
      expect(refused.status, claim).toBe(400);
      f.bridge.services.cache.clear();
      const after = await entryIn('home', 'guarded.txt');
      expect(after?.revision).toBe(before?.revision);
      expect((await dav('HEAD', '/home/guarded.txt')).headers.etag).toBe(etag);
      expect((await dav('GET', '/home/guarded.txt')).body.equals(old)).toBe(true);
    }
    const refusedNew = await dav('PUT', '/home/never.txt', { 'oc-checksum': `SHA1:${other.sha1}` }, fresh);
    expect(refusedNew.status).toBe(400);
    expect(await entryIn('home', 'never.txt')).toBeUndefined();

    const right = sums(fresh);
    expect((await dav('PUT', '/home/guarded.txt', { 'oc-checksum': `SHA1:${right.sha1}` }, fresh)).status).toBe(204);
    expect((await dav('PUT', '/home/guarded.txt', { 'oc-checksum': `md5:${right.md5.toUpperCase()} ADLER32:00000000` }, fresh)).status).toBe(204);
    expect((await dav('PUT', '/home/checked.txt', { 'oc-checksum': `SHA1:${right.sha1} MD5:${right.md5}` }, fresh)).status).toBe(201);
    const download = await f.client.download(user.session, (await entryIn('home', 'checked.txt'))!.id, 'checked.txt');
    expect((await readAll(download.body)).equals(fresh)).toBe(true);
  });

  it('checks COPY and MOVE against the source\'s checksums: a contradiction is 400 and nothing moves', async () => {
    const bytes = Buffer.from('moved around\n');
    const { sha1, md5 } = sums(bytes);
    const wrong = sums(Buffer.from('not it')).sha1;
    await dav('PUT', '/home/src.txt', {}, bytes);
    const destination = (to: string) => `${f.davUrl}${to}`;

    expect((await dav('COPY', '/home/src.txt', { destination: destination('/home/copy.txt'), 'oc-checksum': `SHA1:${wrong}` })).status).toBe(400);
    expect((await dav('MOVE', '/home/src.txt', { destination: destination('/home/moved.txt'), 'oc-checksum': `MD5:${'0'.repeat(32)}` })).status).toBe(400);
    expect(await entryIn('home', 'copy.txt')).toBeUndefined();
    expect(await entryIn('home', 'moved.txt')).toBeUndefined();
    expect(await entryIn('home', 'src.txt')).toBeDefined();

    expect((await dav('COPY', '/home/src.txt', { destination: destination('/home/copy.txt'), 'oc-checksum': `SHA1:${sha1}` })).status).toBe(201);
    expect((await dav('MOVE', '/home/src.txt', { destination: destination('/home/moved.txt'), 'oc-checksum': `SHA1:${sha1} MD5:${md5}` })).status).toBe(201);
    // A copy shares the blob: the same checksums, published at once.
    const copied = await propfind('/home/copy.txt', PROPFIND_SUMS);
    expect(copied.text).toContain(`SHA1:${sha1} MD5:${md5}`);
  });
});
