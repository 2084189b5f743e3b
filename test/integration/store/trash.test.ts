/**
 * DELETE, trash and the bytes behind copies on a real store: delete moves into trash with its
 * origin, names clash into "name (n).ext", DELETE inside trash frees quota and unlinks the
 * blob when its last reference goes, copies share blobs but count toward quota, folder copies
 * copy the subtree, move_to out of trash restores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type HttpStoreClient } from '../../../src/store-client/index.js';
import { numberedName } from '../../../src/store/ops/tree.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { call } from '../../helpers/groups.js';
import { expectError } from '../../helpers/sharing.js';
import {
  readBlobStored,
  backendBlobs,
  readBlobRefs,
  createFolder,
  createSeeder,
  readDiskUsed,
  entryNamed,
  names,
  nodeRow,
  raw,
  blobHashOf,
  topLevelRow,
  uploadFile,
  type Seeder,
  type SeededUser,
} from '../../helpers/seed.js';

let store: TestStore;
let seeder: Seeder;
let client: HttpStoreClient;
let alice: SeededUser;
let trashUuid: string;

beforeAll(async () => {
  store = await startTestStore();
  seeder = await createSeeder(store);
  client = seeder.client;
  alice = await seeder.user('Alice Trash');
  trashUuid = (await topLevelRow(store, alice.uuid, 'trash')).uuid;
});

afterAll(async () => {
  await client?.close();
  await store?.close();
});

let folderCount = 0;
async function scratch(): Promise<string> {
  folderCount += 1;
  return createFolder(client, alice.session, 'home', `trash scratch ${folderCount}`);
}

const del = (id: string) => raw(client, alice.session, 'DELETE', `/api/nodes/${id}`);

/** Distinct content per call, so blob sharing across tests never blurs the counts. */
let contentCount = 0;
const unique = (label: string): string => `${label} #${(contentCount += 1)} ${'.'.repeat(contentCount)}`;

