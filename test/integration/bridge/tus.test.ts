/**
 * tus 1.0 (bridge/uploads/tus.ts) against a real store and bridge: the protocol's request
 * sequence as tus-js-client sends it (POST with Upload-Length and base64 Upload-Metadata, PATCH
 * with Upload-Offset and application/offset+octet-stream, HEAD to resume; the real client, killed
 * and resumed by a new process, is test/integration/faults/tus-resume.test.ts), a client cut
 * half-way through a PATCH and a new one resuming from HEAD's offset, revisions and mtime,
 * refusals (409 offset, 460 checksum, 404 another user's, 507 over quota with nothing left: no
 * session, no part on disk or in the bucket) and termination.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { USER_PASSWORD } from '../../helpers/store-fixture.js';
import { nodeId } from '../../../src/store-client/types.js';
import { partSessions } from '../../helpers/upload-parts.js';
import { MiB, patternBytes, readAll } from '../../helpers/stream-helpers.js';

const TUS = { 'tus-resumable': '1.0.0' };
const PATCH_TYPE = { 'content-type': 'application/offset+octet-stream' };
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** A tus creation POST with the Host and headers given (fetch and undici keep Host to the URL's): its status and Location. */
function createWithHost(davUrl: string, who: DavUser, host: string, extra: Record<string, string> = {}): Promise<{ status: number; location: string }> {
  const url = new URL(`${davUrl}/remote.php/dav/files/${encodeURIComponent(who.email)}/home/`);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, {
      method: 'POST',
      rejectUnauthorized: false,
      headers: { ...TUS, host, authorization: who.auth, 'upload-length': '3', 'upload-metadata': `filename ${b64('hosted.txt')}`, 'content-length': '0', ...extra },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: String(res.headers.location ?? '') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('tus 1.0', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 3600 } });
    alice = await f.newDavUser();
    bob = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, storeEntries } = bridgeRequests(() => f, () => alice);
  const files = (who: DavUser = alice): string => `/remote.php/dav/files/${encodeURIComponent(who.email)}`;

  async function stored(name: string, who: DavUser = alice): Promise<Buffer> {
    const entry = (await storeEntries('home', who)).find((e) => e.name === name);
    if (!entry) throw new Error(`${name} is not in home`);
    return readAll((await f.client.download(who.session, entry.id, entry.name)).body);
  }

  async function create(folder: string, length: number, metadata: Record<string, string>, who: DavUser = alice, extra: Record<string, string> = {}, body?: Buffer): Promise<{ status: number; location: string; headers: Record<string, unknown> }> {
    const meta = Object.entries(metadata).map(([k, v]) => `${k} ${b64(v)}`).join(',');
    const answer = await dav('POST', folder, { ...TUS, 'upload-length': String(length), 'upload-metadata': meta, ...extra }, body, who);
    return { status: answer.status, location: String(answer.headers.location ?? ''), headers: answer.headers };
  }

  const offsetOf = async (location: string, who: DavUser = alice): Promise<number> => {
    const head = await dav('HEAD', location, TUS, undefined, who);
    expect(head.status).toBe(200);
    expect(head.headers['cache-control']).toBe('no-store');
    return Number(head.headers['upload-offset']);
  };

  it('advertises tus on OPTIONS of a folder', async () => {
    const answer = await dav('OPTIONS', '/home/');
    expect(answer.headers['tus-version']).toBe('1.0.0');
    expect(answer.headers['tus-extension']).toBe('creation,creation-with-upload,termination,checksum,expiration');
    expect(Number(answer.headers['tus-max-size'])).toBeGreaterThan(0);
  });

  it('uploads in parts, survives a client cut half-way, resumes from HEAD and commits one revision with its mtime', async () => {
    const partBytes = Number(process.env.DRIVEWAY_TEST_TUS_PART_BYTES ?? MiB);
    const content = patternBytes(23, 6 * partBytes + 4321);
    const { status, location, headers } = await create(`${files()}/home/`, content.length, { filename: 'big.bin', filetype: 'application/octet-stream', mtime: '1700000000' });
    expect(status).toBe(201);
    expect(location).toMatch(new RegExp(`^${f.davUrl.replace(/[.]/g, '\\.')}/remote\\.php/dav/tus/${encodeURIComponent(alice.email).replace(/[.]/g, '\\.')}/[0-9a-f-]{36}$`));
    expect(headers['upload-expires']).toBeTruthy();
    // The first client: three parts, then a fourth cut after half its bytes (the connection dropped).
    let offset = 0;
    for (let i = 0; i < 3; i++) {
      const part = content.subarray(offset, offset + partBytes);
      const answer = await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': String(offset) }, part);
      expect(answer.status).toBe(204);
      offset += part.length;
      expect(Number(answer.headers['upload-offset'])).toBe(offset);
    }
    const cut = new AbortController();
    const half = content.subarray(offset, offset + partBytes / 2);
    const broken = fetch(location, {
      method: 'PATCH',
      headers: { authorization: alice.auth, ...TUS, ...PATCH_TYPE, 'upload-offset': String(offset), 'content-length': String(partBytes) },
      body: (async function* () {
        yield half;
        await new Promise((resolve) => setTimeout(resolve, 200));
        cut.abort();
      })(),
      duplex: 'half',
      signal: cut.signal,
    } as RequestInit);
    await expect(broken).rejects.toThrow();
    // A new client resumes from the server's offset (the cut PATCH left nothing behind).
    let resumed = 0;
    for (let i = 0; i < 50 && (resumed = await offsetOf(location)) !== offset; i++) await new Promise((r) => setTimeout(r, 50));
    expect(resumed).toBe(offset);
    while (offset < content.length) {
      const part = content.subarray(offset, offset + partBytes);
      const answer = await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': String(offset) }, part);
      expect(answer.status).toBe(204);
      offset += part.length;
      expect(Number(answer.headers['upload-offset'])).toBe(offset);
    }
    expect(sha256(await stored('big.bin'))).toBe(sha256(content));
    const entry = (await storeEntries('home')).find((e) => e.name === 'big.bin');
    expect(await f.client.listRevisions(alice.session, entry!.id)).toHaveLength(1);
    // SHA-1 and MD5 recorded as a PUT records them (on the local backend, hashed while the parts arrived: staged-parts.ts).
    expect(entry?.checksums).toEqual({ sha1: createHash('sha1').update(content).digest('hex'), md5: createHash('md5').update(content).digest('hex') });
    const prop = await dav('PROPFIND', '/home/big.bin', { depth: '0' });
    expect(prop.text).toContain(new Date(1700000000 * 1000).toUTCString());
    // The finished upload is gone.
    expect((await dav('HEAD', location, TUS)).status).toBe(404);
  });

  it('a second upload of the same name is a new revision; creation-with-upload in one POST', async () => {
    const first = Buffer.from('first content');
    const second = Buffer.from('second content, longer');
    for (const content of [first, second]) {
      const made = await create('/home/', content.length, { filename: 'twice.txt' }, alice, PATCH_TYPE, content);
      expect(made.status).toBe(201);
      expect(Number(made.headers['upload-offset'])).toBe(content.length);
    }
    expect((await stored('twice.txt')).equals(second)).toBe(true);
    const entry = (await storeEntries('home')).find((e) => e.name === 'twice.txt');
    expect(await f.client.listRevisions(alice.session, entry!.id)).toHaveLength(2);
  });

  it('refuses a PATCH at the wrong offset (409) and a body that contradicts Upload-Checksum (460)', async () => {
    const content = patternBytes(5, 3000);
    const { location } = await create('/home/', content.length, { filename: 'offsets.bin' });
    expect((await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '10' }, content.subarray(10, 20))).status).toBe(409);
    expect((await dav('PATCH', location, { ...TUS, 'content-type': 'text/plain', 'upload-offset': '0' }, content)).status).toBe(415);
    expect((await dav('PATCH', location, { 'content-type': PATCH_TYPE['content-type'], 'upload-offset': '0' }, content)).status).toBe(412);
    const wrongSum = createHash('sha1').update('other').digest('base64');
    const refused = await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '0', 'upload-checksum': `sha1 ${wrongSum}` }, content.subarray(0, 1000));
    expect(refused.status).toBe(460);
    expect(await offsetOf(location)).toBe(0);
    const rightSum = createHash('sha1').update(content.subarray(0, 1000)).digest('base64');
    expect((await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '0', 'upload-checksum': `sha1 ${rightSum}` }, content.subarray(0, 1000))).status).toBe(204);
    // tus-js-client's overridePatchMethod: POST with X-HTTP-Method-Override (a plain POST is 405).
    expect((await dav('POST', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '1000' }, content.subarray(1000, 2000))).status).toBe(405);
    expect((await dav('POST', location, { ...TUS, ...PATCH_TYPE, 'x-http-method-override': 'PATCH', 'upload-offset': '1000' }, content.subarray(1000, 2000))).status).toBe(204);
    expect((await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '2000' }, content.subarray(2000))).status).toBe(204);
    expect((await stored('offsets.bin')).equals(content)).toBe(true);
  });

  it('verifies the checksum metadata at the commit: 460, the old content kept, the upload gone', async () => {
    const content = Buffer.from('what was sent');
    const { location } = await create('/home/', content.length, { filename: 'summed.txt', checksum: `sha1 ${createHash('sha1').update('something else').digest('hex')}` });
    const answer = await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '0' }, content);
    expect(answer.status).toBe(460);
    expect((await storeEntries('home')).map((e) => e.name)).not.toContain('summed.txt');
    expect((await dav('HEAD', location, TUS)).status).toBe(404);
    const good = await create('/home/', content.length, { filename: 'summed.txt', checksum: `sha1 ${createHash('sha1').update(content).digest('base64')}` }, alice, PATCH_TYPE, content);
    expect(good.status).toBe(201);
    expect((await stored('summed.txt')).equals(content)).toBe(true);
  });

  it("another user's upload is 404 for every verb", async () => {
    const { location } = await create('/home/', 10, { filename: 'mine.txt' });
    const asBob = location.replace(encodeURIComponent(alice.email), encodeURIComponent(bob.email));
    for (const url of [location, asBob]) {
      expect((await dav('HEAD', url, TUS, undefined, bob)).status).toBe(404);
      expect((await dav('PATCH', url, { ...TUS, ...PATCH_TYPE, 'upload-offset': '0' }, Buffer.from('0123456789'), bob)).status).toBe(404);
      expect((await dav('DELETE', url, TUS, undefined, bob)).status).toBe(404);
    }
    expect(await offsetOf(location)).toBe(0);
    expect((await fetch(location, { method: 'HEAD', headers: TUS })).status).toBe(401);
  });

  it('a commit refused at the last PATCH (the quota filled meanwhile) keeps the upload; HEAD commits it once there is room', async () => {
    const small = await f.newDavUser({ quotaBytes: 2 * MiB });
    const second = await create('/home/', 1.5 * MiB, { filename: 'second.bin' }, small);
    const bytes = patternBytes(7, 1.5 * MiB);
    // Through the bridge, what the upload reserved is held: a PUT there needs room beside it (507).
    expect((await dav('PUT', '/home/first.bin', {}, bytes, small)).status).toBe(507);
    // The store's own upload (the web app's two-step door, another bridge of a foreign store)
    // knows no reservation of the bridge's: the quota fills meanwhile.
    const smallUser = await f.client.login(small.email, USER_PASSWORD);
    await f.client.upload(smallUser, { folder: nodeId('home'), name: 'first.bin' }, bytes, bytes.length);
    expect((await dav('PATCH', second.location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '0' }, bytes, small)).status).toBe(507);
    expect((await dav('HEAD', second.location, TUS, undefined, small)).status).toBe(507);
    expect((await storeEntries('home', small)).map((e) => e.name)).toEqual(['first.bin']);
    // Room again: the file removed for good through the store (a DELETE inside the trash).
    const first = (await storeEntries('home', small)).find((e) => e.name === 'first.bin');
    await f.client.remove(smallUser, nodeId(first?.id ?? ''));
    await f.client.remove(smallUser, nodeId(first?.id ?? ''));
    const head = await dav('HEAD', second.location, TUS, undefined, small);
    expect(head.status).toBe(200);
    expect(Number(head.headers['upload-offset'])).toBe(bytes.length);
    expect((await stored('second.bin', small)).equals(bytes)).toBe(true);
    expect((await dav('HEAD', second.location, TUS, undefined, small)).status).toBe(404);
  });

  it('termination: DELETE removes the upload (204), then 404', async () => {
    const { location } = await create('/home/', 100, { filename: 'dropped.txt' });
    expect((await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '0' }, Buffer.alloc(40, 1))).status).toBe(204);
    expect((await dav('DELETE', location, TUS)).status).toBe(204);
    expect((await dav('HEAD', location, TUS)).status).toBe(404);
    expect((await storeEntries('home')).map((e) => e.name)).not.toContain('dropped.txt');
  });

  it('refuses a creation over quota (507) or without a folder, recording nothing', async () => {
    const small = await f.newDavUser({ quotaBytes: 2 * MiB });
    const partsBefore = await partSessions(f);
    const over = await create('/home/', 3 * MiB, { filename: 'too-big.bin' }, small);
    expect(over.status).toBe(507);
    expect(over.location).toBe('');
    // creation-with-upload: the first part rides on the POST and is refused with it.
    const withBody = await create('/home/', 3 * MiB, { filename: 'too-big.bin' }, small, PATCH_TYPE, patternBytes(1, MiB));
    expect(withBody.status).toBe(507);
    expect(await partSessions(f)).toEqual(partsBefore);
    // The sessions every front door shares: only the space itself is listed, no session.
    const listed = await dav('PROPFIND', `/remote.php/dav/uploads/${encodeURIComponent(small.email)}/`, { depth: '1' }, undefined, small);
    expect(listed.text.match(/<d:response>/g)).toHaveLength(1);
    expect(await f.bridge.services.uploads.list(small.uuid)).toEqual([]);
    expect((await create('/home/no-such-folder/', 10, { filename: 'x.txt' })).status).toBe(404);
    expect((await create('/home/', 10, {})).status).toBe(400);
    expect((await dav('POST', '/home/', { 'upload-length': '10', 'upload-metadata': `filename ${b64('x')}` })).status).toBe(405);
    expect((await dav('POST', '/home/', { 'tus-resumable': '0.2.2', 'upload-length': '10', 'upload-metadata': `filename ${b64('x')}` })).status).toBe(412);
    expect((await storeEntries('home', small)).map((e) => e.name)).toEqual([]);
  });

  it('refuses a creation in the trash or a made-up folder (403, with Tus-Resumable), recording nothing', async () => {
    const who = await f.newDavUser();
    for (const folder of ['/trash/', '/favorites/', '/']) {
      const refused = await create(folder, 10, { filename: 'landed.txt' }, who);
      expect(refused.status, folder).toBe(403);
      expect(refused.headers['tus-resumable'], folder).toBe('1.0.0');
    }
    expect(await f.bridge.services.uploads.list(who.uuid)).toEqual([]);
  });

  it('refuses a PATCH without Content-Length once its body passes Upload-Length (413), without waiting for its end', async () => {
    const { location } = await create('/home/', MiB, { filename: 'endless.bin' });
    const url = new URL(location);
    const answer = await new Promise<number>((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'PATCH',
        rejectUnauthorized: false,
        headers: { ...TUS, ...PATCH_TYPE, 'upload-offset': '0', authorization: alice.auth, 'transfer-encoding': 'chunked' },
      }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      // Twice the upload's length and then nothing more, the request left open: before, the
      // bridge took every byte to disk and answered only at the body's end, here never.
      req.write(patternBytes(9, 2 * MiB));
      setTimeout(() => reject(new Error('no answer within 20 s')), 20_000).unref();
    });
    // A part store that needs the size first (S3) refuses such a PATCH at once (411).
    expect(answer).toBe(f.bridge.services.uploads.needsLength ? 411 : 413);
    expect(await offsetOf(location)).toBe(0);
  });

  it('builds the absolute Location from a well-formed Host only, and ignores X-Forwarded-* from a peer not trusted', async () => {
    const port = new URL(f.davUrl).port;
    expect((await createWithHost(f.davUrl, alice, `files.example.test:${port}`)).location).toMatch(new RegExp(`^${new URL(f.davUrl).protocol}//files\\.example\\.test:${port}/remote\\.php/dav/tus/`));
    // A Host whose URL would name another host (user info, a path): before, the Location pointed there.
    for (const host of [`files.example.test@elsewhere.example:${port}`, 'elsewhere.example/x?']) {
      const { status, location } = await createWithHost(f.davUrl, alice, host);
      expect(status).toBe(201);
      expect(new URL(location).hostname).not.toBe('elsewhere.example');
      expect(location).not.toContain('elsewhere');
    }
    const forwarded = await createWithHost(f.davUrl, alice, `files.example.test:${port}`, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'elsewhere.example' });
    expect(forwarded.location.startsWith(`${new URL(f.davUrl).protocol}//files.example.test:${port}/`)).toBe(true);
  });
});

describe('tus behind a TLS proxy (store.trustedProxies)', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  beforeAll(async () => {
    f = await bridgeFixture({ flags: { 'store.trustedProxies': ['127.0.0.1', '::1'] } });
    alice = await f.newDavUser();
  });
  afterAll(async () => {
    await f?.close();
  });

  it('says https in the Location when the proxy says the client came by https (before: http, and the client PATCHed its credentials in clear)', async () => {
    const { status, location } = await createWithHost(f.davUrl, alice, 'files.example.test', { 'x-forwarded-proto': 'https' });
    expect(status).toBe(201);
    expect(location).toMatch(/^https:\/\/files\.example\.test\/remote\.php\/dav\/tus\//);
  });
});
