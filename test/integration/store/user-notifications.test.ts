/**
 * Notifications (docs/api.md "Notifications"; docs/store-semantics.md "Notifications"): a copy
 * offered, a share request waiting for its approver and a request decided each make exactly one
 * row for whom it concerns, in the event's transaction; a drive crossing 90 % of its quota makes
 * one per crossing; a link about to expire one per link (the sweep). The user's realtime_alert_*
 * settings apply. A user lists, reads and deletes only their own (another's id is 404, and
 * deletes nothing); the newest 100 are kept; the change feed announces the user (`@<uuid>`) on
 * each change, for the push door.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreChange } from '../../../src/common/change-feed.js';
import { sweepExpiringLinks } from '../../../src/store/ops/notification-inbox.js';
import { sqliteFolderFeed } from '../../../src/store/storage/dialects/sqlite-changes.js';
import { insertNotifications } from '../../../src/store/storage/notifications.js';
import type { TestStore } from '../../helpers/start-store.js';
import { people, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { as, expectError } from '../../helpers/sharing.js';
import type { StoreSession } from '../../../src/store-client/index.js';

let store: TestStore;
let seeder: Seeder;
let admin: StoreSession;
let ga: GroupAdmin;
let person: ReturnType<typeof people>;

beforeAll(async () => {
  ({ store, seeder, admin, ga } = await startGroupStore());
  person = people(seeder);
});

afterAll(() => stopGroupStore({ seeder, store }));

interface Listed {
  id: number;
  kind: string;
  object_type: string;
  object_id: string;
  subject: string;
  params: Record<string, unknown>;
  created: number;
}

const listOf = (who: SeededUser) => dataOf<Listed[]>(as(seeder.client, who, 'GET', '/api/notifications'));

async function addApprover(workspace: string, approver: string, type = 'share_copy'): Promise<void> {
  await dataOf(as(seeder.client, admin, 'POST', `/api/admin/users/${workspace}/approvers`, { approver_id: approver, share_type: type }));
}

describe('events', () => {
  it('a copy offered makes exactly one notification, for the recipient only', async () => {
    const alice = await person('Alice Sharer');
    const bob = await person('Bob Recipient');
    const file = await uploadFile(seeder.client, alice.session, 'home', 'plan.txt', 'the plan');
    const before = store.clock.now();
    expect((await as(seeder.client, alice, 'POST', `/api/nodes/${file}`, { share_copy_with: [bob.uuid] })).status).toBe(204);
    const pending = await dataOf<Array<{ uuid: string }>>(as(seeder.client, bob, 'GET', '/api/user/pending_incoming'));
    expect(await listOf(bob)).toEqual([
      {
        id: expect.any(Number),
        kind: 'copy_offered',
        object_type: 'incoming_share',
        object_id: pending[0]!.uuid,
        subject: expect.stringMatching(/^Alice Sharer .* shared a copy of "plan\.txt" with you$/),
        params: { name: 'plan.txt', sharer_fullname: expect.stringMatching(/^Alice Sharer/) },
        created: expect.any(Number),
      },
    ]);
    expect((await listOf(bob))[0]!.created).toBeGreaterThanOrEqual(before);
    expect(await listOf(alice)).toEqual([]);
  });

  it('a share request makes one for its approver; approved, one for the requester; the copy then one for the recipient', async () => {
    const requester = await person('Rhea Requester');
    const approver = await person('Paula Approver');
    const recipient = await person('Rory Recipient');
    await addApprover(requester.uuid, approver.uuid);
    const file = await uploadFile(seeder.client, requester.session, 'home', 'report.txt', 'the report');
    const asked = await as(seeder.client, requester, 'POST', `/api/nodes/${file}`, { share_copy_with: [recipient.uuid], comment: 'please' });
    expect(asked.status).toBe(202);
    const pendingUuid = (asked.body as { data: { pending_uuid: string } }).data.pending_uuid;
    const waiting = await listOf(approver);
    expect(waiting).toEqual([
      expect.objectContaining({ kind: 'approval_waiting', object_type: 'share_request', object_id: pendingUuid, subject: expect.stringMatching(/^Rhea Requester .* asks you to approve a copy of "report\.txt"$/) }),
    ]);
    expect(await listOf(requester)).toEqual([]);
    expect(await listOf(recipient)).toEqual([]);

    expect((await as(seeder.client, approver, 'PUT', `/api/pending_shares/${pendingUuid}/approval`, { status: 'approved', comment: 'fine' })).status).toBe(200);
    expect(await listOf(requester)).toEqual([
      expect.objectContaining({ kind: 'request_approved', object_id: pendingUuid, params: expect.objectContaining({ comment: 'fine' }), subject: expect.stringMatching(/^Paula Approver .* approved your copy of "report\.txt"$/) }),
    ]);
    expect((await listOf(recipient)).map((n) => n.kind)).toEqual(['copy_offered']);
    expect(await listOf(approver)).toHaveLength(1);
  });

  it('a rejected request makes one for the requester and none for the recipient', async () => {
    const requester = await person('Rhea Requester');
    const approver = await person('Paula Approver');
    const recipient = await person('Rory Recipient');
    await addApprover(requester.uuid, approver.uuid);
    const file = await uploadFile(seeder.client, requester.session, 'home', 'draft.txt', 'the draft');
    const asked = await as(seeder.client, requester, 'POST', `/api/nodes/${file}`, { share_copy_with: [recipient.uuid] });
    const pendingUuid = (asked.body as { data: { pending_uuid: string } }).data.pending_uuid;
    expect((await as(seeder.client, approver, 'PUT', `/api/pending_shares/${pendingUuid}/approval`, { status: 'rejected', comment: 'no' })).status).toBe(200);
    expect((await listOf(requester)).map((n) => [n.kind, n.object_id])).toEqual([['request_rejected', pendingUuid]]);
    expect(await listOf(recipient)).toEqual([]);
  });

  it('follows the realtime_alert settings: a copy offered to one who turned realtime_alert_shared_with_me off makes none', async () => {
    const alice = await person('Alice Sharer');
    const quiet = await person('Quinn Quiet');
    expect((await as(seeder.client, quiet, 'PUT', '/api/user/notifications', { realtime_alert_shared_with_me: false })).status).toBe(200);
    const file = await uploadFile(seeder.client, alice.session, 'home', 'memo.txt', 'memo');
    expect((await as(seeder.client, alice, 'POST', `/api/nodes/${file}`, { share_copy_with: [quiet.uuid] })).status).toBe(204);
    expect(await listOf(quiet)).toEqual([]);
  });

  it('a drive crossing 90 % of its quota makes one, once per crossing', async () => {
    const user = await person('Fay Full', { quotaBytes: 1000 });
    await uploadFile(seeder.client, user.session, 'home', 'a.bin', Buffer.alloc(800));
    expect(await listOf(user)).toEqual([]);
    await uploadFile(seeder.client, user.session, 'home', 'b.bin', Buffer.alloc(120));
    await uploadFile(seeder.client, user.session, 'home', 'c.bin', Buffer.alloc(50));
    const listed = await listOf(user);
    expect(listed).toEqual([expect.objectContaining({ kind: 'quota_near', object_type: 'user', object_id: user.uuid, subject: 'Your drive is 92 % full', params: { used: 920, quota: 1000 } })]);
  });

  it("a group's drive crossing 90 % makes one for each member who wants it", async () => {
    const writer = await person('Gus Group');
    const reader = await person('Rita Reader');
    const quiet = await person('Quentin Quiet');
    expect((await as(seeder.client, quiet, 'PUT', '/api/user/notifications', { realtime_alert_group_owned: false })).status).toBe(200);
    const group = await ga.group(undefined, { quotaBytes: 1000 });
    await ga.member(group, writer.uuid, { node_permissions: ['read', 'write'] });
    await ga.member(group, reader.uuid);
    await ga.member(group, quiet.uuid);
    await uploadFile(seeder.client, writer.session, `home:${group}`, 'big.bin', Buffer.alloc(950));
    for (const member of [writer, reader]) {
      expect(await listOf(member)).toEqual([expect.objectContaining({ kind: 'quota_near', object_type: 'group', object_id: group, subject: expect.stringMatching(/^The drive of .* is 95 % full$/) })]);
    }
    expect(await listOf(quiet)).toEqual([]);
  });

  it('a link about to expire makes one for its creator, once, from the sweep', async () => {
    const owner = await person('Lena Linker');
    const file = await uploadFile(seeder.client, owner.session, 'home', 'slides.pdf', 'slides');
    const far = await dataOf<{ share_uuid: string }>(as(seeder.client, owner, 'POST', `/api/nodes/${file}/shares`, { type: 'public', expires: store.clock.now() + 3 * 24 * 3600_000 }));
    const soon = await dataOf<{ share_uuid: string }>(as(seeder.client, owner, 'POST', `/api/nodes/${file}/shares`, { type: 'public', expires: store.clock.now() + 3600_000 }));
    expect(far.share_uuid).not.toBe(soon.share_uuid);
    await sweepExpiringLinks(store.ctx);
    await sweepExpiringLinks(store.ctx);
    expect(await listOf(owner)).toEqual([expect.objectContaining({ kind: 'link_expiring', object_type: 'share', object_id: soon.share_uuid, subject: expect.stringMatching(/^Your public link to "slides\.pdf" expires /) })]);
  });
});

describe('the list', () => {
  it('is read and deleted by its user, one and all', async () => {
    const alice = await person('Alice Sharer');
    const bob = await person('Bob Recipient');
    for (const name of ['one.txt', 'two.txt', 'three.txt']) {
      const file = await uploadFile(seeder.client, alice.session, 'home', name, name);
      await as(seeder.client, alice, 'POST', `/api/nodes/${file}`, { share_copy_with: [bob.uuid] });
    }
    const listed = await listOf(bob);
    expect(listed.map((n) => n.params.name)).toEqual(['three.txt', 'two.txt', 'one.txt']);
    const [newest, middle] = listed as [Listed, Listed];
    expect(await dataOf(as(seeder.client, bob, 'GET', `/api/notifications/${middle.id}`))).toEqual(middle);
    expect((await as(seeder.client, bob, 'DELETE', `/api/notifications/${middle.id}`)).status).toBe(200);
    expect((await listOf(bob)).map((n) => n.id)).not.toContain(middle.id);
    expectError(await as(seeder.client, bob, 'DELETE', `/api/notifications/${middle.id}`), 404, 'not_found');
    expect(await dataOf(as(seeder.client, bob, 'DELETE', '/api/notifications'))).toEqual({ deleted: 2 });
    expect(await listOf(bob)).toEqual([]);
    expectError(await as(seeder.client, bob, 'GET', `/api/notifications/${newest.id}`), 404, 'not_found');
    expectError(await as(seeder.client, bob, 'GET', '/api/notifications/not-a-number'), 404, 'not_found');
  });

  it("refuses another user's notifications as unknown ones (404), all at once, and deletes none of them", async () => {
    const alice = await person('Alice Sharer');
    const bob = await person('Bob Recipient');
    const mallory = await person('Mallory Meddler');
    const file = await uploadFile(seeder.client, alice.session, 'home', 'secret.txt', 'secret');
    await as(seeder.client, alice, 'POST', `/api/nodes/${file}`, { share_copy_with: [bob.uuid] });
    await as(seeder.client, alice, 'POST', `/api/nodes/${file}`, { share_copy_with: [bob.uuid] });
    const before = await listOf(bob);
    const answers = await Promise.all(
      before.flatMap((n) => [as(seeder.client, mallory, 'GET', `/api/notifications/${n.id}`), as(seeder.client, mallory, 'DELETE', `/api/notifications/${n.id}`)]),
    );
    for (const answer of answers) expectError(answer, 404, 'not_found', 'notification not found');
    expect(await dataOf(as(seeder.client, mallory, 'DELETE', '/api/notifications'))).toEqual({ deleted: 0 });
    expect(await listOf(bob)).toEqual(before);
  });

  it('keeps the newest 100 of a user', async () => {
    const many = await person('Manny Many');
    const rows = Array.from({ length: 105 }, (_, i) => ({ user_uuid: many.uuid, kind: 'copy_offered', object_type: 'incoming_share', object_id: `n${i}`, params: '{}', created: i }));
    await store.ctx.storage.sql.transaction((tx) => insertNotifications(tx, rows));
    const listed = await listOf(many);
    expect(listed).toHaveLength(100);
    expect(listed[0]!.object_id).toBe('n104');
    expect(listed.at(-1)!.object_id).toBe('n5');
  });
});

describe('the change feed', () => {
  it('announces the user whose notifications changed, added and deleted', async () => {
    const feed = store.ctx.storage.changes ?? sqliteFolderFeed(store.ctx.storage.sql);
    if (!feed) throw new Error('no change feed');
    const heard: StoreChange[] = [];
    const stop = feed.subscribe((change) => heard.push(change));
    try {
      const alice = await person('Alice Sharer');
      const bob = await person('Bob Recipient');
      const file = await uploadFile(seeder.client, alice.session, 'home', 'news.txt', 'news');
      const notifiedBob = () => heard.some((c) => c.notified?.includes(bob.uuid));
      await as(seeder.client, alice, 'POST', `/api/nodes/${file}`, { share_copy_with: [bob.uuid] });
      await until(notifiedBob);
      expect(heard.some((c) => c.notified?.includes(alice.uuid))).toBe(false);
      heard.length = 0;
      await as(seeder.client, bob, 'DELETE', '/api/notifications');
      await until(notifiedBob);
    } finally {
      stop();
    }
  });
});

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
