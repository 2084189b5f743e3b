/**
 * The metadata cache: concurrent writers into one folder patch every cached listing instead of
 * re-listing; read-after-write holds; writes made directly on the store show after the TTL.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedAnswerCount } from '../../../src/bridge/verbs/propfind.js';
import { nodeId } from '../../../src/store-client/index.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { parseMultistatus } from '../../helpers/multistatus.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const TTL_MS = 1500;

describe('metadata cache', () => {
  let f: BridgeFixture;
  let u: DavUser;
  beforeAll(async () => {
    f = await bridgeFixture({ viaProxy: true, bridgeFlags: { cacheTtlMs: TTL_MS } });
    u = await f.newDavUser();
    expect((await davRequest(f.davUrl, 'MKCOL', '/home/many', { auth: u.auth })).status).toBe(201);
  });
  afterAll(async () => {
    await f.close();
  });

  const names = (path: string) => listNames(f, u, path);

  it('lets 4 parallel writers put 80 files into one folder with at most one listing each, and lists them all at once', async () => {
    await names('/home/many/');
    f.proxy?.reset();
    const expected: string[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, client) => {
        for (let i = 0; i < 20; i += 1) {
          const name = `c${client}-f${String(i).padStart(2, '0')}.txt`;
          expected.push(name);
          const res = await davRequest(f.davUrl, 'PUT', `/home/many/${name}`, { auth: u.auth, body: `${client}/${i}` });
          expect(res.status).toBe(201);
        }
      }),
    );
    const dirlists = f.proxy?.matching('GET', /\/dirlist$/).length ?? -1;
    expect(dirlists).toBeLessThanOrEqual(4);
    expect(f.proxy?.matching('POST', /^\/upload\//).length).toBe(80);
    expect(await names('/home/many/')).toEqual(expected.sort());
  });

  it('shows a write made directly on the store (behind the bridge) once the TTL has passed', async () => {
    const before = await names('/home/');
    await f.client.upload(u.session, { folder: nodeId('home'), name: 'behind.txt' }, Readable.from([Buffer.from('x')]), 1);
    expect(await names('/home/')).toEqual(before);
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 200));
    expect(await names('/home/')).toContain('behind.txt');
  });
});

/** Names a Depth 1 PROPFIND lists below `path`, sorted. */
async function listNames(fixture: BridgeFixture, user: DavUser, path: string): Promise<string[]> {
  const res = await davRequest(fixture.davUrl, 'PROPFIND', path, { auth: user.auth, headers: { depth: '1' } });
  return parseMultistatus(res.text)
    .map((r) => decodeURIComponent(r.href))
    .filter((h) => h !== path)
    .map((h) => h.slice(path.length).replace(/\/$/, ''))
    .sort();
}

describe('serialized PROPFIND answers', () => {
  let g: BridgeFixture;
  let v: DavUser;
  beforeAll(async () => {
    // A TTL no slow run reaches: the counts below must not see a listing expire.
    g = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 600_000 } });
    v = await g.newDavUser();
  });
  afterAll(async () => {
    await g.close();
  });

  it('reuses a serialized Depth 1 answer, and drops it once a write into the folder patched the listing', async () => {
    expect((await davRequest(g.davUrl, 'MKCOL', '/home/answers', { auth: v.auth })).status).toBe(201);
    const before = cachedAnswerCount();
    expect(await listNames(g, v, '/home/answers/')).toEqual([]);
    expect(cachedAnswerCount()).toBe(before + 1);
    expect(await listNames(g, v, '/home/answers/')).toEqual([]);
    expect(cachedAnswerCount()).toBe(before + 1);
    expect((await davRequest(g.davUrl, 'PUT', '/home/answers/new.txt', { auth: v.auth, body: 'x' })).status).toBe(201);
    expect(cachedAnswerCount()).toBe(before);
    expect(await listNames(g, v, '/home/answers/')).toEqual(['new.txt']);
  });
});
