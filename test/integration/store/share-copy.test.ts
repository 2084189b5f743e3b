/**
 * share_copy_with and the user's pending incoming shares (docs/store-semantics.md "Sharing"):
 * each recipient is offered a copy of the node as it was when shared, held as a snapshot that
 * shares the blobs (no blob bytes, nobody's disk_used) until accepted into `incoming` (the
 * recipient's usage, still no new blob bytes) or rejected (references released, orphaned blob
 * files unlinked). The copy is independent of the original afterwards. Every refusal changes
 * nothing; a failure in the middle of a transition leaves everything as it was.
 */
import { INLINE_MAX_BYTES } from '../../../src/store/blobs/staging.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { createSeeder } from '../../helpers/seed.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';
import { blobInBackend, readBlobStored, blobHashOf, readBlobRefs, createFolder, readDiskUsed, nodeRow, topLevelRow, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { readCountRows, dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { as, readBlobBytes, readChildNames, expectError, readIncomingRow, readText, readSnapshotCounts } from '../../helpers/sharing.js';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let alice: SeededUser;
let bob: SeededUser;
let carol: SeededUser;
let counter = 0;

beforeAll(async () => {
  ({ store, seeder, ga } = await startGroupStore());
  alice = await seeder.user('Alice Sharer');
  bob = await seeder.user('Bob Recipient');
  carol = await seeder.user('Carol Stranger');
});

afterAll(() => stopGroupStore({ seeder, store }));

/** Distinct content per call, so blob counts of one test never mix with another's. */
const text = (label: string): string => `${label} #${(counter += 1)} ${'x'.repeat(counter % 13)}`;

const shareCopy = (who: SeededUser, node: string, recipients: unknown, extra: Record<string, unknown> = {}) =>
  as(seeder.client, who, 'POST', `/api/nodes/${node}`, { share_copy_with: recipients, ...extra });
const pendingOf = (who: SeededUser) => dataOf<Array<Record<string, unknown>>>(as(seeder.client, who, 'GET', '/api/user/pending_incoming'));
const answer = (who: SeededUser, uuid: string, action: string) => as(seeder.client, who, 'PUT', '/api/user/pending_incoming', { uuid, action });

interface Tree {
  folder: string;
  a: string;
  b: string;
  contentA: string;
  contentB: string;
}

/** `Report <n>/a.txt` and `Report <n>/sub/b.txt` in alice's home. */
async function report(): Promise<Tree> {
  const folder = await createFolder(seeder.client, alice.session, 'home', `Report ${(counter += 1)}`);
  const sub = await createFolder(seeder.client, alice.session, folder, 'sub');
  const contentA = text('a');
  const contentB = text('b');
  const a = await uploadFile(seeder.client, alice.session, folder, 'a.txt', contentA);
  const b = await uploadFile(seeder.client, alice.session, sub, 'b.txt', contentB);
  return { folder, a, b, contentA, contentB };
}

const bytesOf = (...contents: string[]): number => contents.reduce((n, c) => n + Buffer.byteLength(c), 0);

/** Everything a refused or failed transition must leave as it was. */
async function stateOf(): Promise<unknown> {
  const { sql } = store.ctx.storage;
  return {
    incoming: await sql.all('SELECT uuid, state, snapshot_uuid, node_uuid FROM incoming_shares ORDER BY uuid'),
    snapshots: await readSnapshotCounts(store),
    blobs: await sql.all('SELECT hash, refs FROM blobs ORDER BY hash'),
    nodes: await readCountRows(store, 'SELECT COUNT(*) AS n FROM nodes'),
    used: await Promise.all([alice, bob, carol].map((u) => readDiskUsed(store, u.uuid))),
    blobBytes: await readBlobBytes(store),
  };
}

async function offerTo(recipient: SeededUser, t: Tree): Promise<Record<string, unknown>> {
  expect((await shareCopy(alice, t.folder, [recipient.uuid])).status).toBe(204);
  const pending = await pendingOf(recipient);
  const offer = pending.find((p) => p.source_uuid === t.folder);
  if (!offer) throw new Error('no pending share for the folder');
  return offer;
}

describe('sharing a copy', () => {
  it('offers the recipient a pending copy that costs no blob bytes and no disk_used', async () => {
    const t = await report();
    const before = { alice: await readDiskUsed(store, alice.uuid), bob: await readDiskUsed(store, bob.uuid), blobBytes: await readBlobBytes(store) };
    const res = await shareCopy(alice, t.folder, [bob.uuid]);
    expect({ status: res.status, body: res.body }).toEqual({ status: 204, body: '' });

    const pending = await pendingOf(bob);
    const offer = pending.find((p) => p.source_uuid === t.folder);
    expect(offer).toEqual({
      uuid: expect.any(String),
      name: (await nodeRow(store, t.folder))?.name,
      type: 'Dir',
      size: bytesOf(t.contentA, t.contentB),
      sharer_uuid: alice.uuid,
      sharer_fullname: 'Alice Sharer',
      shared_at: expect.any(Number),
      source_uuid: t.folder,
    });
    expect(await readIncomingRow(store, offer!.uuid as string)).toMatchObject({ state: 'pending', recipient_type: 'User', recipient_uuid: bob.uuid, node_uuid: null });
    const snapshot = (await readIncomingRow(store, offer!.uuid as string))!.snapshot_uuid as string;
    // Entries by path (the walk's order, hence the ids, is the engine's); a parent always comes first.
    type Entry = { id: number; parent_id: number | null; name: string; type: string; size: number };
    const entries = await store.ctx.storage.sql.all<Entry>('SELECT id, parent_id, name, type, size FROM snapshot_entries WHERE snapshot_uuid = ? ORDER BY id', [snapshot]);
    const byId = new Map(entries.map((e) => [e.id, e]));
    const pathOf = (e: Entry): string => (e.parent_id === null ? e.name : `${pathOf(byId.get(e.parent_id)!)}/${e.name}`);
    expect(entries.every((e) => e.parent_id === null || e.parent_id < e.id)).toBe(true);
    const root = (await nodeRow(store, t.folder))?.name;
    expect(entries.map((e) => ({ path: pathOf(e), type: e.type, size: e.size })).sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { path: `${root}`, type: 'Dir', size: 0 },
      { path: `${root}/a.txt`, type: 'File', size: bytesOf(t.contentA) },
      { path: `${root}/sub`, type: 'Dir', size: 0 },
      { path: `${root}/sub/b.txt`, type: 'File', size: bytesOf(t.contentB) },
    ]);
    expect(await readBlobRefs(store, blobHashOf(t.contentA))).toBe(2);
    expect(await readBlobRefs(store, blobHashOf(t.contentB))).toBe(2);
    expect({ alice: await readDiskUsed(store, alice.uuid), bob: await readDiskUsed(store, bob.uuid), blobBytes: await readBlobBytes(store) }).toEqual(before);
    expect(await readChildNames(store, (await topLevelRow(store, bob.uuid, 'incoming')).uuid)).not.toContain((await nodeRow(store, t.folder))?.name);
    expect(await pendingOf(alice)).toEqual([]);
    expect(await pendingOf(carol)).toEqual([]);
  });

  it('accepting puts the copy in incoming: the recipient’s disk_used grows, the blob folder does not', async () => {
    const t = await report();
    const offer = await offerTo(bob, t);
    const before = { alice: await readDiskUsed(store, alice.uuid), bob: await readDiskUsed(store, bob.uuid), blobBytes: await readBlobBytes(store) };

    const accepted = await dataOf<{ uuid: string; state: string; node_uuid: string }>(answer(bob, offer.uuid as string, 'accept'));
    expect(accepted).toEqual({ uuid: offer.uuid, state: 'accepted', node_uuid: expect.any(String) });
    const copy = await nodeRow(store, accepted.node_uuid);
    expect(copy).toMatchObject({ owner_uuid: bob.uuid, parent_uuid: (await topLevelRow(store, bob.uuid, 'incoming')).uuid, name: (await nodeRow(store, t.folder))?.name, type: 'Dir' });
    const listing = await dataOf<Array<{ name: string; uuid: string }>>(as(seeder.client, bob, 'GET', `/api/nodes/${copy!.uuid}/dirlist`));
    expect(listing.map((e) => e.name)).toEqual(['sub', 'a.txt']);
    const aCopy = listing.find((e) => e.name === 'a.txt')!.uuid;
    expect(await nodeRow(store, aCopy)).toMatchObject({ revision: 1, owner_uuid: bob.uuid });
    expect(await readText(store, bob.session, aCopy)).toBe(t.contentA);

    expect(await readDiskUsed(store, bob.uuid)).toBe(before.bob + bytesOf(t.contentA, t.contentB));
    expect(await readDiskUsed(store, alice.uuid)).toBe(before.alice);
    expect(await readBlobBytes(store)).toBe(before.blobBytes);
    // The snapshot's references became the copy's revisions'.
    expect(await readBlobRefs(store, blobHashOf(t.contentA))).toBe(2);
    expect(await readIncomingRow(store, offer.uuid as string)).toMatchObject({ state: 'accepted', snapshot_uuid: null, answered_by: bob.uuid, node_uuid: copy!.uuid });
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM snapshots WHERE source_uuid = ?', t.folder)).toBe(0);
    expect((await pendingOf(bob)).map((p) => p.uuid)).not.toContain(offer.uuid);
  });

  it('the accepted copy and the original are independent: editing either leaves the other unchanged', async () => {
    const t = await report();
    const offer = await offerTo(bob, t);
    const { node_uuid: copyUuid } = await dataOf<{ node_uuid: string }>(answer(bob, offer.uuid as string, 'accept'));
    const [subCopy] = ((await store.ctx.storage.sql.all("SELECT uuid FROM nodes WHERE parent_uuid = ? AND name = 'sub'", [copyUuid])) as Array<{ uuid: string }>);
    const aCopy = ((await store.ctx.storage.sql.get("SELECT uuid FROM nodes WHERE parent_uuid = ? AND name = 'a.txt'", [copyUuid])) as { uuid: string }).uuid;
    const bCopy = ((await store.ctx.storage.sql.get("SELECT uuid FROM nodes WHERE parent_uuid = ? AND name = 'b.txt'", [subCopy!.uuid])) as { uuid: string }).uuid;

    const blobBytes = await readBlobBytes(store);
    const newA = text('alice edits a');
    await uploadFile(seeder.client, alice.session, t.folder, 'a.txt', newA);
    expect(await readText(store, alice.session, t.a)).toBe(newA);
    expect(await readText(store, bob.session, aCopy)).toBe(t.contentA);
    expect(await readBlobBytes(store)).toBe(blobBytes + bytesOf(newA));

    const newB = text('bob edits b');
    await uploadFile(seeder.client, bob.session, subCopy!.uuid, 'b.txt', newB);
    expect(await readText(store, bob.session, bCopy)).toBe(newB);
    expect(await readText(store, alice.session, t.b)).toBe(t.contentB);
    expect((await nodeRow(store, t.b))?.revision).toBe(1);
    expect(await readBlobBytes(store)).toBe(blobBytes + bytesOf(newA, newB));
  });

  it('delivers the node as it was when shared, even after the original was edited and purged', async () => {
    const t = await report();
    const offer = await offerTo(bob, t);
    await uploadFile(seeder.client, alice.session, t.folder, 'a.txt', text('later'));
    await seeder.client.remove(alice.session, t.folder as never);
    await seeder.client.remove(alice.session, t.folder as never);
    expect(await nodeRow(store, t.folder)).toBeUndefined();
    expect(await readBlobStored(store, blobHashOf(t.contentA))).toBe(true);
    expect(await readBlobRefs(store, blobHashOf(t.contentA))).toBe(1);

    const { node_uuid: copyUuid } = await dataOf<{ node_uuid: string }>(answer(bob, offer.uuid as string, 'accept'));
    const aCopy = ((await store.ctx.storage.sql.get("SELECT uuid FROM nodes WHERE parent_uuid = ? AND name = 'a.txt'", [copyUuid])) as { uuid: string }).uuid;
    expect(await readText(store, bob.session, aCopy)).toBe(t.contentA);
    expect((await readIncomingRow(store, offer.uuid as string))?.source_uuid).toBeNull();
  });

  it('rejecting discards the copy: references released, blob files nobody holds unlinked', async () => {
    const t = await report();
    const offer = await offerTo(bob, t);
    await seeder.client.remove(alice.session, t.folder as never);
    await seeder.client.remove(alice.session, t.folder as never);
    const before = { bob: await readDiskUsed(store, bob.uuid), blobBytes: await readBlobBytes(store), snapshots: await readSnapshotCounts(store) };

    expect(await dataOf(answer(bob, offer.uuid as string, 'reject'))).toEqual({ uuid: offer.uuid, state: 'rejected' });
    for (const content of [t.contentA, t.contentB]) {
      expect(await readBlobRefs(store, blobHashOf(content))).toBe(0);
      expect(await readBlobStored(store, blobHashOf(content))).toBe(false);
    }
    expect(await readBlobBytes(store)).toBe(before.blobBytes - bytesOf(t.contentA, t.contentB));
    expect(await readDiskUsed(store, bob.uuid)).toBe(before.bob);
    expect(await readSnapshotCounts(store)).toEqual({ snapshots: before.snapshots.snapshots - 1, entries: before.snapshots.entries - 4 });
    expect(await readIncomingRow(store, offer.uuid as string)).toMatchObject({ state: 'rejected', snapshot_uuid: null, answered_by: bob.uuid, node_uuid: null });
  });

  it('rejecting keeps blob files the original still uses', async () => {
    const t = await report();
    const offer = await offerTo(bob, t);
    await dataOf(answer(bob, offer.uuid as string, 'reject'));
    expect(await readBlobRefs(store, blobHashOf(t.contentA))).toBe(1);
    expect(await readBlobStored(store, blobHashOf(t.contentA))).toBe(true);
  });

  it('numbers the copy when incoming has that name, as trash does', async () => {
    const content = text('notes');
    const file = await uploadFile(seeder.client, alice.session, 'home', `notes ${counter}.txt`, content);
    const name = (await nodeRow(store, file))!.name;
    await uploadFile(seeder.client, bob.session, 'incoming', name, text('bob’s own'));
    expect((await shareCopy(alice, file, [bob.uuid])).status).toBe(204);
    const offer = (await pendingOf(bob)).find((p) => p.source_uuid === file)!;
    const { node_uuid } = await dataOf<{ node_uuid: string }>(answer(bob, offer.uuid as string, 'accept'));
    expect((await nodeRow(store, node_uuid))?.name).toBe(name.replace('.txt', ' (2).txt'));
  });

  it('gives every recipient a copy of their own, a group included, and names each only once', async () => {
    const group = await ga.group();
    const t = await report();
    const refs = await readBlobRefs(store, blobHashOf(t.contentA));
    expect((await shareCopy(alice, t.folder, [bob.uuid, group, bob.uuid.toUpperCase()])).status).toBe(204);
    const rows = (await store.ctx.storage.sql.all('SELECT recipient_type, recipient_uuid, snapshot_uuid FROM incoming_shares WHERE source_uuid = ? ORDER BY recipient_type', [t.folder])) as Array<{
      recipient_type: string;
      recipient_uuid: string;
      snapshot_uuid: string;
    }>;
    expect(rows.map((r) => [r.recipient_type, r.recipient_uuid])).toEqual([
      ['Group', group],
      ['User', bob.uuid],
    ]);
    expect(new Set(rows.map((r) => r.snapshot_uuid)).size).toBe(2);
    expect(await readBlobRefs(store, blobHashOf(t.contentA))).toBe(refs + 2);
  });

  it('lets a node through which a private share reaches the caller be shared on (read and download are enough)', async () => {
    const t = await report();
    await dataOf(as(seeder.client, alice, 'POST', `/api/nodes/${t.folder}/shares`, { type: 'private', recipients: [carol.uuid] }));
    expect((await shareCopy(carol, t.a, [bob.uuid])).status).toBe(204);
    expect((await pendingOf(bob)).find((p) => p.source_uuid === t.a)).toMatchObject({ sharer_uuid: carol.uuid, name: 'a.txt' });
  });
});

describe('refusals', () => {
  it('a full recipient is refused with 507 and the share stays pending', async () => {
    const small = await seeder.user(`Sam Small ${'abcdefghij'[counter % 10]}`, { quotaBytes: 5 });
    const t = await report();
    const offer = await offerTo(small, t);
    const before = await stateOf();
    expectError(await answer(small, offer.uuid as string, 'accept'), 507, 'quota_exceeded');
    expect(await stateOf()).toEqual(before);
    expect(await dataOf(answer(small, offer.uuid as string, 'reject'))).toMatchObject({ state: 'rejected' });
  });

  it('an answered share cannot be answered again (409 share_answered)', async () => {
    const t = await report();
    const accepted = await offerTo(bob, t);
    await dataOf(answer(bob, accepted.uuid as string, 'accept'));
    const rejected = await offerTo(bob, t);
    await dataOf(answer(bob, rejected.uuid as string, 'reject'));
    const before = await stateOf();
    for (const [uuid, action, was] of [
      [accepted.uuid, 'accept', 'accepted'],
      [accepted.uuid, 'reject', 'accepted'],
      [rejected.uuid, 'accept', 'rejected'],
      [rejected.uuid, 'reject', 'rejected'],
    ] as const) {
      expectError(await answer(bob, uuid as string, action), 409, 'share_answered', `uuid: the share was ${was} already`);
    }
    expect(await stateOf()).toEqual(before);
  });

  it('nobody else answers a user’s incoming share (404 as for an unknown one); bad bodies are 400 naming the field', async () => {
    const t = await report();
    const offer = await offerTo(bob, t);
    const before = await stateOf();
    for (const who of [carol, alice]) expectError(await answer(who, offer.uuid as string, 'accept'), 404, 'not_found', 'uuid: no such incoming share');
    expectError(await answer(bob, '00000000-0000-4000-8000-000000000001', 'accept'), 404, 'not_found', 'uuid: no such incoming share');
    expectError(await answer(bob, 'not-a-uuid', 'accept'), 404, 'not_found');
    expectError(await answer(bob, offer.uuid as string, 'maybe'), 400, 'invalid_request', /^action: /);
    expectError(await as(seeder.client, bob, 'PUT', '/api/user/pending_incoming', { uuid: offer.uuid, action: 'accept', extra: 1 }), 400, 'invalid_request', /extra/);
    expectError(await as(seeder.client, bob, 'PUT', '/api/user/pending_incoming', { action: 'accept' }), 400, 'invalid_request', /^uuid: /);
    expect(await stateOf()).toEqual(before);
  });

  it('refuses what cannot be shared, and whom it cannot be shared with, changing nothing', async () => {
    await ga.organization('elsewhere');
    const foreign = await seeder.client.createUser(seeder.admin, { fullname: 'Fiona Foreign', email: 'fiona@example.test', password: 'Secret-Passw0rd' }, 'elsewhere');
    const foreignGroup = await ga.group('Foreign team', { orgId: 'elsewhere' });
    const t = await report();
    const trashed = await uploadFile(seeder.client, alice.session, 'home', `old ${counter}.txt`, text('old'));
    await seeder.client.remove(alice.session, trashed as never);
    const unknown = '00000000-0000-4000-8000-00000000abcd';
    const before = await stateOf();
    const cases: Array<[string, Promise<import('../../../src/store-client/index.js').RawResponse>, number, string, RegExp | string]> = [
      ['a top-level folder', shareCopy(alice, 'home', [bob.uuid]), 403, 'top_level_immutable', 'a top-level folder cannot be shared'],
      ['a node in trash', shareCopy(alice, trashed, [bob.uuid]), 409, 'node_in_trash', /restore it first/],
      ['oneself', shareCopy(alice, t.a, [bob.uuid, alice.uuid]), 400, 'invalid_request', 'share_copy_with.1: you cannot share with yourself'],
      ['an unknown UUID', shareCopy(alice, t.a, [unknown]), 404, 'not_found', `share_copy_with: no user or group ${unknown} in your organization`],
      ['a user of another organization', shareCopy(alice, t.a, [foreign]), 404, 'not_found', `share_copy_with: no user or group ${foreign} in your organization`],
      ['a group of another organization', shareCopy(alice, t.a, [foreignGroup]), 404, 'not_found', `share_copy_with: no user or group ${foreignGroup} in your organization`],
      ['a malformed UUID', shareCopy(alice, t.a, ['bob']), 400, 'invalid_request', 'share_copy_with.0: must be the UUID of a user or group'],
      ['nobody', shareCopy(alice, t.a, []), 400, 'invalid_request', /at least one/],
      ['a string instead of a list', shareCopy(alice, t.a, bob.uuid), 400, 'invalid_request', /share_copy_with must be an array/],
      ['another operation with it', shareCopy(alice, t.a, [bob.uuid], { new_name: 'x' }), 400, 'invalid_request', /exactly one of/],
      ['another user’s node', shareCopy(carol, t.a, [bob.uuid]), 404, 'not_found', 'node not found'],
    ];
    for (const [what, pending, status, code, msg] of cases) {
      const res = await pending;
      expect({ what, status: res.status, body: res.body }).toMatchObject({
        what,
        status,
        body: { code, msg: typeof msg === 'string' ? msg : expect.stringMatching(msg) },
      });
    }
    expect(await stateOf()).toEqual(before);
  });

  it('a group member needs download on the node as well as read (403)', async () => {
    const group = await ga.group();
    const reader = await seeder.user(`Rita Reader ${'abcdefghij'[counter % 10]}`);
    await ga.member(group, reader.uuid, { node_permissions: ['read', 'write'] });
    const file = await uploadFile(seeder.client, reader.session, `home:${group}`, 'team.txt', text('team'));
    const before = await stateOf();
    expectError(await shareCopy(reader, file, [bob.uuid]), 403, 'forbidden', 'download permission required to share a copy');
    expect(await stateOf()).toEqual(before);
    await dataOf(as(seeder.client, seeder.admin, 'PUT', `/api/admin/groups/${group}/users/${reader.uuid}`, { node_permissions: ['read', 'download'] }));
    expect((await shareCopy(reader, file, [bob.uuid])).status).toBe(204);
  });
});

describe('each transition is one transaction', () => {
  /**
   * Makes the statement starting with `sqlStart` fail, as a crash at that point would, while `work`
   * runs: on SQLite by failing its prepare, on PostgreSQL by failing the pool client's query.
   */
  async function failingAt<T>(sqlStart: string, work: () => Promise<T>): Promise<T> {
    const fail = (sql: string): void => {
      if (sql.trimStart().startsWith(sqlStart)) throw new Error(`simulated failure at: ${sqlStart}`);
    };
    const db = store.ctx.db;
    if (db) {
      const prepare = db.prepare;
      db.prepare = ((sql: string) => {
        fail(sql);
        return prepare.call(db, sql);
      }) as typeof db.prepare;
      try {
        return await work();
      } finally {
        db.prepare = prepare;
      }
    }
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const query = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
      if (text !== undefined) {
        try {
          fail(text);
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return query.apply(this, args);
    };
    try {
      return await work();
    } finally {
      proto.query = query;
    }
  }

  it('a share that fails while offering the second recipient leaves no snapshot, no reference, no row', async () => {
    const group = await ga.group();
    const t = await report();
    const before = await stateOf();
    const res = await failingAt('INSERT INTO incoming_shares', () => shareCopy(alice, t.folder, [bob.uuid, group]));
    expectError(res, 500, 'internal');
    expect(await stateOf()).toEqual(before);
  });

  it('an accept that fails at its last statement leaves the share pending, its snapshot whole, and no node', async () => {
    const t = await report();
    const offer = await offerTo(bob, t);
    const before = await stateOf();
    const res = await failingAt('UPDATE incoming_shares SET node_uuid', () => answer(bob, offer.uuid as string, 'accept'));
    expectError(res, 500, 'internal');
    expect(await stateOf()).toEqual(before);
    expect(await dataOf(answer(bob, offer.uuid as string, 'accept'))).toMatchObject({ state: 'accepted' });
  });

  it('a reject that fails after the snapshot is gone keeps the share pending and every reference', async () => {
    const t = await report();
    const offer = await offerTo(bob, t);
    const before = await stateOf();
    const res = await failingAt('UPDATE blobs SET refs = refs - 1', () => answer(bob, offer.uuid as string, 'reject'));
    expectError(res, 500, 'internal');
    expect(await stateOf()).toEqual(before);
  });
});

describe('a restart', () => {
  it('keeps a blob only a pending share holds: the orphan sweep counts snapshot references', async () => {
    const tmp = makeTmpDir();
    try {
      const first = await startTestStore({ dataDir: tmp.dir });
      const firstSeeder = await createSeeder(first);
      const owner = await firstSeeder.user('Owen Owner');
      const friend = await firstSeeder.user('Fran Friend');
      // Past the inline limit: the orphan sweep looks at blob files.
      const content = `only the snapshot holds these bytes ${'.'.repeat(INLINE_MAX_BYTES)}`;
      const file = await uploadFile(firstSeeder.client, owner.session, 'home', 'held.txt', content);
      expect((await as(firstSeeder.client, owner, 'POST', `/api/nodes/${file}`, { share_copy_with: [friend.uuid] })).status).toBe(204);
      await firstSeeder.client.remove(owner.session, file as never);
      await firstSeeder.client.remove(owner.session, file as never);
      await firstSeeder.client.close();
      await first.close();

      const second = await startTestStore({ dataDir: tmp.dir });
      const secondSeeder = await createSeeder(second);
      try {
        expect(await blobInBackend(second, blobHashOf(content))).toBe(true);
        const session = await secondSeeder.client.login(friend.email, 'Secret-Passw0rd');
        const [offer] = await dataOf<Array<{ uuid: string }>>(as(secondSeeder.client, session, 'GET', '/api/user/pending_incoming'));
        const { node_uuid } = await dataOf<{ node_uuid: string }>(as(secondSeeder.client, session, 'PUT', '/api/user/pending_incoming', { uuid: offer!.uuid, action: 'accept' }));
        expect(await readText(second, session, node_uuid)).toBe(content);
      } finally {
        await secondSeeder.client.close();
        await second.close();
      }
    } finally {
      tmp.remove();
    }
  });
});
