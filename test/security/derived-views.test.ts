/**
 * Issue 14, item 9: derived views never destroy. `/favorites/`, `/shared_with_you/`,
 * `/public_shares/` and `/private_shares/` (a group's too) list nodes that live elsewhere, often
 * another owner's. DELETE of an entry listed directly there removes it from the caller's view
 * (favorites: the star goes) or is refused (403); MOVE of such an entry, or onto one, is refused;
 * the node itself stays where it is, with its content. What lies below an entry is an ordinary
 * node (deleting inside a writable share is a write the share grants). `/incoming/` holds the
 * caller's own copies: deleting one there trashes the caller's copy, never the sender's original.
 * Everything is checked through the store afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type NodeEntry } from '../../src/store-client/index.js';
import { bridgeRequests } from '../helpers/dav-requests.js';
import { groupAdmin } from '../helpers/groups.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';

describe('derived views never destroy the owner’s node', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  let doc: string;
  let reports: string;
  let drafts: string;
  let flyer: string;
  let team: string;
  let teamDoc: string;
  const { davAs } = bridgeRequests(() => f);

  async function api(as: DavUser, method: 'GET' | 'POST' | 'PUT', path: string, json?: unknown): Promise<Record<string, unknown>> {
    const res = await f.client.http.requestRaw({ method, path, token: as.session.token, ...(json === undefined ? {} : { json }) });
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    return res.body as Record<string, unknown>;
  }
  const entries = (as: DavUser, folder: string): Promise<NodeEntry[]> => f.client.listFolder(as.session, nodeId(folder));
  const namesIn = async (as: DavUser, folder: string): Promise<string[]> => (await entries(as, folder)).map((e) => e.name).sort();

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 200 } });
    [alice, bob] = await Promise.all([f.newDavUser(), f.newDavUser()]);
    doc = await uploadFile(f.client, alice.session, 'home', 'doc.txt', 'starred content');
    await f.client.setStarred(alice.session, nodeId(doc), true);
    reports = await createFolder(f.client, alice.session, 'home', 'Reports');
    await uploadFile(f.client, alice.session, reports, 'q3.txt', 'third quarter');
    drafts = await createFolder(f.client, alice.session, 'home', 'Drafts');
    await uploadFile(f.client, alice.session, drafts, 'draft.txt', 'first draft');
    await uploadFile(f.client, alice.session, drafts, 'old.txt', 'to be deleted by bob');
    flyer = await uploadFile(f.client, alice.session, 'home', 'flyer.txt', 'for everyone');
    await api(alice, 'POST', `/api/nodes/${reports}/shares`, { type: 'private', recipients: [bob.uuid] });
    await api(alice, 'POST', `/api/nodes/${drafts}/shares`, { type: 'private', recipients: [bob.uuid], writable: true });
    await api(alice, 'POST', `/api/nodes/${flyer}/shares`, { type: 'public' });
    const gift = await uploadFile(f.client, alice.session, 'home', 'gift.txt', 'a copy for bob');
    await api(alice, 'POST', `/api/nodes/${gift}`, { share_copy_with: [bob.uuid] });
    const pending = (await api(bob, 'GET', '/api/user/pending_incoming')).data as Array<{ uuid: string; name: string }>;
    await api(bob, 'PUT', '/api/user/pending_incoming', { uuid: pending.find((p) => p.name === 'gift.txt')!.uuid, action: 'accept' });
    const ga = groupAdmin(f.client, f.admin);
    team = await ga.group('Crew', { quotaBytes: 1_000_000 });
    await ga.member(team, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    teamDoc = await uploadFile(f.client, alice.session, `home:${team}`, 'team.txt', 'team content');
    await f.client.setStarred(alice.session, nodeId(teamDoc), true);
  });
  afterAll(async () => {
    await f.close();
  });

  it('/favorites/: DELETE removes the star and keeps the file; MOVE is refused; COPY out still works', async () => {
    expect((await davAs(alice, 'MOVE', '/favorites/doc.txt', { destination: '/home/moved.txt' })).status).toBe(403);
    expect((await davAs(alice, 'DELETE', '/favorites/doc.txt')).status).toBe(204);
    expect(await namesIn(alice, 'home')).toContain('doc.txt');
    expect(await namesIn(alice, 'home')).not.toContain('moved.txt');
    expect((await entries(alice, 'home')).find((e) => e.name === 'doc.txt')?.isStarred).toBe(false);
    expect(await namesIn(alice, 'favorites')).not.toContain('doc.txt');
    expect(await namesIn(alice, 'trash')).toEqual([]);
    expect((await davAs(alice, 'GET', '/home/doc.txt')).text).toBe('starred content');
    expect((await davAs(alice, 'PROPFIND', '/favorites/doc.txt', { depth: '0' })).status).toBe(404);
    // Starred again behind the bridge: its favorites listing shows it after the cache TTL (200 ms).
    await f.client.setStarred(alice.session, nodeId(doc), true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await davAs(alice, 'COPY', '/favorites/doc.txt', { destination: '/home/doc copy.txt' })).status).toBe(201);
    expect((await davAs(alice, 'GET', '/home/doc copy.txt')).text).toBe('starred content');
  });

  it('a group’s favorites: DELETE removes the caller’s star, the group’s file stays', async () => {
    const path = '/groups/Crew/favorites/team.txt';
    expect((await davAs(alice, 'MOVE', path, { destination: '/groups/Crew/home/elsewhere.txt' })).status).toBe(403);
    expect((await davAs(alice, 'DELETE', path)).status).toBe(204);
    expect(await namesIn(alice, `home:${team}`)).toEqual(['team.txt']);
    expect(await namesIn(alice, `trash:${team}`)).toEqual([]);
    expect(await namesIn(alice, `favorites:${team}`)).toEqual([]);
  });

  it('/shared_with_you/: the shared nodes themselves are neither deleted nor moved, read-only or writable', async () => {
    for (const name of ['Reports', 'Drafts']) {
      expect((await davAs(bob, 'DELETE', `/shared_with_you/${name}/`)).status, `DELETE ${name}`).toBe(403);
      expect((await davAs(bob, 'MOVE', `/shared_with_you/${name}/`, { destination: `/home/${name}/` })).status, `MOVE ${name}`).toBe(403);
      expect((await davAs(bob, 'MOVE', `/shared_with_you/${name}/`, { destination: `/shared_with_you/${name} renamed/` })).status, `rename ${name}`).toBe(403);
    }
    expect(await namesIn(alice, 'home')).toEqual(expect.arrayContaining(['Drafts', 'Reports']));
    expect(await namesIn(alice, reports)).toEqual(['q3.txt']);
    expect(await namesIn(bob, 'home')).toEqual([]);
    // Inside a writable share, deleting is a write the share grants: into alice's trash.
    expect((await davAs(bob, 'DELETE', '/shared_with_you/Drafts/old.txt')).status).toBe(204);
    expect(await namesIn(alice, drafts)).toEqual(['draft.txt']);
    expect(await namesIn(alice, 'trash')).toContain('old.txt');
  });

  it('/public_shares/ and /private_shares/: DELETE and MOVE of an entry are refused; the node and its links stay', async () => {
    for (const path of ['/public_shares/flyer.txt', '/private_shares/Reports/', '/private_shares/Drafts/']) {
      expect((await davAs(alice, 'DELETE', path)).status, `DELETE ${path}`).toBe(403);
      expect((await davAs(alice, 'MOVE', path, { destination: '/home/taken' })).status, `MOVE ${path}`).toBe(403);
    }
    expect(await namesIn(alice, 'home')).toEqual(expect.arrayContaining(['Drafts', 'Reports', 'flyer.txt']));
    expect(await namesIn(alice, 'home')).not.toContain('taken');
    expect(await namesIn(alice, 'public_shares')).toEqual(['flyer.txt']);
    expect(await namesIn(alice, 'private_shares')).toEqual(['Drafts', 'Reports']);
    expect((await davAs(alice, 'GET', '/home/flyer.txt')).text).toBe('for everyone');
  });

  it('refuses a COPY or MOVE with Overwrite onto a view’s entry, which would have deleted the node first', async () => {
    expect((await davAs(alice, 'PUT', '/home/other.txt', {}, 'other')).status).toBe(201);
    expect((await davAs(alice, 'COPY', '/home/other.txt', { destination: '/favorites/doc.txt', overwrite: 'T' })).status).toBe(403);
    expect((await davAs(alice, 'MOVE', '/home/other.txt', { destination: '/public_shares/flyer.txt', overwrite: 'T' })).status).toBe(403);
    expect((await davAs(alice, 'GET', '/home/doc.txt')).text).toBe('starred content');
    expect((await davAs(alice, 'GET', '/home/flyer.txt')).text).toBe('for everyone');
    expect(await namesIn(alice, 'home')).toContain('other.txt');
  });

  it('/incoming/: deleting trashes the caller’s own copy, the sender’s original stays', async () => {
    expect((await davAs(bob, 'DELETE', '/incoming/gift.txt')).status).toBe(204);
    expect(await namesIn(bob, 'incoming')).toEqual([]);
    expect(await namesIn(bob, 'trash')).toEqual(['gift.txt']);
    expect((await davAs(alice, 'GET', '/home/gift.txt')).text).toBe('a copy for bob');
  });
});
