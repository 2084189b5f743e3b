/**
 * The bridge for the web app (bridge/token-sessions.ts, bridge/cors.ts): a store session token as
 * `Authorization: Bearer` on every request, as that token's user, checked through the StoreClient
 * contract (so over the HTTP transport too: the `integration-http` project runs this file against
 * the bridge on the HTTP client); CORS for the web app's origin only. tus-js-client (npm) uploads
 * with a Bearer header into the caller's home; another user's token cannot write into that tree;
 * a bad or revoked token is 401 and never locks anyone out; an app-password session's token is
 * that session; Basic and the DAV/tus OPTIONS answers are as before.
 */
import { createHash } from 'node:crypto';
import { Upload } from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { davRequest, type DavAnswer, type DavHeaders } from '../../helpers/dav-requests.js';
import { bridgeFixture, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { MiB, patternBytes, readAll } from '../../helpers/stream-helpers.js';
import { apiCall, dataOf } from '../../helpers/user-api.js';
import { TOKEN_TTL_MS } from '../../../src/bridge/token-sessions.js';

const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const bearer = (token: string): string => `Bearer ${token}`;

describe('Bearer tokens and CORS on the bridge', () => {
  let f: BridgeFixture;
  let ada: DavUser;
  let bob: DavUser;
  /** The web app's origin: the store of this process (bridgeFixture tells the bridge where it is). */
  let appOrigin: string;

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 3600 } });
    ada = await f.newDavUser();
    bob = await f.newDavUser();
    appOrigin = new URL(f.store.url).origin;
  });
  afterAll(async () => {
    await f.close();
  });

  const send = (method: string, path: string, auth: string | undefined, headers: DavHeaders = {}, body?: Buffer | string): Promise<DavAnswer> =>
    davRequest(f.davUrl, method, path, { auth, headers, ...(body !== undefined ? { body } : {}) });

  async function homeNames(who: DavUser): Promise<string[]> {
    return (await f.client.listFolder(who.session, 'home' as never)).map((e) => e.name).sort();
  }

  async function storedBytes(who: DavUser, name: string): Promise<Buffer> {
    const entry = (await f.client.listFolder(who.session, 'home' as never)).find((e) => e.name === name);
    if (!entry) throw new Error(`${name} is not in home`);
    return readAll((await f.client.download(who.session, entry.id, entry.name)).body);
  }

  /** tus-js-client in this process, as the web app runs it in a browser: a Bearer header, 1 MiB parts. */
  function tusUpload(token: string, folderUrl: string, name: string, bytes: Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      const upload = new Upload(bytes, {
        endpoint: folderUrl,
        headers: { Authorization: bearer(token) },
        chunkSize: MiB,
        metadata: { filename: name, filetype: 'application/octet-stream' },
        retryDelays: [],
        onError: reject,
        onSuccess: () => resolve(upload.url ?? ''),
      });
      upload.start();
    });
  }

  it('lets tus-js-client upload with a Bearer token into the caller\'s home: one file, one revision, the right bytes', async () => {
    const content = patternBytes(7, 3 * MiB + 1234);
    const url = await tusUpload(ada.session.token, `${f.davUrl}/home/`, 'from-the-app.bin', content);
    expect(url).toMatch(new RegExp(`/remote\\.php/dav/tus/${encodeURIComponent(ada.email).replace(/[.]/g, '\\.')}/[0-9a-f-]{36}$`));
    expect(sha256(await storedBytes(ada, 'from-the-app.bin'))).toBe(sha256(content));
    const entry = (await f.client.listFolder(ada.session, 'home' as never)).find((e) => e.name === 'from-the-app.bin');
    expect(entry?.revision).toBe(1);
    expect(await homeNames(bob)).not.toContain('from-the-app.bin');
  });

  it('serves every verb as the token\'s user: PROPFIND, MKCOL, PUT, and GET (in-process; 403 through a foreign store, which gives a token no file access key)', async () => {
    const auth = bearer(ada.session.token);
    expect((await send('MKCOL', '/home/app-folder/', auth)).status).toBe(201);
    expect((await send('PUT', '/home/app-folder/note.txt', auth, {}, 'written with a token\n')).status).toBe(201);
    const listing = await send('PROPFIND', '/home/app-folder/', auth, { depth: '1' });
    expect(listing.status).toBe(207);
    expect(listing.text).toContain('note.txt');
    const get = await send('GET', '/home/app-folder/note.txt', auth);
    if (TEST_TRANSPORT === 'local') {
      expect(get.status).toBe(200);
      expect(get.text).toBe('written with a token\n');
    } else expect(get.status).toBe(403);
  });

  it('keeps another user\'s token out of the caller\'s tree: their upload URL and files space are 404, their POST lands in their own home', async () => {
    // Ada starts an upload; Bob's token can neither see, append to nor end it.
    const created = await send('POST', '/home/', bearer(ada.session.token), { ...TUS, 'upload-length': '10', 'upload-metadata': `filename ${b64('ada-only.txt')}` });
    expect(created.status).toBe(201);
    const location = String(created.headers.location);
    const bobAuth = bearer(bob.session.token);
    expect((await send('HEAD', location, bobAuth, TUS)).status).toBe(404);
    expect((await send('PATCH', location, bobAuth, { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, 'bob wrote')).status).toBe(404);
    expect((await send('DELETE', location, bobAuth, TUS)).status).toBe(404);
    expect(Number((await send('HEAD', location, bearer(ada.session.token), TUS)).headers['upload-offset'])).toBe(0);
    // Ada's drive under the Nextcloud name: not Bob's.
    const intoAda = await send('POST', `/remote.php/dav/files/${encodeURIComponent(ada.email)}/home/`, bobAuth, { ...TUS, 'upload-length': '3', 'upload-metadata': `filename ${b64('intruder.txt')}` });
    expect(intoAda.status).toBe(404);
    expect((await send('PUT', `/remote.php/dav/files/${encodeURIComponent(ada.email)}/home/intruder.txt`, bobAuth, {}, 'x')).status).toBe(404);
    // Bob's `/home/` is his own.
    await tusUpload(bob.session.token, `${f.davUrl}/home/`, 'bobs.txt', Buffer.from('bob\n'));
    expect(await homeNames(bob)).toContain('bobs.txt');
    const adaHome = await homeNames(ada);
    expect(adaHome).not.toContain('bobs.txt');
    expect(adaHome).not.toContain('intruder.txt');
    expect((await send('DELETE', location, bearer(ada.session.token), TUS)).status).toBe(204);
  });

  it('answers 401 to a token the store refuses, to a revoked one after its last use, and locks nobody out for them', async () => {
    // The last one is longer than any header the store takes: still the client's 401, not a 5xx.
    for (const token of ['not-a-token', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl', 'A'.repeat(100_000)]) {
      const refused = await send('PUT', '/home/refused.txt', bearer(token), {}, 'x');
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^Basic /);
    }
    // Many refused tokens from this address, more than bridge.loginMaxFailures (10)...
    for (let i = 0; i < 15; i++) expect((await send('PROPFIND', '/', bearer(`wrong-${i}`), { depth: '0' })).status).toBe(401);
    // ...and a user's first Basic login from it still works.
    const carol = await f.newDavUser();
    expect((await send('PROPFIND', '/', carol.auth, { depth: '0' })).status).toBe(207);
    // A token that worked, then ended (sign-out): refused at its next store call.
    const session = await f.client.login(carol.email, carol.password);
    expect((await send('PUT', '/home/before.txt', bearer(session.token), {}, 'before')).status).toBe(201);
    await f.client.logout(session);
    expect((await send('PUT', '/home/after.txt', bearer(session.token), {}, 'after')).status).toBe(401);
    expect(await homeNames(carol)).toEqual(['before.txt']);
  });

  it('stops answering a signed-out token from its caches within TOKEN_TTL_MS: a listing too, which asks the store nothing', async () => {
    const dan = await f.newDavUser();
    const session = await f.client.login(dan.email, dan.password);
    expect((await send('PUT', '/home/listed.txt', bearer(session.token), {}, 'x')).status).toBe(201);
    expect((await send('PROPFIND', '/home/', bearer(session.token), { depth: '1' })).status).toBe(207);
    await f.client.logout(session);
    await new Promise((resolve) => setTimeout(resolve, TOKEN_TTL_MS + 500));
    const listed = await send('PROPFIND', '/home/', bearer(session.token), { depth: '1' });
    expect(listed.status).toBe(401);
    expect(listed.text).not.toContain('listed.txt');
  });

  it('takes an app-password session\'s token as that session: it writes as the Basic login would, and ends with the app password', async () => {
    const made = dataOf<{ uuid: string; password: string }>(await apiCall(f.client, ada.session, 'POST', '/api/user/app_passwords', { name: 'web test' }));
    const session = await f.client.login(ada.email, made.password);
    expect((await send('PUT', '/home/by-app-password.txt', bearer(session.token), {}, 'x')).status).toBe(201);
    expect((await send('PUT', '/home/by-app-password-basic.txt', `Basic ${Buffer.from(`${ada.email}:${made.password}`).toString('base64')}`, {}, 'x')).status).toBe(201);
    expect((await apiCall(f.client, ada.session, 'DELETE', `/api/user/app_passwords/${made.uuid}`)).status).toBe(200);
    expect((await send('PUT', '/home/after-revoke.txt', bearer(session.token), {}, 'x')).status).toBe(401);
    expect(await homeNames(ada)).not.toContain('after-revoke.txt');
  });

  it('answers the web app\'s preflight with what tus and DAV need, before any authentication', async () => {
    const answer = await send('OPTIONS', '/home/', undefined, {
      origin: appOrigin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, tus-resumable, upload-length, upload-metadata',
    });
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe(appOrigin);
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    const methods = String(answer.headers['access-control-allow-methods']).split(', ');
    expect(methods).toEqual(expect.arrayContaining(['POST', 'PATCH', 'HEAD', 'DELETE', 'OPTIONS', 'GET', 'PUT', 'PROPFIND', 'MKCOL', 'MOVE', 'COPY']));
    const allowed = String(answer.headers['access-control-allow-headers']).toLowerCase().split(', ');
    expect(allowed).toEqual(
      expect.arrayContaining(['authorization', 'tus-resumable', 'upload-length', 'upload-metadata', 'upload-offset', 'upload-checksum', 'upload-concat', 'upload-defer-length', 'content-type', 'x-http-method-override', 'depth', 'destination', 'overwrite']),
    );
    expect(Number(answer.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(answer.headers.vary).toBe('Origin');
    // Not a DAV OPTIONS: none of its headers.
    expect(answer.headers.dav).toBeUndefined();
    expect(answer.headers['tus-version']).toBeUndefined();
  });

  it('refuses the preflight of any other origin, and gives its actual requests no CORS header', async () => {
    for (const origin of ['http://evil.example', 'null', `http://localhost:${new URL(f.store.url).port}`, f.davUrl]) {
      const preflight = await send('OPTIONS', '/home/', undefined, { origin, 'access-control-request-method': 'POST' });
      expect(preflight.status, origin).toBe(403);
      expect(preflight.headers['access-control-allow-origin'], origin).toBeUndefined();
      const actual = await send('PROPFIND', '/home/', bearer(ada.session.token), { origin, depth: '0' });
      expect(actual.status, origin).toBe(207);
      expect(actual.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(actual.headers['access-control-allow-credentials'], origin).toBeUndefined();
    }
  });

  it('lets the web app read every answer: its origin, the tus headers exposed, errors included', async () => {
    const created = await send('POST', '/home/', bearer(ada.session.token), { origin: appOrigin, ...TUS, 'upload-length': '5', 'upload-metadata': `filename ${b64('cors.txt')}` });
    expect(created.status).toBe(201);
    expect(created.headers['access-control-allow-origin']).toBe(appOrigin);
    expect(created.headers['access-control-allow-credentials']).toBeUndefined();
    expect(created.headers.vary).toBe('Origin');
    const exposed = String(created.headers['access-control-expose-headers']).split(', ');
    expect(exposed).toEqual(expect.arrayContaining(['Location', 'Upload-Offset', 'Upload-Length', 'Upload-Expires', 'Tus-Version', 'Tus-Resumable', 'Tus-Max-Size', 'Tus-Extension', 'ETag', 'OC-FileId']));
    const patched = await send('PATCH', String(created.headers.location), bearer(ada.session.token), { origin: appOrigin, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, 'hello');
    expect(patched.status).toBe(204);
    expect(patched.headers['access-control-allow-origin']).toBe(appOrigin);
    expect(patched.headers['upload-offset']).toBe('5');
    const refused = await send('POST', '/home/', bearer('expired-or-wrong'), { origin: appOrigin, ...TUS, 'upload-length': '1' });
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(appOrigin);
    expect((await storedBytes(ada, 'cors.txt')).toString()).toBe('hello');
  });

  it('keeps Basic and the DAV/tus OPTIONS answers as they were for requests without an Origin', async () => {
    const options = await send('OPTIONS', '/home/', undefined);
    expect(options.status).toBe(200);
    expect(options.headers['tus-version']).toBe('1.0.0');
    expect(options.headers.dav).toBe('1, 2');
    expect(Object.keys(options.headers).filter((h) => h.startsWith('access-control-') || h === 'vary')).toEqual([]);
    // An OPTIONS with an Origin but no Access-Control-Request-Method is no preflight: DAV's answer.
    const withOrigin = await send('OPTIONS', '/home/', undefined, { origin: appOrigin });
    expect(withOrigin.status).toBe(200);
    expect(withOrigin.headers['tus-version']).toBe('1.0.0');
    expect(withOrigin.headers['access-control-allow-origin']).toBe(appOrigin);
    const put = await send('PUT', '/home/basic.txt', ada.auth, {}, 'basic');
    expect(put.status).toBe(201);
    expect(Object.keys(put.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    expect((await storedBytes(ada, 'basic.txt')).toString()).toBe('basic');
  });
});