describe('DELETE outside trash', () => {
  it('moves a file into trash, remembering where it came from, and keeps usage and blob', async () => {
    const root = await scratch();
    const content = unique('report');
    const file = await uploadFile(client, alice.session, root, 'report.pdf', content);
    const usedBefore = await readDiskUsed(store, alice.uuid);
    const res = await del(file);
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    expect(await names(client, alice.session, root)).toEqual([]);
    expect(await entryNamed(client, alice.session, 'trash', 'report.pdf')).toMatchObject({ id: file, kind: 'file', revision: 1 });
    expect(await nodeRow(store, file)).toMatchObject({ parent_uuid: trashUuid, name: 'report.pdf', trashed_from: root, trashed_name: 'report.pdf' });
    expect(await readDiskUsed(store, alice.uuid)).toBe(usedBefore);
    expect(await readBlobStored(store, blobHashOf(content))).toBe(true);
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(1);
  });

  it('moves a folder with its whole subtree and bumps both folders\' updated time', async () => {
    const root = await scratch();
    const folder = await createFolder(client, alice.session, root, 'album');
    const inner = await createFolder(client, alice.session, folder, 'inner');
    const photo = await uploadFile(client, alice.session, inner, 'photo.jpg', unique('photo'));
    const t0 = store.clock.now();
    store.clock.advance(7_000);
    await client.remove(alice.session, folder);
    expect(await nodeRow(store, folder)).toMatchObject({ parent_uuid: trashUuid, trashed_from: root });
    expect(await nodeRow(store, inner)).toMatchObject({ parent_uuid: folder, trashed_from: null });
    expect((await nodeRow(store, photo))?.parent_uuid).toBe(inner);
    expect((await client.path(alice.session, photo)).map((e) => e.name)).toEqual(['trash', 'album', 'inner', 'photo.jpg']);
    expect((await nodeRow(store, root))?.updated).toBeGreaterThanOrEqual(t0 + 7_000);
    expect((await topLevelRow(store, alice.uuid, 'trash')).updated).toBeGreaterThanOrEqual(t0 + 7_000);
  });

  it('renames on a clash in trash to "name (2).ext", "name (3).ext" and keeps the original name', async () => {
    const root = await scratch();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const id = await uploadFile(client, alice.session, root, 'clash.txt', unique('clash'));
      await client.remove(alice.session, id);
      ids.push(id);
    }
    const trashNames = (await Promise.all(ids.map((id) => nodeRow(store, id)))).map((row) => row?.name);
    expect(trashNames).toEqual(['clash.txt', 'clash (2).txt', 'clash (3).txt']);
    for (const id of ids) expect(await nodeRow(store, id)).toMatchObject({ trashed_name: 'clash.txt', trashed_from: root });
  });

  it('numbers folders and dot-files without splitting an extension', async () => {
    const root = await scratch();
    const first = await createFolder(client, alice.session, root, 'my.folder');
    await client.remove(alice.session, first);
    const second = await createFolder(client, alice.session, root, 'my.folder');
    await client.remove(alice.session, second);
    expect((await nodeRow(store, second))?.name).toBe('my.folder (2)');
    const dot1 = await uploadFile(client, alice.session, root, '.profile', unique('dot'));
    await client.remove(alice.session, dot1);
    const dot2 = await uploadFile(client, alice.session, root, '.profile', unique('dot'));
    await client.remove(alice.session, dot2);
    expect((await nodeRow(store, dot2))?.name).toBe('.profile (2)');
  });

  it('keeps numbered names within 255 bytes', () => {
    const long = `${'a'.repeat(251)}.txt`;
    const numbered = numberedName(long, 'File', 12);
    expect(Buffer.byteLength(numbered)).toBeLessThanOrEqual(255);
    expect(numbered.endsWith(' (12).txt')).toBe(true);
    const multibyte = numberedName('\u00e9'.repeat(127), 'Dir', 2);
    expect(Buffer.byteLength(multibyte)).toBeLessThanOrEqual(255);
    expect(multibyte.endsWith('\u00e9 (2)')).toBe(true);
  });

  it.each(['home', 'trash', 'incoming', 'favorites'])('refuses deleting %s with 403 top_level_immutable', async (top) => {
    const res = await del(top);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ status: 'error', code: 'top_level_immutable' });
    expect((await del(`${top}:${alice.uuid}`)).status).toBe(403);
    expect((await topLevelRow(store, alice.uuid, top)).parent_uuid).toBeNull();
  });

  it('answers 404 not_found for an unknown node', async () => {
    const res = await del('00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: 'error', code: 'not_found' });
  });
});

