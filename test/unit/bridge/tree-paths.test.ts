/**
 * Path lookup over the made-up part of the drive (StoreTree.stat, tryStat, list), on the
 * in-memory store: the root and its fixed names, `/webdrive/`, `/groups/` and a group's
 * collection, `/versions/` mirroring the drive, the trash and the derived views; what each
 * resource is (kind, top-level folder, the keys locks hang on), and what a lookup costs the
 * store (a walk through fixed levels lists no folder it need not and asks no details).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/contract.js';
import type { MetadataCache } from '../../../src/bridge/metadata-cache.js';
import { withMacSideFiles, withVersionsListed, withoutMacSideFiles, type BridgeUser } from '../../../src/bridge/sessions.js';
import { isDerivedView, isDerivedViewEntry, isFixedPath, type DavPath, type Resource, type StoreTree } from '../../../src/bridge/store-tree.js';
import { MemoryStore } from '../../helpers/memory-store.js';
import { bridgeUserOf, memoryTree } from '../../helpers/memory-tree.js';

let store: MemoryStore;
let cache: MetadataCache;
let tree: StoreTree;
let alice: BridgeUser;
let aliceId: string;
let groupId: string;
let docId: NodeId;

const at = (path: string) => path as DavPath;

/** What a resolved resource is, in one line. */
function summary(r: Resource | undefined): string | undefined {
  if (!r) return undefined;
  return [r.path, r.kind, r.entry.kind, r.entry.id, r.top ? `top ${r.top.name} ${r.top.id}` : 'no top', r.parent ? `in ${r.parent.key}` : 'no parent'].join(' | ');
}

beforeEach(async () => {
  store = new MemoryStore();
  const user = store.admin.addUser();
  aliceId = user.uuid;
  groupId = store.admin.addGroup('Team');
  store.admin.addMember(groupId, aliceId);
  store.admin.setUserWebdrive(aliceId, 'alice');
  store.admin.setGroupWebdrive(groupId, 'team', true);
  ({ tree, cache } = memoryTree(store));
  alice = bridgeUserOf(store, user);
  const s = await alice.session();
  await store.client.createFolder(s, 'home' as NodeId, 'docs');
  const docs = (await store.client.listFolder(s, 'home' as NodeId))[0]?.id as NodeId;
  docId = (await store.client.upload(s, { folder: docs, name: 'report.txt' }, Buffer.from('v1'))).id as NodeId;
  await store.client.upload(s, { revisionOf: docId, name: 'report.txt' }, Buffer.from('v2'));
  await store.client.upload(s, { folder: docs, name: '._report.txt' }, Buffer.from('finder'));
  await store.client.setStarred(s, docId, true);
  await store.client.createFolder(s, `home:${groupId}` as NodeId, 'shared');
  await store.client.upload(s, { folder: 'home' as NodeId, name: 'gone.txt' }, Buffer.from('x'));
  const gone = (await store.client.listFolder(s, 'home' as NodeId)).find((e) => e.name === 'gone.txt')?.id as NodeId;
  await store.client.remove(s, gone);
});

afterEach(() => {
  cache.close();
});

describe('the root', () => {
  it('lists the seven top-level folders and groups; /versions/ only to Finder and Explorer', async () => {
    const root = await tree.stat(alice, at('/'));
    expect(root.kind).toBe('root');
    expect((await tree.list(alice, root)).map((r) => `${r.path} ${r.kind}`)).toEqual([
      '/home top',
      '/incoming top',
      '/trash top',
      '/public_shares top',
      '/private_shares top',
      '/favorites top',
      '/shared_with_you top',
      '/groups virtual',
    ]);
    const finder = withVersionsListed(alice);
    expect((await tree.list(finder, await tree.stat(finder, at('/')))).map((r) => r.path)).toContain('/versions');
  });

  it('answers unknown names in the root without a store call', async () => {
    await tree.stat(alice, at('/'));
    const calls = store.callsOf('listFolder') + store.callsOf('details');
    for (const probe of ['/.DS_Store', '/._.', '/Backups.backupdb', '/nothing/below']) expect(await tree.tryStat(alice, at(probe))).toBeUndefined();
    expect(store.callsOf('listFolder') + store.callsOf('details')).toBe(calls);
  });

  it('walks through the top-level folders without listing the root or asking details', async () => {
    const listings = store.callsOf('listFolder');
    const details = store.callsOf('details');
    expect(summary(await tree.tryStat(alice, at('/home/docs/report.txt')))).toBe(`/home/docs/report.txt | node | file | ${docId} | top home home | in ${(await tree.stat(alice, at('/home/docs'))).entry.id}`);
    expect(store.callsOf('details')).toBe(details);
    expect(store.callsOf('listFolder') - listings).toBe(2);
  });

  it('says which paths are fixed', () => {
    for (const path of ['/', '/home', '/trash', '/webdrive', '/webdrive/alice', '/groups', '/groups/Team', '/groups/Team/home', '/versions']) expect(isFixedPath(at(path)), path).toBe(true);
    for (const path of ['/home/docs', '/webdrive/alice/docs', '/groups/Team/home/shared']) expect(isFixedPath(at(path)), path).toBe(false);
  });
});

