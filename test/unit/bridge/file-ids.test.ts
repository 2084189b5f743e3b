/**
 * The bridge's own numeric file ids (bridge/file-ids.ts, docs/extensions.md "Numeric file ids")
 * in front of a store without `file_id` (the in-memory server of the interface), kept in a real
 * bridge.sqlite (format 7): every resource, the made-up collections included, gets a number on
 * first sight, the same for the same key, kept across a move and across a bridge restart (the
 * file reopened), never given to another key; a number leads back to its node; the instance's
 * names (oc:id's tail, oc:data-fingerprint) are made once.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/contract.js';
import { BRIDGE_FILE_ID_BASE, ocIdOf, parseFileId } from '../../../src/contracts/file-ids.js';
import type { BridgeState } from '../../../src/contracts/bridge-state.js';
import { FileIds } from '../../../src/bridge/file-ids.js';
import type { BridgeUser } from '../../../src/bridge/sessions.js';
import type { DavPath, StoreTree } from '../../../src/bridge/store-tree.js';
import type { MetadataCache } from '../../../src/bridge/metadata-cache.js';
import { openDavState, STATE_FILE_VERSION } from '../../../src/store/storage/dav-state.js';
import { MemoryStore } from '../../helpers/memory-store.js';
import { bridgeUserOf, memoryTree } from '../../helpers/memory-tree.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

let tmp: ReturnType<typeof makeTmpDir>;
let store: MemoryStore;
let tree: StoreTree;
let cache: MetadataCache;
let alice: BridgeUser;
let groupId: string;
let state: BridgeState;
let ids: FileIds;

const stateFile = () => path.join(tmp.dir, 'bridge.sqlite');
const PATHS = ['/', '/groups', '/groups/Team', '/home', '/home/docs', '/home/docs/report.txt', '/trash'] as const;

async function open(): Promise<void> {
  state = await openDavState({ stateFile: stateFile() });
  ids = new FileIds(state.fileIds, store.client);
}

/** The number of each path, as PROPFIND shows them. */
async function numbersOf(paths: readonly string[]): Promise<number[]> {
  const resources = await Promise.all(paths.map((p) => tree.stat(alice, p as DavPath)));
  const numbers = await ids.of(resources);
  return resources.map((r) => numbers.get(r.chain[r.chain.length - 1] as string) as number);
}

beforeEach(async () => {
  tmp = makeTmpDir('driveway-file-ids-');
  store = new MemoryStore();
  const user = store.admin.addUser();
  groupId = store.admin.addGroup('Team');
  store.admin.addMember(groupId, user.uuid);
  ({ tree, cache } = memoryTree(store));
  alice = bridgeUserOf(store, user);
  const s = await alice.session();
  await store.client.createFolder(s, 'home' as NodeId, 'docs');
  const docs = (await store.client.listFolder(s, 'home' as NodeId))[0]?.id as NodeId;
  await store.client.upload(s, { folder: docs, name: 'report.txt' }, Buffer.from('v1'));
  await open();
});

afterEach(async () => {
  cache.close();
  await state.close();
  tmp.remove();
});

describe('numeric file ids over a store without them', () => {
  it('the store gives none, so every resource, made up or not, gets a distinct bridge number', async () => {
    const listed = await store.client.listFolder(await alice.session(), 'home' as NodeId);
    expect(listed.every((e) => e.fileId === undefined)).toBe(true);
    const numbers = await numbersOf(PATHS);
    expect(new Set(numbers).size).toBe(PATHS.length);
    for (const n of numbers) expect(Number.isSafeInteger(n) && n > BRIDGE_FILE_ID_BASE).toBe(true);
    // Asked again, in another order: the same.
    expect(await numbersOf([...PATHS].reverse())).toEqual([...numbers].reverse());
  });

  it('keeps a node its number across a move and across a restart of the bridge; new nodes get new ones', async () => {
    const [before] = await numbersOf(['/home/docs/report.txt']);
    const s = await alice.session();
    const report = (await tree.stat(alice, '/home/docs/report.txt' as DavPath)).entry.id;
    await store.client.createFolder(s, 'home' as NodeId, 'archive');
    const archive = (await store.client.listFolder(s, 'home' as NodeId)).find((e) => e.name === 'archive')?.id as NodeId;
    await store.client.moveInto(s, report, archive);
    cache.clear();
    expect(await numbersOf(['/home/archive/report.txt'])).toEqual([before]);

    const all = await numbersOf(PATHS.filter((p) => p !== '/home/docs/report.txt'));
    await state.close();
    await open();
    expect(await numbersOf(PATHS.filter((p) => p !== '/home/docs/report.txt'))).toEqual(all);
    expect(await numbersOf(['/home/archive/report.txt'])).toEqual([before]);

    await store.client.upload(s, { folder: archive, name: 'new.txt' }, Buffer.from('n'));
    cache.clear();
    const [fresh] = await numbersOf(['/home/archive/new.txt']);
    expect(fresh).toBeGreaterThan(Math.max(...all, before as number));
  });

  it('leads a number, or its oc:id, back to its node; a number given to nothing leads nowhere', async () => {
    const report = await tree.stat(alice, '/home/docs/report.txt' as DavPath);
    const [n] = await numbersOf(['/home/docs/report.txt']);
    const { instanceId } = await ids.instance();
    expect(await ids.nodeOf(alice, String(n))).toBe(report.entry.id);
    expect(await ids.nodeOf(alice, ocIdOf(n as number, instanceId))).toBe(report.entry.id);
    expect(await ids.nodeOf(alice, String(BRIDGE_FILE_ID_BASE + 999_999))).toBeUndefined();
    // The store has no lookup: a small number is nobody's.
    expect(await ids.nodeOf(alice, '42')).toBeUndefined();
    // The UUID form of earlier releases passes through.
    expect(await ids.nodeOf(alice, report.entry.id)).toBe(report.entry.id);
  });

  it("leads another user's number, or a made-up collection's, nowhere: a number names only what the caller may read", async () => {
    const [report, root] = await numbersOf(['/home/docs/report.txt', '/']);
    const bob = bridgeUserOf(store, store.admin.addUser());
    expect(await ids.nodeOf(bob, String(report))).toBeUndefined();
    expect(await ids.nodeOf(bob, String(root))).toBeUndefined();
    expect(await ids.nodeOf(bob, (await tree.stat(alice, '/home/docs/report.txt' as DavPath)).entry.id)).toBeUndefined();
  });

  it("makes the instance's names once, in Nextcloud's shapes, kept across a restart (bridge.sqlite format 7)", async () => {
    const first = await ids.instance();
    expect(first.instanceId).toMatch(/^oc[a-z0-9]{10}$/);
    expect(first.dataFingerprint).toMatch(/^[a-z0-9]{32}$/);
    expect(ocIdOf(42, first.instanceId)).toBe(`00000042${first.instanceId}`);
    expect(parseFileId(`00000042${first.instanceId}`)).toBe(42);
    expect(parseFileId('0b5e5a52-0000-4000-8000-000000000001')).toBeUndefined();
    await state.close();
    await open();
    expect(await ids.instance()).toEqual(first);
    // 7 brought the numbers; 8 (the login flows) keeps them.
    expect(STATE_FILE_VERSION).toBe(9);
  });
});
