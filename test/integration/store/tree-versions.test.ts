/**
 * Issue 30, item 4, the store's side (docs/extensions.md "Tree versions and sizes"): a folder's
 * `tree_etag` changes with any change anywhere below it, and `tree_size` is the recursive size of
 * the latest revision of every file below it, after every kind of change: an add, a new
 * revision, a rename, a new folder, a move out of one subtree into another, a delete into trash,
 * a restore, a copy, a purge, a copy accepted into incoming, a change in a group drive. Folders
 * beside the change keep theirs. Compaction changes neither value. Writers in parallel into one
 * drive all succeed with exact sizes. SQLite and PostgreSQL + S3.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { compactTreeChanges } from '../../../src/store/storage/tree-changes.js';
import { SUBTREE } from '../../../src/store/storage/nodes.js';
import { dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { as } from '../../helpers/sharing.js';
import { createFolder, topLevelRow, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import type { TestStore } from '../../helpers/start-store.js';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let counter = 0;

beforeAll(async () => {
  ({ store, seeder, ga } = await startGroupStore());
});
afterAll(() => stopGroupStore({ seeder, store }));

interface TreeFacts {
  tree_etag: string;
  tree_size: number;
}

async function treeOf(who: SeededUser, id: string): Promise<TreeFacts> {
  const details = await dataOf<TreeFacts>(as(seeder.client, who, 'GET', `/api/nodes/${id}`));
  expect(details.tree_etag, `tree_etag of ${id}`).toEqual(expect.any(String));
  return { tree_etag: details.tree_etag, tree_size: details.tree_size };
}

/** The sum of the latest revision of every file below the folder, as the rows say. */
async function realSize(folderUuid: string): Promise<number> {
  const row = await store.ctx.storage.sql.get<{ bytes: number | string | null }>(
    `${SUBTREE} SELECT SUM(n.size) AS bytes FROM nodes n JOIN sub ON n.uuid = sub.uuid WHERE n.type = 'File'`,
    [folderUuid],
  );
  return Number(row?.bytes ?? 0);
}

/** The UUID of a folder id (a top-level identifier resolved). */
async function uuidOf(who: SeededUser, id: string): Promise<string> {
  if (!id.includes('-') || id.includes(':')) {
    const [kind, owner] = id.split(':') as [string, string | undefined];
    return (await topLevelRow(store, owner ?? who.uuid, kind)).uuid;
  }
  return id;
}

/**
 * Runs `change` and checks: every folder of `changed` has a new tree_etag, every one of `kept`
 * the same, and every folder's tree_size equals the real recursive size.
 */
async function expectChange(who: SeededUser, changed: string[], kept: string[], change: () => Promise<unknown>): Promise<void> {
  const before = new Map<string, TreeFacts>();
  for (const id of [...changed, ...kept]) before.set(id, await treeOf(who, id));
  await change();
  for (const id of changed) expect((await treeOf(who, id)).tree_etag, `${id} changed`).not.toBe(before.get(id)?.tree_etag);
  for (const id of kept) expect((await treeOf(who, id)).tree_etag, `${id} kept`).toBe(before.get(id)?.tree_etag);
  for (const id of [...changed, ...kept]) expect((await treeOf(who, id)).tree_size, `${id} size`).toBe(await realSize(await uuidOf(who, id)));
}

const text = (size: number): string => `${(counter += 1)}`.padEnd(size, 'x');

/** /home/a/b/c/d/e and /home/other/x: the chain five folders down and a subtree beside it. */
async function tree(who: SeededUser, root = 'home') {
  const chain = [root];
  for (const name of ['a', 'b', 'c', 'd', 'e']) chain.push(await createFolder(seeder.client, who.session, chain.at(-1) as string, name));
  const other = await createFolder(seeder.client, who.session, root, 'other');
  const x = await createFolder(seeder.client, who.session, other, 'x');
  const deepest = chain.at(-1) as string;
  return { chain, other, x, deepest };
}

