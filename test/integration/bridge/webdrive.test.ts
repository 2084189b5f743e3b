/**
 * `/webdrive/<endpoint>/` (issue 6): the endpoint owner's home, for the owner logging in with
 * their own credentials. Every verb works there as under `/home/`, hrefs stay under the mount,
 * a lock taken through one path is seen through the other, another user and an unknown name get
 * the same bare 404, and a changed or deleted endpoint is followed within the cache TTL. The
 * endpoint is set through the store's own API, as a user would.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, EXCLUSIVE_LOCKINFO, multistatusOf } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { uploadFile } from '../../helpers/seed.js';

const TTL_MS = 300;

describe('WebDrive endpoints through the bridge', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  const { davAs, storeEntries } = bridgeRequests(() => f);
  const dav = (method: string, path: string, headers: Record<string, string> = {}, body?: string, as: DavUser = alice) => davAs(as, method, path, headers, body);

  async function setEndpoint(user: DavUser, endpoint: string): Promise<void> {
    const res = await f.client.http.requestRaw({ method: 'POST', path: '/api/user/webdrive', token: user.session.token, json: { endpoint } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  /** Polls (bounded: twice the TTL plus a margin) until `path` answers `status` to PROPFIND Depth 0. */
  async function eventually(path: string, status: number, as: DavUser): Promise<number> {
    const deadline = Date.now() + 2 * TTL_MS + 2_000;
    let last = 0;
    while (Date.now() < deadline) {
      last = (await dav('PROPFIND', path, { depth: '0' }, undefined, as)).status;
      if (last === status) return last;
      await sleep(50);
    }
    return last;
  }

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: TTL_MS } });
    alice = await f.newDavUser();
    bob = await f.newDavUser();
    await uploadFile(f.client, alice.session, 'home', 'hello.txt', 'hello from alice');
    await setEndpoint(alice, 'alice');
    await setEndpoint(bob, 'bobdrive');
  });
  afterAll(async () => {
    await f.close();
  });

  it('lists the owner’s home at /webdrive/<endpoint>/ with hrefs under the mount', async () => {
    const responses = multistatusOf(await dav('PROPFIND', '/webdrive/alice/', { depth: '1' }));
    expect(responses.map((r) => r.href)).toEqual(['/webdrive/alice/', '/webdrive/alice/hello.txt']);
    expect((await dav('GET', '/webdrive/alice/hello.txt')).text).toBe('hello from alice');
  });

  it('serves every verb there as under /home/: PUT, MKCOL, COPY, MOVE, PROPPATCH, DELETE', async () => {
    expect((await dav('MKCOL', '/webdrive/alice/docs/')).status).toBe(201);
    expect((await dav('PUT', '/webdrive/alice/docs/a.txt', {}, 'A')).status).toBe(201);
    expect((await dav('COPY', '/webdrive/alice/docs/a.txt', { destination: '/webdrive/alice/docs/b.txt' })).status).toBe(201);
    expect((await dav('MOVE', '/webdrive/alice/docs/b.txt', { destination: `${f.davUrl}/home/docs/c.txt` })).status).toBe(201);
    const proppatch = await dav(
      'PROPPATCH',
      '/webdrive/alice/docs/a.txt',
      { 'content-type': 'application/xml' },
      '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:tag>blue</Z:tag></D:prop></D:set></D:propertyupdate>',
    );
    expect(proppatch.status).toBe(207);
    // The dead property is the node's, whichever path it was set through.
    expect((await dav('PROPFIND', '/home/docs/a.txt', { depth: '0' }, '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><Z:tag/></D:prop></D:propfind>')).text).toContain('blue');
    expect((await dav('DELETE', '/webdrive/alice/docs/c.txt')).status).toBe(204);
    const docs = (await storeEntries('home', alice)).find((e) => e.name === 'docs');
    expect(docs).toBeDefined();
    expect((await f.client.listFolder(alice.session, docs!.id)).map((e) => e.name)).toEqual(['a.txt']);
  });

  it('shares locks between the two paths: a lock taken through /webdrive blocks a PUT through /home, and the reverse', async () => {
    const locked = await dav('LOCK', '/webdrive/alice/hello.txt', { 'content-type': 'application/xml', timeout: 'Second-60' }, EXCLUSIVE_LOCKINFO);
    expect(locked.status).toBe(200);
    const token = String(locked.headers['lock-token']);
    expect((await dav('PUT', '/home/hello.txt', {}, 'no token')).status).toBe(423);
    expect((await dav('PUT', '/home/hello.txt', { if: `(${token})` }, 'with token')).status).toBe(204);
    expect((await dav('UNLOCK', '/home/hello.txt', { 'lock-token': token })).status).toBe(204);

    const second = await dav('LOCK', '/home/hello.txt', { 'content-type': 'application/xml', timeout: 'Second-60' }, EXCLUSIVE_LOCKINFO);
    expect((await dav('DELETE', '/webdrive/alice/hello.txt')).status).toBe(423);
    expect((await dav('UNLOCK', '/webdrive/alice/hello.txt', { 'lock-token': String(second.headers['lock-token']) })).status).toBe(204);
  });

  it('answers another user’s endpoint exactly like an unknown one: a bare 404 that reveals nothing', async () => {
    const foreign = await dav('PROPFIND', '/webdrive/alice/', { depth: '1' }, undefined, bob);
    const unknown = await dav('PROPFIND', '/webdrive/nosuchname/', { depth: '1' }, undefined, bob);
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.text).toBe(unknown.text);
    expect(foreign.text).not.toContain('alice');
    for (const [method, path] of [
      ['GET', '/webdrive/alice/hello.txt'],
      ['PUT', '/webdrive/alice/evil.txt'],
      ['DELETE', '/webdrive/alice/hello.txt'],
      ['MKCOL', '/webdrive/alice/x/'],
    ] as const) {
      const res = await dav(method, path, {}, method === 'PUT' ? 'evil' : undefined, bob);
      expect([404, 409], `${method} ${path}`).toContain(res.status);
    }
    expect((await storeEntries('home', alice)).map((e) => e.name)).not.toContain('evil.txt');
    expect((await storeEntries('home', alice)).map((e) => e.name)).toContain('hello.txt');
  });

  it('lists at /webdrive/ only the caller’s own endpoint, and never shows webdrive in the root', async () => {
    const mine = multistatusOf(await dav('PROPFIND', '/webdrive/', { depth: '1' }));
    expect(mine.map((r) => r.href)).toEqual(['/webdrive/', '/webdrive/alice/']);
    const root = multistatusOf(await dav('PROPFIND', '/', { depth: '1' }));
    expect(root.map((r) => r.href)).not.toContain('/webdrive/');
  });

  it('refuses to create, delete or replace the mount itself (403), and keeps it', async () => {
    expect((await dav('MKCOL', '/webdrive/newone/')).status).toBe(403);
    expect((await dav('DELETE', '/webdrive/alice/')).status).toBe(403);
    expect((await dav('PUT', '/webdrive/file.txt', {}, 'x')).status).toBe(403);
    expect((await dav('MOVE', '/webdrive/alice/', { destination: '/home/moved/' })).status).toBe(403);
    expect((await dav('COPY', '/home/hello.txt', { destination: '/webdrive/alice' })).status).toBe(403);
    expect((await dav('PROPFIND', '/webdrive/alice/', { depth: '0' })).status).toBe(207);
  });

  it('follows a renamed endpoint within the TTL: the old name 404, the new one serves', async () => {
    await setEndpoint(bob, 'bobnew');
    expect(await eventually('/webdrive/bobdrive/', 404, bob)).toBe(404);
    expect((await dav('PROPFIND', '/webdrive/bobnew/', { depth: '0' }, undefined, bob)).status).toBe(207);
  });

  it('answers 404 within the TTL once the endpoint is deleted', async () => {
    expect((await dav('PROPFIND', '/webdrive/alice/', { depth: '0' })).status).toBe(207);
    const res = await f.client.http.requestRaw({ method: 'DELETE', path: '/api/user/webdrive', token: alice.session.token });
    expect(res.status).toBe(200);
    expect(await eventually('/webdrive/alice/', 404, alice)).toBe(404);
    expect((await dav('GET', '/webdrive/alice/hello.txt')).status).toBe(404);
    // The files themselves are untouched.
    expect((await dav('GET', '/home/hello.txt')).status).toBe(200);
  });

  it('asks for credentials before anything (401 with a Basic challenge)', async () => {
    const res = await davAs(undefined, 'PROPFIND', '/webdrive/bobnew/', { depth: '0' });
    expect(res.status).toBe(401);
    expect(String(res.headers['www-authenticate'])).toMatch(/^Basic /);
  });
});
