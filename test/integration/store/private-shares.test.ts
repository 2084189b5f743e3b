/**
 * Private shares (docs/extensions.md "Share links and private shares"; access.ts): a node shared
 * with users or groups is reachable, with its subtree, by each recipient (every member of a
 * recipient group): read and download, plus write when writable and delete below the shared
 * node. It is listed in the recipient's `shared_with_you` (a group's in `shared_with_you:<group>`),
 * paths start there, nothing above the shared node shows, and it stops while the node is in
 * trash or once the share is removed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestStore } from '../../helpers/start-store.js';
import { createFolder, readDiskUsed, nodeRow, people, topLevelRow, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { as, readChildNames, expectError, readText } from '../../helpers/sharing.js';

let store: TestStore;
let seeder: Seeder;
let person: ReturnType<typeof people>;
let ga: GroupAdmin;
let alice: SeededUser;
let counter = 0;

beforeAll(async () => {
  ({ store, seeder, ga } = await startGroupStore());
  person = people(seeder);
  alice = await seeder.user('Alice Owner');
});

afterAll(() => stopGroupStore({ seeder, store }));


interface Shared {
  parent: string;
  folder: string;
  file: string;
  sibling: string;
  share: string;
}

/** alice's `Projects <n>/Plans` (holding plan.txt) shared with `recipients`, beside an unshared sibling. */
async function shared(recipients: string[], writable = false): Promise<Shared> {
  const parent = await createFolder(seeder.client, alice.session, 'home', `Projects ${(counter += 1)}`);
  const folder = await createFolder(seeder.client, alice.session, parent, 'Plans');
  const file = await uploadFile(seeder.client, alice.session, folder, 'plan.txt', `plan ${counter}`);
  const sibling = await uploadFile(seeder.client, alice.session, parent, 'diary.txt', 'private');
  const created = await dataOf<{ share_uuid: string }>(as(seeder.client, alice, 'POST', `/api/nodes/${folder}/shares`, { type: 'private', recipients, writable }));
  return { parent, folder, file, sibling, share: created.share_uuid };
}

const get = (who: SeededUser, path: string) => as(seeder.client, who, 'GET', path);
const access = (who: SeededUser, id: string) => dataOf<string[]>(get(who, `/api/nodes/${id}/myaccess`));
const listedIn = async (who: SeededUser, folder: string) => (await dataOf<Array<{ uuid: string }>>(get(who, `/api/nodes/${folder}/dirlist`))).map((e) => e.uuid);

describe('a read-only private share with a user', () => {
  it('lists the node in their shared_with_you and lets them read and download its subtree, nothing above it', async () => {
    const bob = await person('Bob Reader');
    const s = await shared([bob.uuid]);
    const entries = await dataOf<Array<Record<string, unknown>>>(get(bob, '/api/nodes/shared_with_you/dirlist'));
    expect(entries).toEqual([
      { uuid: s.folder, name: 'Plans', type: 'Dir', is_starred: false, public_shares: 0, private_shares: 1, comment_count: 0, size: 0, updated: expect.any(Number), file_id: expect.any(Number), tree_etag: expect.any(String), tree_size: 6 },
    ]);
    expect(await listedIn(bob, s.folder)).toEqual([s.file]);
    expect(await dataOf(get(bob, `/api/nodes/${s.file}`))).toMatchObject({ name: 'plan.txt', owner_uuid: alice.uuid, owner_fullname: 'Alice Owner' });
    expect(await readText(store, bob.session, s.file)).toMatch(/^plan /);
    expect(await access(bob, s.folder)).toEqual(['read', 'download']);
    expect(await access(bob, s.file)).toEqual(['read', 'download']);
    expect(await dataOf(get(bob, `/api/nodes/${s.file}/path`))).toEqual([
      { name: 'shared_with_you', uuid: 'shared_with_you' },
      { name: 'Plans', uuid: s.folder },
      { name: 'plan.txt', uuid: s.file },
    ]);
    for (const id of [s.parent, s.sibling, `home:${alice.uuid}`, `private_shares:${alice.uuid}`]) expectError(await get(bob, `/api/nodes/${id}`), 404, 'not_found');
    // The owner's private_shares lists it; the recipient's own does not.
    expect(await listedIn(alice, 'private_shares')).toContain(s.folder);
    expect(await listedIn(bob, 'private_shares')).toEqual([]);
  });

  it('refuses every change (403), but a copy into their own tree is theirs', async () => {
    const bob = await person('Bob Reader');
    const s = await shared([bob.uuid]);
    const before = { alice: await readDiskUsed(store, alice.uuid), children: await readChildNames(store, s.folder) };
    const refusals = [
      as(seeder.client, bob, 'POST', `/api/nodes/${s.folder}`, { new_dir: 'mine' }),
      as(seeder.client, bob, 'POST', `/api/nodes/${s.file}`, { new_name: 'renamed.txt' }),
      as(seeder.client, bob, 'GET', `/api/nodes/${s.folder}/upload`),
      as(seeder.client, bob, 'DELETE', `/api/nodes/${s.file}`),
      as(seeder.client, bob, 'POST', `/api/nodes/${s.file}`, { move_to: 'home' }),
    ];
    for (const res of await Promise.all(refusals)) expect({ status: res.status, code: (res.body as { code: string }).code }).toEqual({ status: 403, code: 'forbidden' });
    expect({ alice: await readDiskUsed(store, alice.uuid), children: await readChildNames(store, s.folder) }).toEqual(before);

    expect((await as(seeder.client, bob, 'POST', `/api/nodes/${s.file}`, { copy_to: 'home' })).status).toBe(204);
    expect(await readChildNames(store, (await topLevelRow(store, bob.uuid, 'home')).uuid)).toContain('plan.txt');
    expect(await readDiskUsed(store, bob.uuid)).toBe((await nodeRow(store, s.file))!.size);
  });
});

