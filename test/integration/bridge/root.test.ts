/**
 * The bridge's own root: the seven fixed top-level folders, which cannot be changed, and `groups`
 * (the caller's group drives) on a store that has groups. `webdrive` is reachable but never listed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { davProp, parseMultistatus, responseFor } from '../../helpers/multistatus.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const TOP = ['home', 'incoming', 'trash', 'public_shares', 'private_shares', 'favorites', 'shared_with_you'];

describe('the root of the drive', () => {
  let f: BridgeFixture;
  let u: DavUser;
  beforeAll(async () => {
    f = await bridgeFixture();
    u = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  it('lists exactly the seven top-level folders and groups as collections, and dates the root by the latest of them', async () => {
    const answer = await davRequest(f.davUrl, 'PROPFIND', '/', { auth: u.auth, headers: { depth: '1' } });
    expect(answer.status).toBe(207);
    const responses = parseMultistatus(answer.text);
    expect(responses.map((r) => r.href).sort()).toEqual(['/', ...TOP.map((t) => `/${t}/`), '/groups/'].sort());
    for (const top of TOP) expect(davProp(responseFor(responses, `/${top}/`), 'resourcetype').node.children.map((c) => c.local)).toEqual(['collection']);
    const rootModified = Date.parse(davProp(responseFor(responses, '/'), 'getlastmodified').text);
    const homeModified = Date.parse(davProp(responseFor(responses, '/home/'), 'getlastmodified').text);
    expect(rootModified).toBeGreaterThan(Date.parse('2020-01-01'));
    expect(rootModified).toBeGreaterThanOrEqual(homeModified);
  });

  it('refuses to create, delete, rename or overwrite top-level folders, and keeps them', async () => {
    expect((await davRequest(f.davUrl, 'MKCOL', '/newtop', { auth: u.auth })).status).toBe(403);
    expect((await davRequest(f.davUrl, 'PUT', '/file.txt', { auth: u.auth, body: 'x' })).status).toBe(403);
    expect((await davRequest(f.davUrl, 'DELETE', '/home', { auth: u.auth })).status).toBe(403);
    expect((await davRequest(f.davUrl, 'MOVE', '/incoming/', { auth: u.auth, headers: { destination: '/home/incoming2/' } })).status).toBe(403);
    expect((await davRequest(f.davUrl, 'COPY', '/home/', { auth: u.auth, headers: { destination: '/trash/' } })).status).toBe(403);
    expect((await davRequest(f.davUrl, 'DELETE', '/groups/', { auth: u.auth })).status).toBe(403);
    expect((await davRequest(f.davUrl, 'MKCOL', '/groups/mine/', { auth: u.auth })).status).toBe(403);
    const after = parseMultistatus((await davRequest(f.davUrl, 'PROPFIND', '/', { auth: u.auth, headers: { depth: '1' } })).text);
    expect(after).toHaveLength(TOP.length + 2);
    expect((await f.client.listFolder(u.session, nodeId('home'))).map((e) => e.name)).toEqual([]);
  });
});