describe('DELETE inside trash', () => {
  it('removes the file for good, frees every revision\'s bytes and unlinks the blobs', async () => {
    const root = await scratch();
    const v1 = unique('purge v1');
    const v2 = unique('purge v2 longer');
    const file = await uploadFile(client, alice.session, root, 'purge.txt', v1);
    await uploadFile(client, alice.session, root, 'purge.txt', v2);
    await client.setStarred(alice.session, file, true);
    const usedWithFile = await readDiskUsed(store, alice.uuid);
    await client.remove(alice.session, file);
    expect(await readDiskUsed(store, alice.uuid)).toBe(usedWithFile);

    const res = await del(file);
    expect(res.status).toBe(204);
    expect(await readDiskUsed(store, alice.uuid)).toBe(usedWithFile - Buffer.byteLength(v1) - Buffer.byteLength(v2));
    expect(await nodeRow(store, file)).toBeUndefined();
    expect(await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM revisions WHERE node_uuid = ?', [file])).toEqual({ n: 0 });
    expect(await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM stars WHERE node_uuid = ?', [file])).toEqual({ n: 0 });
    for (const content of [v1, v2]) {
      expect(await readBlobRefs(store, blobHashOf(content))).toBe(0);
      expect(await readBlobStored(store, blobHashOf(content))).toBe(false);
    }
    expect((await client.listFolder(alice.session, nodeId('trash'))).map((e) => e.id)).not.toContain(file);
    expect((await raw(client, alice.session, 'GET', `/api/nodes/${file}`)).status).toBe(404);
  });

  it('keeps a blob file that another file still refers to', async () => {
    const root = await scratch();
    const content = unique('shared');
    const file = await uploadFile(client, alice.session, root, 'shared.txt', content);
    const sub = await createFolder(client, alice.session, root, 'sub');
    await client.copyInto(alice.session, file, nodeId(sub));
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(2);
    await client.remove(alice.session, file);
    await client.remove(alice.session, file);
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(1);
    expect(await readBlobStored(store, blobHashOf(content))).toBe(true);

    const copy = await entryNamed(client, alice.session, sub, 'shared.txt');
    await client.remove(alice.session, copy.id);
    await client.remove(alice.session, copy.id);
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(0);
    expect(await readBlobStored(store, blobHashOf(content))).toBe(false);
  });

  it('removes a whole trashed folder subtree and frees its bytes', async () => {
    const root = await scratch();
    const folder = await createFolder(client, alice.session, root, 'tree');
    const inner = await createFolder(client, alice.session, folder, 'inner');
    const a = unique('tree a');
    const b = unique('tree b');
    await uploadFile(client, alice.session, folder, 'a.txt', a);
    const bId = await uploadFile(client, alice.session, inner, 'b.txt', b);
    const used = await readDiskUsed(store, alice.uuid);
    await client.remove(alice.session, folder);
    await client.remove(alice.session, folder);
    expect(await readDiskUsed(store, alice.uuid)).toBe(used - Buffer.byteLength(a) - Buffer.byteLength(b));
    for (const id of [folder, inner, bId]) expect(await nodeRow(store, id)).toBeUndefined();
    expect(await readBlobStored(store, blobHashOf(a))).toBe(false);
    expect(await readBlobStored(store, blobHashOf(b))).toBe(false);
  });

  it('removes only the child when a node inside a trashed folder is deleted', async () => {
    const root = await scratch();
    const folder = await createFolder(client, alice.session, root, 'keep');
    const child = await uploadFile(client, alice.session, folder, 'drop.txt', unique('drop'));
    const other = await uploadFile(client, alice.session, folder, 'stay.txt', unique('stay'));
    await client.remove(alice.session, folder);
    await client.remove(alice.session, child);
    expect(await nodeRow(store, child)).toBeUndefined();
    expect((await nodeRow(store, folder))?.parent_uuid).toBe(trashUuid);
    expect((await nodeRow(store, other))?.parent_uuid).toBe(folder);
  });
});

describe('copy_to and blobs', () => {
  it('shares the blob of a copied file (refs 2, no new blob file) and counts it toward usage', async () => {
    const root = await scratch();
    const content = unique('copy me');
    const file = await uploadFile(client, alice.session, root, 'copy.txt', content);
    const sub = await createFolder(client, alice.session, root, 'sub');
    const filesBefore = await backendBlobs(store);
    const used = await readDiskUsed(store, alice.uuid);
    await client.copyInto(alice.session, file, nodeId(sub));
    const copy = await entryNamed(client, alice.session, sub, 'copy.txt');
    expect(await backendBlobs(store)).toEqual(filesBefore);
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(2);
    expect(await readDiskUsed(store, alice.uuid)).toBe(used + Buffer.byteLength(content));
    expect(await store.ctx.storage.sql.all('SELECT revision, blob_hash, size, uploader_uuid FROM revisions WHERE node_uuid = ?', [copy.id])).toEqual([
      { revision: 1, blob_hash: blobHashOf(content), size: Buffer.byteLength(content), uploader_uuid: alice.uuid },
    ]);
  });

  it('copies a folder subtree with new identities and the latest revision of each file', async () => {
    const root = await scratch();
    const src = await createFolder(client, alice.session, root, 'src');
    const nested = await createFolder(client, alice.session, src, 'nested');
    await createFolder(client, alice.session, nested, 'empty');
    const one = unique('one');
    const twoOld = unique('two old');
    const twoNew = unique('two new');
    await uploadFile(client, alice.session, src, 'one.txt', one);
    await uploadFile(client, alice.session, nested, 'two.txt', twoOld);
    await uploadFile(client, alice.session, nested, 'two.txt', twoNew);
    const dest = await createFolder(client, alice.session, root, 'dest');
    const used = await readDiskUsed(store, alice.uuid);

    await client.copyInto(alice.session, nodeId(src), nodeId(dest));

    const copiedSrc = await entryNamed(client, alice.session, dest, 'src');
    expect(copiedSrc.id).not.toBe(src);
    expect(await names(client, alice.session, copiedSrc.id)).toEqual(['nested', 'one.txt']);
    const copiedNested = await entryNamed(client, alice.session, copiedSrc.id, 'nested');
    expect(copiedNested.id).not.toBe(nested);
    expect(await names(client, alice.session, copiedNested.id)).toEqual(['empty', 'two.txt']);
    const two = await entryNamed(client, alice.session, copiedNested.id, 'two.txt');
    expect(two).toMatchObject({ revision: 1, sizeBytes: Buffer.byteLength(twoNew) });
    expect(await readBlobRefs(store, blobHashOf(twoNew))).toBe(2);
    expect(await readBlobRefs(store, blobHashOf(twoOld))).toBe(1);
    expect(await readBlobRefs(store, blobHashOf(one))).toBe(2);
    expect(await readDiskUsed(store, alice.uuid)).toBe(used + Buffer.byteLength(one) + Buffer.byteLength(twoNew));
    expect(await names(client, alice.session, src)).toEqual(['nested', 'one.txt']);
  });

  it('copies a file out of trash, leaving the trashed one there', async () => {
    const root = await scratch();
    const file = await uploadFile(client, alice.session, root, 'from-trash.txt', unique('from trash'));
    await client.remove(alice.session, file);
    await client.copyInto(alice.session, file, nodeId(root));
    const copy = await entryNamed(client, alice.session, root, 'from-trash.txt');
    expect(await nodeRow(store, copy.id)).toMatchObject({ trashed_from: null, trashed_name: null });
    expect((await nodeRow(store, file))?.parent_uuid).toBe(trashUuid);
  });

  it('refuses a copy beyond the quota with 507 quota_exceeded and stores nothing', async () => {
    const tight = await seeder.user('Tight Quota', { quotaBytes: 100 });
    const folder = await createFolder(client, tight.session, 'home', 'data');
    const content = 'q'.repeat(60);
    const file = await uploadFile(client, tight.session, folder, 'sixty.bin', content);
    const usedBefore = await readDiskUsed(store, tight.uuid);
    const refsBefore = await readBlobRefs(store, blobHashOf(content));
    const res = await raw(client, tight.session, 'POST', `/api/nodes/${file}`, { copy_to: 'home' });
    expect(res.status).toBe(507);
    expect(res.body).toMatchObject({ status: 'error', code: 'quota_exceeded' });
    expect(await names(client, tight.session, 'home')).toEqual(['data']);
    expect(await readDiskUsed(store, tight.uuid)).toBe(usedBefore);
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(refsBefore);

    const folderCopy = await raw(client, tight.session, 'POST', `/api/nodes/${folder}`, { copy_to: 'incoming' });
    expect(folderCopy.status).toBe(507);
    expect(await names(client, tight.session, 'incoming')).toEqual([]);
  });

  it('counts trash toward the quota and frees it by DELETE inside trash', async () => {
    const tight = await seeder.user('Trash Quota', { quotaBytes: 100 });
    const file = await uploadFile(client, tight.session, 'home', 'big.bin', 'b'.repeat(60));
    await client.remove(tight.session, file);
    const copyBack = await raw(client, tight.session, 'POST', `/api/nodes/${file}`, { copy_to: 'home' });
    expect(copyBack.status).toBe(507);
    await client.remove(tight.session, file);
    expect(await readDiskUsed(store, tight.uuid)).toBe(0);
  });
});

describe('restore with move_to', () => {
  it('moves a trashed node back and forgets its trash origin', async () => {
    const root = await scratch();
    const folder = await createFolder(client, alice.session, root, 'restore me');
    const child = await uploadFile(client, alice.session, folder, 'inside.txt', unique('inside'));
    await client.remove(alice.session, folder);
    expect((await nodeRow(store, folder))?.trashed_from).toBe(root);
    await client.moveInto(alice.session, nodeId(folder), nodeId(root));
    expect(await nodeRow(store, folder)).toMatchObject({ parent_uuid: root, name: 'restore me', trashed_from: null, trashed_name: null });
    expect((await nodeRow(store, child))?.parent_uuid).toBe(folder);
    expect((await client.listFolder(alice.session, nodeId('trash'))).map((e) => e.id)).not.toContain(folder);
  });

  it('restores a renamed trash entry under its trash name, renamable afterwards', async () => {
    const root = await scratch();
    const first = await uploadFile(client, alice.session, root, 'twice.txt', unique('twice 1'));
    await client.remove(alice.session, first);
    const second = await uploadFile(client, alice.session, root, 'twice.txt', unique('twice 2'));
    await client.remove(alice.session, second);
    await client.moveInto(alice.session, second, nodeId(root));
    expect(await names(client, alice.session, root)).toEqual(['twice (2).txt']);
    await client.rename(alice.session, second, 'twice.txt');
    expect(await names(client, alice.session, root)).toEqual(['twice.txt']);
  });

  it('refuses restoring onto an existing name with 409 name_conflict', async () => {
    const root = await scratch();
    const old = await uploadFile(client, alice.session, root, 'busy.txt', unique('busy old'));
    await client.remove(alice.session, old);
    await uploadFile(client, alice.session, root, 'busy.txt', unique('busy new'));
    const res = await raw(client, alice.session, 'POST', `/api/nodes/${old}`, { move_to: root });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'name_conflict' });
    expect((await nodeRow(store, old))?.parent_uuid).toBe(trashUuid);
  });

  it('refuses moving a node from one trash folder into another part of trash', async () => {
    const root = await scratch();
    const folder = await createFolder(client, alice.session, root, 'trashed holder');
    const child = await uploadFile(client, alice.session, folder, 'c.txt', unique('c'));
    await client.remove(alice.session, folder);
    const res = await raw(client, alice.session, 'POST', `/api/nodes/${child}`, { move_to: 'trash' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'virtual_folder' });
  });
});