describe('the made-up collections', () => {
  it('/webdrive/ lists the endpoints the caller may mount, each the owner’s home', async () => {
    const webdrive = await tree.stat(alice, at('/webdrive'));
    expect(summary(webdrive)).toBe(`/webdrive | virtual | folder | webdrive:${aliceId} | no top | no parent`);
    expect((await tree.list(alice, webdrive)).map(summary)).toEqual([`/webdrive/alice | top | folder | home | top home home | no parent`, `/webdrive/team | top | folder | home:${groupId} | top home home:${groupId} | no parent`]);
    expect((await tree.stat(alice, at('/webdrive/alice/docs/report.txt'))).entry.id).toBe(docId);
    expect((await tree.stat(alice, at('/webdrive/team/shared'))).top).toEqual({ id: `home:${groupId}`, name: 'home' });
  });

  it('/groups/ lists the groups, each with its seven top-level folders', async () => {
    const groups = await tree.stat(alice, at('/groups'));
    expect(summary(groups)).toBe(`/groups | virtual | folder | groups:${aliceId} | no top | no parent`);
    expect((await tree.list(alice, groups)).map(summary)).toEqual([`/groups/Team | virtual | folder | group:${groupId} | no top | no parent`]);
    const team = await tree.stat(alice, at('/groups/Team'));
    expect((await tree.list(alice, team)).map((r) => `${r.path} ${r.kind} ${r.entry.id}`)).toEqual(
      ['home', 'incoming', 'trash', 'public_shares', 'private_shares', 'favorites', 'shared_with_you'].map((t) => `/groups/Team/${t} top ${t}:${groupId}`),
    );
    const shared = await tree.stat(alice, at('/groups/Team/home/shared'));
    expect(shared.kind).toBe('node');
    expect(shared.top).toEqual({ id: `home:${groupId}`, name: 'home' });
    expect(shared.chain).toEqual([`root:${aliceId}`, `groups:${aliceId}`, `group:${groupId}`, `home:${groupId}`, shared.entry.id]);
    expect(shared.parent).toEqual({ id: `home:${groupId}`, key: `home:${groupId}` });
  });

  it('/versions/ mirrors the drive; a file is a folder of its revisions', async () => {
    const versions = await tree.stat(alice, at('/versions'));
    expect(versions.kind).toBe('virtual');
    expect((await tree.list(alice, versions)).map((r) => r.path)).toEqual(['/versions/home', '/versions/incoming', '/versions/groups']);
    expect((await tree.list(alice, await tree.stat(alice, at('/versions/home/docs')))).map((r) => `${r.path} ${r.entry.kind}`)).toEqual(['/versions/home/docs/._report.txt folder', '/versions/home/docs/report.txt folder']);
    const revisions = await tree.list(alice, await tree.stat(alice, at('/versions/home/docs/report.txt')));
    expect(revisions.map((r) => `${r.kind} ${r.entry.kind} ${r.entry.id}`)).toEqual([`virtual file revision:1:${docId}`, `virtual file revision:2:${docId}`]);
    expect((await tree.list(alice, await tree.stat(alice, at('/versions/groups')))).map((r) => r.path)).toEqual(['/versions/groups/Team']);
    expect((await tree.list(alice, await tree.stat(alice, at('/versions/groups/Team/home')))).map((r) => r.path)).toEqual(['/versions/groups/Team/home/shared']);
  });

  it('the trash and the derived views: an entry is a node of its top-level folder', async () => {
    const trashed = await tree.stat(alice, at('/trash/gone.txt'));
    expect(trashed.top).toEqual({ id: 'trash', name: 'trash' });
    expect(trashed.entry.trashed).toMatchObject({ originalName: 'gone.txt', fromPath: ['home'] });
    const favorites = await tree.stat(alice, at('/favorites'));
    expect(isDerivedView(favorites)).toBe(true);
    const starred = await tree.stat(alice, at('/favorites/report.txt'));
    expect(starred.entry.id).toBe(docId);
    expect(isDerivedViewEntry(starred)).toBe(true);
    expect(isDerivedViewEntry(await tree.stat(alice, at('/home/docs/report.txt')))).toBe(false);
  });
});

describe('side files', () => {
  it('a client other than Finder neither lists nor finds them; Finder does', async () => {
    const hiding = withoutMacSideFiles(alice);
    expect((await tree.list(hiding, await tree.stat(hiding, at('/home/docs')))).map((r) => r.entry.name)).toEqual(['report.txt']);
    expect(await tree.tryStat(hiding, at('/home/docs/._report.txt'))).toBeUndefined();
    const finder = withMacSideFiles(hiding);
    expect((await tree.list(finder, await tree.stat(finder, at('/home/docs')))).map((r) => r.entry.name)).toEqual(['._report.txt', 'report.txt']);
  });
});
