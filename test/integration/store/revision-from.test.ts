/**
 * POST /api/nodes/{file}/revisions (issue 22, item 3; docs/extensions.md "Revision from another
 * file"): the latest revision of `from` becomes the next revision of the file, sharing its blob
 * (one more reference, no byte stored twice), counted in disk_used as any revision; with
 * `consume` the source is deleted for good in the same transaction. Every refusal (400, 403, 404,
 * 409, 507) changes nothing. On SQLite and on PostgreSQL + S3 (integration-pg). An edition 1.0
 * store has no such route (edition.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpStoreClient, NodeId, RawResponse } from '../../../src/store-client/index.js';
import { expectError } from '../../helpers/sharing.js';
import { groupAdmin } from '../../helpers/groups.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { backendBlobs, blobHashOf, createSeeder, entryNamed, names, people, raw, readBlobRefs, readDiskUsed, uploadFile, type SeededUser } from '../../helpers/seed.js';

let store: TestStore;
let client: HttpStoreClient;
let person: ReturnType<typeof people>;
let admin: Awaited<ReturnType<typeof createSeeder>>['admin'];

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

const revise = (who: SeededUser, file: string, body: unknown): Promise<RawResponse> => raw(client, who.session, 'POST', `/api/nodes/${file}/revisions`, body);

async function text(who: SeededUser, file: string, version?: number): Promise<string> {
  const download = await client.download(who.session, file as NodeId, 'f', version === undefined ? {} : { version });
  return Buffer.concat(await download.body.toArray()).toString();
}

/** What a refusal must leave as it was. */
async function snapshot(who: SeededUser, ...files: string[]): Promise<string> {
  const rows = await Promise.all(files.map(async (id) => `${id}:${(await client.details(who.session, id as NodeId)).name}:${await text(who, id)}`));
  return `${rows.join('|')} used=${await readDiskUsed(store, who.uuid)} home=${(await names(client, who.session, 'home')).join(',')} trash=${(await names(client, who.session, 'trash')).join(',')}`;
}