describe("the owner's trash against a share's recipient (issue 29, defect 2)", () => {
  let owner: SeededUser;
  let bob: SeededUser;
  let shared: string;
  let sub: string;

  const skipTrash = (who: SeededUser, folder: string, on: boolean) => call(client, who.session, 'PUT', `/api/nodes/${folder}/skip_trash`, { skip_trash: on });
  const skipTrashOf = async (uuid: string): Promise<number> => Number((await store.ctx.storage.sql.get<{ skip_trash: number }>('SELECT skip_trash FROM nodes WHERE uuid = ?', [uuid]))?.skip_trash);

  beforeAll(async () => {
    owner = await seeder.user('Alice Owner Trash');
    bob = await seeder.user('Bob Recipient Trash');
    shared = await createFolder(client, owner.session, 'home', 'shared with bob');
    sub = await createFolder(client, owner.session, shared, 'sub');
    const made = await call(client, owner.session, 'POST', `/api/nodes/${shared}/shares`, { type: 'private', recipients: [bob.uuid], writable: true });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
  });

  it('refuses a recipient holding write and delete the mark on a shared folder (403), both ways, and changes nothing', async () => {
    expect(await client.myAccess(bob.session, nodeId(sub))).toEqual(['read', 'write', 'delete', 'download']);
    expectError(await skipTrash(bob, sub, true), 403, 'forbidden', /only the owner/);
    expect(await skipTrashOf(sub)).toBe(0);
    // Nor may he clear the owner's mark.
    expect((await skipTrash(owner, sub, true)).status).toBe(200);
    expectError(await skipTrash(bob, sub, false), 403, 'forbidden', /only the owner/);
    expect(await skipTrashOf(sub)).toBe(1);
    expect((await skipTrash(owner, sub, false)).status).toBe(200);
  });

  it("sends a recipient's delete below a marked folder to the owner's trash; the owner's own delete there is final", async () => {
    expect((await skipTrash(owner, sub, true)).status).toBe(200);
    const content = unique('shared report');
    const file = await uploadFile(client, owner.session, sub, 'report.txt', content);
    const used = await readDiskUsed(store, owner.uuid);
    const res = await raw(client, bob.session, 'DELETE', `/api/nodes/${file}`);
    expect(res.status).toBe(204);
    expect(res.headers['x-driveway-deleted']).toBe('trash');
    expect(await names(client, owner.session, sub)).toEqual([]);
    expect(await entryNamed(client, owner.session, 'trash', 'report.txt')).toMatchObject({ id: file, kind: 'file' });
    expect(await readDiskUsed(store, owner.uuid)).toBe(used);
    expect(await readBlobRefs(store, blobHashOf(content))).toBe(1);
    // The owner's own delete below her mark still skips the trash.
    const hers = await uploadFile(client, owner.session, sub, 'scratch.txt', unique('scratch'));
    const own = await raw(client, owner.session, 'DELETE', `/api/nodes/${hers}`);
    expect(own.headers['x-driveway-deleted']).toBe('for-good');
    expect(await nodeRow(store, hers)).toBeUndefined();
    expect((await skipTrash(owner, sub, false)).status).toBe(200);
  });

  it("clears the marks of a folder moved into another owner's tree, its own and every descendant's", async () => {
    const mine = await createFolder(client, bob.session, 'home', 'bob marked');
    const deep = await createFolder(client, bob.session, mine, 'deep');
    expect((await skipTrash(bob, mine, true)).status).toBe(200);
    expect((await skipTrash(bob, deep, true)).status).toBe(200);
    const inner = await uploadFile(client, bob.session, deep, 'inner.txt', unique('inner'));
    const top = await uploadFile(client, bob.session, mine, 'top.txt', unique('top'));
    const moved = await raw(client, bob.session, 'POST', `/api/nodes/${mine}`, { move_to: shared });
    expect(moved.status, JSON.stringify(moved.body)).toBe(204);
    expect(await nodeRow(store, mine)).toMatchObject({ owner_uuid: owner.uuid, parent_uuid: shared });
    expect([await skipTrashOf(mine), await skipTrashOf(deep)]).toEqual([0, 0]);
    expect((await client.details(owner.session, nodeId(mine))).skipTrash).toBeUndefined();
    // The owner's later deletes there go to her trash.
    for (const file of [top, inner]) expect((await raw(client, owner.session, 'DELETE', `/api/nodes/${file}`)).headers['x-driveway-deleted']).toBe('trash');
    expect((await names(client, owner.session, 'trash')).filter((n) => n === 'top.txt' || n === 'inner.txt').sort()).toEqual(['inner.txt', 'top.txt']);
  });

  it("clears the marks of an owner's folders handed to another owner when the owner is deleted", async () => {
    const leaving = await seeder.user('Leaving Marked Trash');
    const receiver = await seeder.user('Receiving Marked Trash');
    const backups = await createFolder(client, leaving.session, 'home', 'backups');
    expect((await skipTrash(leaving, backups, true)).status).toBe(200);
    expect((await skipTrash(leaving, 'home', true)).status).toBe(200);
    const file = await uploadFile(client, leaving.session, backups, 'pack', unique('pack'));
    const res = await call(client, seeder.admin, 'DELETE', `/api/admin/users/${leaving.uuid}?confirm_delete=yes&transfer_data_to=${receiver.uuid}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await nodeRow(store, backups)).toMatchObject({ owner_uuid: receiver.uuid });
    expect(await skipTrashOf(backups)).toBe(0);
    expect((await raw(client, receiver.session, 'DELETE', `/api/nodes/${file}`)).headers['x-driveway-deleted']).toBe('trash');
    expect(await names(client, receiver.session, 'trash')).toEqual(['pack']);
  });
});
