/**
 * Issue 23, items 3 and 4, the store's side (docs/extensions.md "Trash and revisions from a
 * client"): GET /api/nodes/{file}/revisions lists every kept revision; POST .../revisions
 * `{revision}` restores one as a new revision sharing its blob; trash entries tell where they came
 * from and when; POST /api/nodes/{id}/restore puts one back there; PUT .../skip_trash makes
 * deletes below a folder skip the trash. Access as for node details (404 for what the caller may
 * not see, 403 without the permission); every refusal changes nothing. SQLite and PostgreSQL + S3.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpStoreClient, NodeId, RawResponse, StoreSession } from '../../../src/store-client/index.js';
import { expectError, LATEST } from '../../helpers/sharing.js';
import { call, groupAdmin } from '../../helpers/groups.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { blobHashOf, checksumsOf, createFolder, createSeeder, entryNamed, names, people, raw, readBlobRefs, readDiskUsed, uploadFile, type SeededUser } from '../../helpers/seed.js';

let store: TestStore;
let client: HttpStoreClient;
let person: ReturnType<typeof people>;
let admin: StoreSession;

beforeAll(async () => {
  store = await startTestStore();
  const seeder = await createSeeder(store);
  client = seeder.client;
  admin = seeder.admin;
  person = people(seeder);
});
afterAll(async () => {
  await client?.close();
  await store?.close();
});

const revisions = (who: SeededUser, file: string): Promise<RawResponse> => raw(client, who.session, 'GET', `/api/nodes/${file}/revisions`);
const restoreRevision = (who: SeededUser, file: string, revision: unknown): Promise<RawResponse> => raw(client, who.session, 'POST', `/api/nodes/${file}/revisions`, { revision });
const restore = (who: SeededUser, node: string): Promise<RawResponse> => raw(client, who.session, 'POST', `/api/nodes/${node}/restore`, {});
const skipTrash = (who: SeededUser, folder: string, on: unknown): Promise<RawResponse> => call(client, who.session, 'PUT', `/api/nodes/${folder}/skip_trash`, { skip_trash: on });

async function text(who: SeededUser, file: string, version?: number): Promise<string> {
  const download = await client.download(who.session, file as NodeId, 'f', version === undefined ? {} : { version });
  return Buffer.concat(await download.body.toArray()).toString();
}

describe('revisions', () => {
  it('lists every kept revision with size, time, uploader and checksums; restores one as a new revision sharing its blob', async () => {
    const alice = await person('Alice Versions');
    const file = await uploadFile(client, alice.session, 'home', 'report.odt', 'first draft');
    await uploadFile(client, alice.session, 'home', 'report.odt', 'second draft, longer');
    const res = await revisions(alice, file);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const listed = (res.body as { data: Array<Record<string, unknown>> }).data;
    expect(listed.map((r) => [r.revision, r.size])).toEqual([[1, 11], [2, 20]]);
    expect(listed[0]).toMatchObject({ uploader_uuid: alice.uuid, uploader_fullname: expect.stringMatching(/^Alice Versions/), checksums: checksumsOf('first draft') });
    expect(typeof listed[0]?.created).toBe('number');

    const used = await readDiskUsed(store, alice.uuid);
    const restored = await restoreRevision(alice, file, 1);
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body).toMatchObject({ data: { uuid: file, revision: 3, size: 11 } });
    expect(await text(alice, file)).toBe('first draft');
    expect(await text(alice, file, 2)).toBe('second draft, longer');
    expect(await readBlobRefs(store, blobHashOf(Buffer.from('first draft')))).toBe(2);
    expect(await readDiskUsed(store, alice.uuid)).toBe(used + 11);
    const after = (await client.listRevisions(alice.session, file)).map((r) => r.revision);
    expect(after).toEqual([1, 2, 3]);
  });

  it('refuses what it must and changes nothing: unknown revision 404, bad body 400, folder 409, over quota 507', async () => {
    const bea = await person('Bea Versions', { quotaBytes: 60 });
    const file = await uploadFile(client, bea.session, 'home', 'a.txt', 'x'.repeat(25));
    await uploadFile(client, bea.session, 'home', 'a.txt', 'y'.repeat(5));
    expectError(await restoreRevision(bea, file, 9), 404, 'not_found');
    expectError(await restoreRevision(bea, file, 'one'), 400, 'invalid_request');
    expectError(await restoreRevision(bea, file, 0), 400, 'invalid_request');
    const folder = await createFolder(client, bea.session, 'home', 'dir');
    expectError(await revisions(bea, folder), 409, 'not_a_folder');
    await uploadFile(client, bea.session, 'home', 'b.txt', 'z'.repeat(26));
    expectError(await restoreRevision(bea, file, 1), 507, 'quota_exceeded');
    expect((await entryNamed(client, bea.session, 'home', 'a.txt')).revision).toBe(2);
    expect(await text(bea, file)).toBe('yyyyy');
  });

  it("another user's file is unknown (404 for the listing and the restore); in a group, listing needs read and restoring write", async () => {
    const owner = await person('Owner Versions');
    const stranger = await person('Stranger Versions');
    const file = await uploadFile(client, owner.session, 'home', 'secret.txt', 'v1');
    await uploadFile(client, owner.session, 'home', 'secret.txt', 'v2');
    expectError(await revisions(stranger, file), 404, 'not_found');
    expectError(await restoreRevision(stranger, file, 1), 404, 'not_found');
    expect(await text(owner, file)).toBe('v2');

    const ga = groupAdmin(client, admin);
    const team = await ga.group('Versions Team');
    await ga.member(team, owner.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    const reader = await person('Reader Versions');
    await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
    const teamFile = await uploadFile(client, owner.session, `home:${team}`, 'plan.txt', 'plan 1');
    await uploadFile(client, owner.session, `home:${team}`, 'plan.txt', 'plan 2');
    expect((await revisions(reader, teamFile)).status).toBe(200);
    expectError(await restoreRevision(reader, teamFile, 1), 403, 'forbidden');
    expectError(await revisions(stranger, teamFile), 404, 'not_found');
    expect(await text(owner, teamFile)).toBe('plan 2');
    expect((await restoreRevision(owner, teamFile, 1)).status).toBe(200);
    expect(await text(owner, teamFile)).toBe('plan 1');
  });
});

describe("old revisions are the owner's side (issue 29)", () => {
  const downloadStatus = async (who: SeededUser, file: string, version: number | string): Promise<number> =>
    (await raw(client, who.session, 'GET', `/resources/auth/download/${who.session.fileAccessKey}/${file}/${version}/f`)).status;

  it("a share's recipient, even a writable share's, lists and downloads the current revision only, and restores none; the owner all", async () => {
    const alice = await person('Alice Old Revisions');
    const bob = await person('Bob Old Revisions');
    const folder = await createFolder(client, alice.session, 'home', 'shared drafts');
    const file = await uploadFile(client, alice.session, folder, 'plan.txt', 'the salary list');
    await uploadFile(client, alice.session, folder, 'plan.txt', 'names removed');
    const made = await call(client, alice.session, 'POST', `/api/nodes/${folder}/shares`, { type: 'private', recipients: [bob.uuid], writable: true });
    expect(made.status, JSON.stringify(made.body)).toBe(200);

    const listed = await revisions(bob, file);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body as { data: Array<{ revision: number; size: number }> }).data.map((r) => [r.revision, r.size])).toEqual([[2, 13]]);
    expect(await text(bob, file)).toBe('names removed');
    expect(await downloadStatus(bob, file, 2)).toBe(200);
    expect(await downloadStatus(bob, file, LATEST)).toBe(200);
    const old = await raw(client, bob.session, 'GET', `/resources/auth/download/${bob.session.fileAccessKey}/${file}/1/f`);
    expectError(old, 403, 'forbidden', /old revisions are the owner's/);
    // A revision that was never kept answers the same: nothing told about which are.
    expect(await downloadStatus(bob, file, 9)).toBe(403);
    await expect(client.download(bob.session, file as NodeId, 'f', { version: 1 })).rejects.toMatchObject({ kind: 'forbidden' });
    expectError(await restoreRevision(bob, file, 1), 403, 'forbidden', /owner's/);
    expect(await text(alice, file)).toBe('names removed');
    expect((await client.listRevisions(alice.session, file)).map((r) => r.revision)).toEqual([1, 2]);

    // The owner keeps every revision.
    expect(((await revisions(alice, file)).body as { data: unknown[] }).data).toHaveLength(2);
    expect(await text(alice, file, 1)).toBe('the salary list');
  });
});

describe('trash', () => {
  it('trash entries tell where they came from, under which name and when; a restore puts one back there', async () => {
    const carl = await person('Carl Trash');
    const docs = await createFolder(client, carl.session, 'home', 'docs');
    const deep = await createFolder(client, carl.session, docs, 'deep');
    const file = await uploadFile(client, carl.session, deep, 'note.txt', 'note');
    await uploadFile(client, carl.session, 'home', 'note.txt', 'other');
    const before = Date.now();
    await client.remove(carl.session, file);
    const other = (await entryNamed(client, carl.session, 'home', 'note.txt')).id;
    await client.remove(carl.session, other);
    const listing = (await raw(client, carl.session, 'GET', '/api/nodes/trash/dirlist')).body as { data: Array<{ uuid: string; name: string; trashed?: Record<string, unknown> }> };
    const entry = listing.data.find((e) => e.uuid === file);
    expect(entry?.trashed).toMatchObject({ from: deep, from_path: 'home/docs/deep', name: 'note.txt' });
    expect(entry?.trashed?.at as number).toBeGreaterThanOrEqual(before - 1000);
    const second = listing.data.find((e) => e.uuid === other);
    expect(second).toMatchObject({ name: 'note (2).txt', trashed: { from: 'home', from_path: 'home', name: 'note.txt' } });
    // Through the client, as the bridge reads it.
    const seen = (await client.listFolder(carl.session, 'trash' as NodeId)).find((e) => e.id === file);
    expect(seen?.trashed).toMatchObject({ originalName: 'note.txt', fromPath: ['home', 'docs', 'deep'] });

    // The folder deleted later: the entry still names where it was, and a restore goes home.
    await client.remove(carl.session, docs);
    const later = ((await raw(client, carl.session, 'GET', '/api/nodes/trash/dirlist')).body as typeof listing).data.find((e) => e.uuid === file);
    expect(later?.trashed).toMatchObject({ from: null, from_path: 'home/docs/deep', name: 'note.txt' });
    const res = await restore(carl, file);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ data: { uuid: file, name: 'note.txt', parent: 'home', parent_path: 'home' } });
    expect(await names(client, carl.session, 'home')).toEqual(['note.txt']);

    // Back into its folder, numbered when the name is taken there.
    const restoredDocs = await restore(carl, docs);
    expect(restoredDocs.body).toMatchObject({ data: { name: 'docs', parent: 'home' } });
    const again = await uploadFile(client, carl.session, deep, 'x.txt', 'x1');
    await client.remove(carl.session, again);
    await uploadFile(client, carl.session, deep, 'x.txt', 'x2');
    expect((await restore(carl, again)).body).toMatchObject({ data: { name: 'x (2).txt', parent: deep, parent_path: 'home/docs/deep' } });
    expect(await names(client, carl.session, deep)).toEqual(['x (2).txt', 'x.txt']);
    expect(await text(carl, again)).toBe('x1');

    // Not in trash: 409; someone else's: 404.
    expectError(await restore(carl, again), 409, 'not_in_trash');
    const stranger = await person('Stranger Trash');
    const theirs = await uploadFile(client, stranger.session, 'home', 't.txt', 't');
    await client.remove(stranger.session, theirs);
    expectError(await restore(carl, theirs), 404, 'not_found');
    expect(await names(client, stranger.session, 'trash')).toEqual(['t.txt']);
  });

  it("an origin folder that went to another owner since is not named, and a restore goes home", async () => {
    const erin = await person('Erin Moved');
    const ga = groupAdmin(client, admin);
    const team = await ga.group('Moved Team');
    await ga.member(team, erin.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    const project = await createFolder(client, erin.session, 'home', 'project');
    const file = await uploadFile(client, erin.session, project, 'draft.txt', 'draft');
    await client.remove(erin.session, file);
    await client.moveInto(erin.session, project, `home:${team}` as NodeId);
    const listing = (await raw(client, erin.session, 'GET', '/api/nodes/trash/dirlist')).body as { data: Array<{ uuid: string; trashed?: Record<string, unknown> }> };
    expect(listing.data.find((e) => e.uuid === file)?.trashed).toMatchObject({ from: null, from_path: null, name: 'draft.txt' });
    const res = await restore(erin, file);
    expect(res.body).toMatchObject({ data: { name: 'draft.txt', parent: 'home', parent_path: 'home' } });
    expect(await names(client, erin.session, 'home')).toEqual(['draft.txt']);
  });

  it('a folder marked "delete for good" sends deletes below it past the trash, freeing their bytes; the mark needs delete', async () => {
    const dana = await person('Dana Backup');
    const backups = await createFolder(client, dana.session, 'home', 'backups');
    const inner = await createFolder(client, dana.session, backups, 'snap');
    const pack = await uploadFile(client, dana.session, inner, 'pack-1', 'p'.repeat(100));
    const kept = await uploadFile(client, dana.session, 'home', 'keep.txt', 'keep');
    const res = await skipTrash(dana, backups, true);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await client.details(dana.session, backups)).skipTrash).toBe(true);
    expect((await client.details(dana.session, inner)).skipTrash).toBeUndefined();
    const used = await readDiskUsed(store, dana.uuid);
    await client.remove(dana.session, pack);
    expect(await names(client, dana.session, 'trash')).toEqual([]);
    expect(await readDiskUsed(store, dana.uuid)).toBe(used - 100);
    // Outside the folder deletes still go to the trash.
    await client.remove(dana.session, kept);
    expect(await names(client, dana.session, 'trash')).toEqual(['keep.txt']);
    // Cleared: deletes below go to the trash again.
    expect((await skipTrash(dana, backups, false)).status).toBe(200);
    await client.remove(dana.session, inner);
    expect((await names(client, dana.session, 'trash')).sort()).toEqual(['keep.txt', 'snap']);

    expectError(await skipTrash(dana, backups, 'yes'), 400, 'invalid_request');
    expectError(await skipTrash(dana, 'trash', true), 403, 'virtual_folder');
    expectError(await skipTrash(dana, (await entryNamed(client, dana.session, 'trash', 'keep.txt')).id, true), 409, 'not_a_folder');
    const stranger = await person('Stranger Backup');
    expectError(await skipTrash(stranger, backups, true), 404, 'not_found');

    // A group drive: members with delete may mark it; a reader may not.
    const ga = groupAdmin(client, admin);
    const team = await ga.group('Backup Team');
    await ga.member(team, dana.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    const reader = await person('Reader Backup');
    await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
    expectError(await skipTrash(reader, `home:${team}`, true), 403, 'forbidden');
    expect((await skipTrash(dana, `home:${team}`, true)).status).toBe(200);
    const teamFile = await uploadFile(client, dana.session, `home:${team}`, 'old.tar', 'old');
    await client.remove(dana.session, teamFile);
    expect(await names(client, dana.session, `trash:${team}`)).toEqual([]);
  });
});