describe('a writable private share', () => {
  it('lets the recipient write inside (for the owner, on the owner’s quota) and delete below the shared node, not the node itself', async () => {
    const bob = await person('Bob Writer');
    const s = await shared([bob.uuid], true);
    expect(await access(bob, s.folder)).toEqual(['read', 'write', 'download']);
    expect(await access(bob, s.file)).toEqual(['read', 'write', 'delete', 'download']);
    const aliceUsed = await readDiskUsed(store, alice.uuid);
    const added = await uploadFile(seeder.client, bob.session, s.folder, 'notes.txt', 'from bob');
    expect(await nodeRow(store, added)).toMatchObject({ owner_uuid: alice.uuid, parent_uuid: s.folder });
    expect(await readDiskUsed(store, alice.uuid)).toBe(aliceUsed + 8);
    expect(await readDiskUsed(store, bob.uuid)).toBe(0);
    expect((await as(seeder.client, bob, 'POST', `/api/nodes/${s.folder}`, { new_dir: 'Drafts' })).status).toBe(204);

    expectError(await as(seeder.client, bob, 'DELETE', `/api/nodes/${s.folder}`), 403, 'forbidden', 'delete permission required');
    expect((await as(seeder.client, bob, 'DELETE', `/api/nodes/${s.file}`)).status).toBe(204);
    // Into the owner's trash, where the recipient no longer reaches it.
    expect((await nodeRow(store, s.file))?.parent_uuid).toBe((await topLevelRow(store, alice.uuid, 'trash')).uuid);
    expectError(await get(bob, `/api/nodes/${s.file}`), 404, 'not_found');
    expectError(await as(seeder.client, bob, 'DELETE', `/api/nodes/${s.file}`), 404, 'not_found');
  });
});

describe('a private share with a group', () => {
  it('reaches every member through shared_with_you:<group>, nobody else, and ends with the membership', async () => {
    const group = await ga.group();
    const member = await person('Mel Member');
    const outsider = await person('Oz Outsider');
    // Listing the group's shared_with_you, like any folder of the group, needs `read` there.
    await ga.member(group, member.uuid, { node_permissions: ['read'] });
    const s = await shared([group]);
    expect(await listedIn(member, `shared_with_you:${group}`)).toEqual([s.folder]);
    expect(await listedIn(member, 'shared_with_you')).toEqual([]);
    expect(await dataOf(get(member, `/api/nodes/${s.file}/path`))).toEqual([
      { name: 'shared_with_you', uuid: `shared_with_you:${group}` },
      { name: 'Plans', uuid: s.folder },
      { name: 'plan.txt', uuid: s.file },
    ]);
    expect(await access(member, s.file)).toEqual(['read', 'download']);
    expectError(await get(outsider, `/api/nodes/${s.file}`), 404, 'not_found');
    expectError(await get(outsider, `/api/nodes/shared_with_you:${group}/dirlist`), 404, 'not_found');
    await dataOf(as(seeder.client, seeder.admin, 'DELETE', `/api/admin/groups/${group}/users/${member.uuid}`));
    expectError(await get(member, `/api/nodes/${s.file}`), 404, 'not_found');
  });

  it("adds to what a member holds on a group's own node", async () => {
    const group = await ga.group();
    const member = await person('Lea Limited');
    await ga.member(group, member.uuid, { node_permissions: ['read'] });
    const admin = await person('Ada Groupadmin');
    await ga.member(group, admin.uuid, { is_admin: true });
    const folder = await createFolder(seeder.client, admin.session, `home:${group}`, 'Team folder');
    expect(await access(member, folder)).toEqual(['read']);
    await dataOf(as(seeder.client, admin, 'POST', `/api/nodes/${folder}/shares`, { type: 'private', recipients: [member.uuid], writable: true }));
    expect(await access(member, folder)).toEqual(['read', 'write', 'download']);
    // A member's own path is the group's, not shared_with_you.
    expect(await dataOf(get(member, `/api/nodes/${folder}/path`))).toEqual([
      { name: 'home', uuid: `home:${group}` },
      { name: 'Team folder', uuid: folder },
    ]);
  });
});

describe('the end of a private share', () => {
  it('stops while the node is in trash and again after a restore; removing the share ends it', async () => {
    const bob = await person('Bob Reader');
    const s = await shared([bob.uuid]);
    await seeder.client.remove(alice.session, s.folder as never);
    expectError(await get(bob, `/api/nodes/${s.folder}`), 404, 'not_found');
    expectError(await get(bob, `/api/nodes/${s.file}`), 404, 'not_found');
    expect(await listedIn(bob, 'shared_with_you')).toEqual([]);
    expect((await as(seeder.client, alice, 'POST', `/api/nodes/${s.folder}`, { move_to: s.parent })).status).toBe(204);
    expect(await listedIn(bob, 'shared_with_you')).toEqual([s.folder]);
    expect(await readText(store, bob.session, s.file)).toMatch(/^plan /);
    await dataOf(as(seeder.client, alice, 'DELETE', `/api/shares/${s.share}`));
    expectError(await get(bob, `/api/nodes/${s.file}`), 404, 'not_found');
    expect(await listedIn(bob, 'shared_with_you')).toEqual([]);
    expect(await listedIn(alice, 'private_shares')).not.toContain(s.folder);
  });
});