describe('POST /api/nodes/{file}/revisions', () => {
  it('COPY-like (consume false): a new revision sharing the blob, usage grows by its size, the source stays', async () => {
    const alice = await person('Alice Revise');
    const dest = await uploadFile(client, alice.session, 'home', 'doc.txt', 'first content of doc');
    const source = await uploadFile(client, alice.session, 'home', 'tmp.txt', 'second content, from tmp');
    const hash = blobHashOf(Buffer.from('second content, from tmp'));
    const blobsBefore = (await backendBlobs(store)).length;
    const usedBefore = await readDiskUsed(store, alice.uuid);
    const res = await revise(alice, dest, { from: source, consume: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', data: { uuid: dest, name: 'doc.txt', revision: 2, size: 24 } });
    expect(await text(alice, dest)).toBe('second content, from tmp');
    expect(await text(alice, dest, 1)).toBe('first content of doc');
    expect(await text(alice, source)).toBe('second content, from tmp');
    expect(await readBlobRefs(store, hash)).toBe(2);
    expect((await backendBlobs(store)).length).toBe(blobsBefore);
    expect(await readDiskUsed(store, alice.uuid)).toBe(usedBefore + 24);
  });

  it('MOVE-like (consume true): the source and its own revisions are gone for good, usage grows by nothing else', async () => {
    const alice = await person('Alice Consume');
    const dest = await uploadFile(client, alice.session, 'home', 'doc.txt', 'v1');
    const temp = await uploadFile(client, alice.session, 'home', 'lu1.tmp', '');
    await uploadFile(client, alice.session, 'home', 'lu1.tmp', 'v2 saved');
    const usedBefore = await readDiskUsed(store, alice.uuid);
    const res = await revise(alice, dest, { from: temp, consume: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await names(client, alice.session, 'home')).toEqual(['doc.txt']);
    expect(await names(client, alice.session, 'trash')).toEqual([]);
    expect((await entryNamed(client, alice.session, 'home', 'doc.txt')).revision).toBe(2);
    expect(await text(alice, dest)).toBe('v2 saved');
    expect(await text(alice, dest, 1)).toBe('v1');
    // The temp's two revisions (0 and 8 bytes) leave, the new one (8 bytes) joins.
    expect(await readDiskUsed(store, alice.uuid)).toBe(usedBefore);
    expect(await readBlobRefs(store, blobHashOf(Buffer.from('v2 saved')))).toBe(1);
  });

  it('at the quota, a save by consume still fits (it frees what it adds); a copy that passes it is 507 and changes nothing', async () => {
    const bea = await person('Bea Quota', { quotaBytes: 100 });
    const dest = await uploadFile(client, bea.session, 'home', 'doc.txt', 'd'.repeat(40));
    const temp = await uploadFile(client, bea.session, 'home', 'tmp.txt', 't'.repeat(50));
    const before = await snapshot(bea, dest, temp);
    expectError(await revise(bea, dest, { from: temp, consume: false }), 507, 'quota_exceeded');
    expect(await snapshot(bea, dest, temp)).toBe(before);
    expect((await revise(bea, dest, { from: temp, consume: true })).status).toBe(200);
    expect(await readDiskUsed(store, bea.uuid)).toBe(90);
  });

  it('refuses what it must, changing nothing: 400 body and same file, 404 unknown, 409 a folder, 403 permissions, trash', async () => {
    const carl = await person('Carl Refused');
    const dest = await uploadFile(client, carl.session, 'home', 'doc.txt', 'kept');
    const source = await uploadFile(client, carl.session, 'home', 'src.txt', 'source');
    await client.createFolder(carl.session, 'home' as NodeId, 'dir');
    const folder = (await entryNamed(client, carl.session, 'home', 'dir')).id;
    const before = await snapshot(carl, dest, source);
    expectError(await revise(carl, dest, {}), 400, 'invalid_request');
    expectError(await revise(carl, dest, { from: source, consume: 'yes' }), 400, 'invalid_request');
    expectError(await revise(carl, dest, { from: dest }), 400, 'invalid_request');
    expectError(await revise(carl, dest, { from: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found');
    expectError(await revise(carl, '00000000-0000-4000-8000-000000000000', { from: source }), 404, 'not_found');
    expectError(await revise(carl, folder, { from: source }), 409, 'not_a_folder');
    expectError(await revise(carl, dest, { from: folder }), 409, 'not_a_folder');
    // Another user's files are unknown to carl.
    const dora = await person('Dora Other');
    const hers = await uploadFile(client, dora.session, 'home', 'hers.txt', 'hers');
    expectError(await revise(carl, dest, { from: hers }), 404, 'not_found');
    expectError(await revise(carl, hers, { from: source }), 404, 'not_found');
    expect(await snapshot(carl, dest, source)).toBe(before);

    // A group: write on the destination, download on the source, delete for consume.
    const ga = groupAdmin(client, admin);
    const team = await ga.group('Revise Team');
    await ga.member(team, dora.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    const teamFile = await uploadFile(client, dora.session, `home:${team}`, 'team.txt', 'team');
    const teamSource = await uploadFile(client, dora.session, `home:${team}`, 'team-src.txt', 'team source');
    const reader = await person('Reader Member');
    await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
    const mine = await uploadFile(client, reader.session, 'home', 'mine.txt', 'mine');
    expectError(await revise(reader, teamFile, { from: mine }), 403, 'forbidden');
    const noDownload = await person('No Download');
    await ga.member(team, noDownload.uuid, { node_permissions: ['read', 'write', 'delete'] });
    const own = await uploadFile(client, noDownload.session, 'home', 'own.txt', 'own');
    expectError(await revise(noDownload, own, { from: teamSource }), 403, 'forbidden', /download/);
    const noDelete = await person('No Delete');
    await ga.member(team, noDelete.uuid, { node_permissions: ['read', 'write', 'download'] });
    const theirs = await uploadFile(client, noDelete.session, 'home', 'theirs.txt', 'theirs');
    expectError(await revise(noDelete, theirs, { from: teamSource, consume: true }), 403, 'forbidden', /delete/);
    expect((await revise(noDelete, theirs, { from: teamSource, consume: false })).status).toBe(200);
    // Another group's files are unknown to carl, who is in no group: neither end, nothing changes.
    const carlBefore = await snapshot(carl, dest, source);
    expectError(await revise(carl, teamFile, { from: source }), 404, 'not_found');
    expectError(await revise(carl, dest, { from: teamSource, consume: true }), 404, 'not_found');
    expect(await snapshot(carl, dest, source)).toBe(carlBefore);
    expect(await text(dora, teamFile)).toBe('team');
    expect(await text(dora, teamSource)).toBe('team source');

    // A destination in the trash is refused as an upload there is.
    await client.remove(carl.session, dest as NodeId);
    expectError(await revise(carl, dest, { from: source }), 403, 'virtual_folder');
    expect(await text(carl, source)).toBe('source');
  });
});
