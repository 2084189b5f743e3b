/**
 * A group's pending incoming shares (GET/PUT /api/groups/{uuid}/pending_incoming): members read
 * the list; `accept_incoming` decides who answers (`admins`: group administrators and the
 * built-in admin; `members`: any member); outsiders get the 404 of an unknown group. An accepted
 * copy lands in `incoming:<group>` and counts against the group's quota, not the member's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestStore } from '../../helpers/start-store.js';
import { blobHashOf, readBlobRefs, readDiskUsed, nodeRow, topLevelRow, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { as, readBlobBytes, expectError, readGroupDiskUsed, readIncomingRow, readSnapshotCounts } from '../../helpers/sharing.js';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let sharer: SeededUser;
let groupAdmin: SeededUser;
let member: SeededUser;
let outsider: SeededUser;
let counter = 0;

beforeAll(async () => {
  ({ store, seeder, ga } = await startGroupStore());
  sharer = await seeder.user('Sid Sharer');
  groupAdmin = await seeder.user('Gina Groupadmin');
  member = await seeder.user('Milo Member');
  outsider = await seeder.user('Otto Outsider');
});

afterAll(() => stopGroupStore({ seeder, store }));

/** A group (default accept_incoming: admins) with an administrator and a plain member who may read and write. */
async function team(quotaBytes = 0): Promise<string> {
  const group = await ga.group(`Team ${(counter += 1)}`, { quotaBytes });
  await ga.member(group, groupAdmin.uuid, { is_admin: true });
  await ga.member(group, member.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
  return group;
}

async function offerTo(group: string): Promise<{ uuid: string; content: string }> {
  const content = `shared with the group #${(counter += 1)}`;
  const file = await uploadFile(seeder.client, sharer.session, 'home', `plan ${counter}.txt`, content);
  expect((await as(seeder.client, sharer, 'POST', `/api/nodes/${file}`, { share_copy_with: [group] })).status).toBe(204);
  const list = await dataOf<Array<{ uuid: string; source_uuid: string }>>(as(seeder.client, member, 'GET', `/api/groups/${group}/pending_incoming`));
  const offer = list.find((p) => p.source_uuid === file);
  if (!offer) throw new Error('no pending share for the group');
  return { uuid: offer.uuid, content };
}

const answer = (who: SeededUser | typeof seeder.admin, group: string, uuid: string, action: string) =>
  as(seeder.client, who, 'PUT', `/api/groups/${group}/pending_incoming`, { uuid, action });

async function stateOf(group: string): Promise<unknown> {
  return {
    incoming: (await store.ctx.storage.sql.all('SELECT uuid, state FROM incoming_shares WHERE recipient_uuid = ? ORDER BY uuid', [group])),
    snapshots: await readSnapshotCounts(store),
    groupUsed: await readGroupDiskUsed(store, group),
    memberUsed: await readDiskUsed(store, member.uuid),
    blobBytes: await readBlobBytes(store),
  };
}

describe("a group's pending incoming list", () => {
  it('is read by every member with records as docs/api.md shows them, and is unknown to outsiders (404)', async () => {
    const group = await team();
    const offer = await offerTo(group);
    for (const who of [member, groupAdmin]) {
      const list = await dataOf<Array<Record<string, unknown>>>(as(seeder.client, who, 'GET', `/api/groups/${group}/pending_incoming`));
      expect(list).toEqual([
        {
          uuid: offer.uuid,
          name: expect.stringMatching(/^plan \d+\.txt$/),
          type: 'File',
          size: Buffer.byteLength(offer.content),
          sharer_uuid: sharer.uuid,
          sharer_fullname: 'Sid Sharer',
          shared_at: expect.any(Number),
          source_uuid: expect.any(String),
        },
      ]);
    }
    expect(await dataOf(as(seeder.client, seeder.admin, 'GET', `/api/groups/${group}/pending_incoming`))).toHaveLength(1);
    expectError(await as(seeder.client, outsider, 'GET', `/api/groups/${group}/pending_incoming`), 404, 'not_found', 'group not found');
    // The group's share is not the member's own.
    expect(await dataOf(as(seeder.client, member, 'GET', '/api/user/pending_incoming'))).toEqual([]);
  });
});

describe('answering a group share', () => {
  it('with accept_incoming admins: a plain member is refused (403), a group administrator accepts into incoming:<group>', async () => {
    const group = await team();
    const offer = await offerTo(group);
    const before = await stateOf(group);
    for (const action of ['accept', 'reject']) {
      expectError(await answer(member, group, offer.uuid, action), 403, 'forbidden', /accept_incoming is admins/);
    }
    expect(await stateOf(group)).toEqual(before);

    const refs = await readBlobRefs(store, blobHashOf(offer.content));
    const accepted = await dataOf<{ node_uuid: string }>(answer(groupAdmin, group, offer.uuid, 'accept'));
    expect(await nodeRow(store, accepted.node_uuid)).toMatchObject({ owner_type: 'Group', owner_uuid: group, parent_uuid: (await topLevelRow(store, group, 'incoming')).uuid });
    expect(await readGroupDiskUsed(store, group)).toBe(Buffer.byteLength(offer.content));
    expect(await readDiskUsed(store, groupAdmin.uuid)).toBe(0);
    expect(await readBlobRefs(store, blobHashOf(offer.content))).toBe(refs);
    expect(await readBlobBytes(store)).toBe((before as { blobBytes: number }).blobBytes);
    expect(await readIncomingRow(store, offer.uuid)).toMatchObject({ state: 'accepted', answered_by: groupAdmin.uuid, recipient_type: 'Group' });
    const listing = await dataOf<Array<{ name: string }>>(as(seeder.client, member, 'GET', `/api/nodes/incoming:${group}/dirlist`));
    expect(listing.map((e) => e.name)).toEqual([(await nodeRow(store, accepted.node_uuid))!.name]);
  });

  it('the built-in admin answers for any group', async () => {
    const group = await team();
    const offer = await offerTo(group);
    expect(await dataOf(answer(seeder.admin, group, offer.uuid, 'reject'))).toEqual({ uuid: offer.uuid, state: 'rejected' });
  });

  it('with accept_incoming members: any member answers', async () => {
    const group = await team();
    await dataOf(as(seeder.client, groupAdmin, 'PUT', `/api/groups/${group}`, { accept_incoming: 'members' }));
    const first = await offerTo(group);
    const second = await offerTo(group);
    expect(await dataOf(answer(member, group, first.uuid, 'accept'))).toMatchObject({ state: 'accepted' });
    expect(await dataOf(answer(member, group, second.uuid, 'reject'))).toEqual({ uuid: second.uuid, state: 'rejected' });
    expectError(await answer(member, group, second.uuid, 'accept'), 409, 'share_answered', 'uuid: the share was rejected already');
  });

  it('refuses non-members (404 group), a share of another recipient (404), and a full group (507, still pending)', async () => {
    const group = await team(5);
    await dataOf(as(seeder.client, groupAdmin, 'PUT', `/api/groups/${group}`, { accept_incoming: 'members' }));
    const offer = await offerTo(group);
    const other = await team();
    const before = await stateOf(group);
    expectError(await answer(outsider, group, offer.uuid, 'accept'), 404, 'not_found', 'group not found');
    // Answered through another group's door, the share is unknown.
    expectError(await answer(groupAdmin, other, offer.uuid, 'accept'), 404, 'not_found', 'uuid: no such incoming share');
    // Nor is it the member's own.
    expectError(await as(seeder.client, member, 'PUT', '/api/user/pending_incoming', { uuid: offer.uuid, action: 'accept' }), 404, 'not_found');
    expectError(await answer(member, group, offer.uuid, 'accept'), 507, 'quota_exceeded');
    expect(await stateOf(group)).toEqual(before);
  });
});