describe('tree versions and recursive sizes', () => {
  it('every folder up to the top changes with an add, a new revision, a rename, a new folder; the folders beside do not', async () => {
    const alice = await seeder.user('Alice Trees');
    const t = await tree(alice);
    const beside = [t.other, t.x, 'trash', 'incoming'];
    let file = '';
    await expectChange(alice, t.chain, beside, async () => (file = await uploadFile(seeder.client, alice.session, t.deepest, 'f.txt', text(10))));
    await expectChange(alice, t.chain, beside, () => uploadFile(seeder.client, alice.session, t.deepest, 'f.txt', text(2500)));
    await expectChange(alice, t.chain, beside, () => seeder.client.rename(alice.session, nodeId(file), 'g.txt'));
    await expectChange(alice, t.chain, beside, () => createFolder(seeder.client, alice.session, t.deepest, 'new'));
    // A folder renamed has a new version of its own, and its parent's chain too.
    const c = t.chain[3] as string;
    await expectChange(alice, t.chain.slice(0, 4), beside, () => seeder.client.rename(alice.session, nodeId(c), 'c2'));
    expect((await treeOf(alice, 'home')).tree_size).toBe(2500);
  });

  it('a move changes both chains, old and new, by the bytes moved; a delete and a restore change the trash and the chain; a purge the trash', async () => {
    const bea = await seeder.user('Bea Trees');
    const t = await tree(bea);
    const third = await createFolder(seeder.client, bea.session, 'home', 'third');
    const file = await uploadFile(seeder.client, bea.session, t.deepest, 'm.bin', text(700));
    await expectChange(bea, [...t.chain, t.other, t.x], [third, 'trash'], () => seeder.client.moveInto(bea.session, nodeId(file), nodeId(t.x)));
    expect((await treeOf(bea, t.deepest)).tree_size).toBe(0);
    expect((await treeOf(bea, t.x)).tree_size).toBe(700);
    // A whole folder moved: its bytes leave one chain and join the other.
    const d = t.chain[4] as string;
    await expectChange(bea, [...t.chain.slice(0, 4), d, third], [t.other, t.x], async () => {
      await uploadFile(seeder.client, bea.session, t.deepest, 'n.bin', text(300));
      await seeder.client.moveInto(bea.session, nodeId(d), nodeId(third));
    });
    expect((await treeOf(bea, third)).tree_size).toBe(300);
    await expectChange(bea, ['home', t.other, t.x, 'trash'], [third], () => seeder.client.remove(bea.session, nodeId(file)));
    expect((await treeOf(bea, 'trash')).tree_size).toBe(700);
    await expectChange(bea, ['home', t.other, t.x, 'trash'], [third], () => seeder.client.restoreFromTrash(bea.session, nodeId(file)));
    expect((await treeOf(bea, 'trash')).tree_size).toBe(0);
    await seeder.client.remove(bea.session, nodeId(d));
    await expectChange(bea, ['trash'], ['home', third, t.other], () => seeder.client.remove(bea.session, nodeId(d)));
    expect((await treeOf(bea, 'trash')).tree_size).toBe(0);
  });

  it('a copy: the target chain grows by the bytes copied, each copied folder starts with its own size', async () => {
    const cy = await seeder.user('Cy Trees');
    const t = await tree(cy);
    await uploadFile(seeder.client, cy.session, t.deepest, 'one.bin', text(100));
    await uploadFile(seeder.client, cy.session, t.chain[2] as string, 'two.bin', text(50));
    const b = t.chain[2] as string;
    await expectChange(cy, ['home', t.other, t.x], t.chain.slice(1), () => seeder.client.copyInto(cy.session, nodeId(b), nodeId(t.x)));
    expect((await treeOf(cy, t.x)).tree_size).toBe(150);
    const copies = await seeder.client.listFolder(cy.session, nodeId(t.x));
    expect(copies.map((e) => [e.name, e.treeSizeBytes])).toEqual([['b', 150]]);
  });

  it('a copy accepted into incoming changes incoming and not home; a change in a group drive changes the group chain only', async () => {
    const dan = await seeder.user('Dan Trees');
    const eve = await seeder.user('Eve Trees');
    const folder = await createFolder(seeder.client, dan.session, 'home', 'for eve');
    await uploadFile(seeder.client, dan.session, folder, 'gift.txt', text(42));
    expect((await as(seeder.client, dan, 'POST', `/api/nodes/${folder}`, { share_copy_with: [eve.uuid] })).status).toBeLessThan(300);
    const [offer] = await dataOf<Array<{ uuid: string }>>(as(seeder.client, eve, 'GET', '/api/user/pending_incoming'));
    await expectChange(eve, ['incoming'], ['home', 'trash'], () => dataOf(as(seeder.client, eve, 'PUT', '/api/user/pending_incoming', { uuid: offer?.uuid, action: 'accept' })));
    expect((await treeOf(eve, 'incoming')).tree_size).toBe(42);

    const group = await ga.group(`Trees ${(counter += 1)}`);
    await ga.member(group, eve.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    const g = await tree(eve, `home:${group}`);
    await expectChange(eve, g.chain, ['home', 'incoming', g.other], () => uploadFile(seeder.client, eve.session, g.deepest, 'team.txt', text(64)));
    expect((await treeOf(eve, `home:${group}`)).tree_size).toBe(64);
    const listed = await seeder.client.listFolder(eve.session, nodeId(`home:${group}`));
    expect(listed.find((e) => e.name === 'a')).toMatchObject({ kind: 'folder', treeSizeBytes: 64, treeEtag: (await treeOf(eve, g.chain[1] as string)).tree_etag });
  });

  it('compaction merges rows without changing any version or size', async () => {
    const fay = await seeder.user('Fay Trees');
    const t = await tree(fay);
    for (let i = 0; i < 5; i++) await uploadFile(seeder.client, fay.session, t.deepest, `f${i}.bin`, text(10 + i));
    const before = await Promise.all(t.chain.map((id) => treeOf(fay, id)));
    const rows = async () => Number((await store.ctx.storage.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM tree_changes WHERE folder_uuid = ?', [t.deepest]))?.n);
    expect(await rows()).toBeGreaterThan(1);
    expect(await compactTreeChanges(store.ctx.storage.sql, { threshold: 1 })).toBeGreaterThan(0);
    expect(await rows()).toBe(1);
    expect(await Promise.all(t.chain.map((id) => treeOf(fay, id)))).toEqual(before);
    await expectChange(fay, t.chain, [t.other], () => uploadFile(seeder.client, fay.session, t.deepest, 'after.bin', text(7)));
  });

  it('twenty uploads in parallel into different folders of one drive all succeed, and the sizes are exact', async () => {
    const gus = await seeder.user('Gus Trees');
    const top = await createFolder(seeder.client, gus.session, 'home', 'busy');
    const folders: string[] = [];
    for (let i = 0; i < 20; i++) folders.push(await createFolder(seeder.client, gus.session, top, `d${i}`));
    const before = await treeOf(gus, 'home');
    const results = await Promise.allSettled(folders.map((folder, i) => uploadFile(seeder.client, gus.session, folder, 'p.bin', text(100 + i))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const expected = 20 * 100 + (19 * 20) / 2;
    expect(await treeOf(gus, top)).toMatchObject({ tree_size: expected });
    const after = await treeOf(gus, 'home');
    expect(after.tree_size).toBe(expected);
    expect(after.tree_etag).not.toBe(before.tree_etag);
    for (const [i, folder] of folders.entries()) expect((await treeOf(gus, folder)).tree_size).toBe(100 + i);
  });
});
