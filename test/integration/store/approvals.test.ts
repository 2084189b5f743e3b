/**
 * Share approval (docs/api.md "Share approval"; docs/store-semantics.md "Sharing"): approvers per
 * workspace and share type, administered through /api/admin/{users,groups}/{uuid}/approvers;
 * a share of a workspace with an approver becomes a pending request (202, `pending_uuid`), listed
 * to its approvers and its requester with every field of docs/api.md; approved carries it out (a share_copy
 * delivers the copy taken when requested), rejected discards it and keeps the comment, withdrawn
 * removes it from the requester's list. Every refusal, with the roles as separately logged-in users.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawResponse, StoreSession } from '../../../src/store-client/index.js';
import type { TestStore } from '../../helpers/start-store.js';
import { readBlobStored, blobHashOf, readBlobRefs, createFolder, readDiskUsed, people, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { readCountRows, dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { as, readBlobBytes, expectError, fetchRaw, readText, readRequestRow, readSnapshotCounts } from '../../helpers/sharing.js';

let store: TestStore;
let seeder: Seeder;
let person: ReturnType<typeof people>;
let ga: GroupAdmin;
let admin: StoreSession;
let counter = 0;

beforeAll(async () => {
  ({ store, seeder, ga, admin } = await startGroupStore());
  person = people(seeder);
});

afterAll(() => stopGroupStore({ seeder, store }));

const text = (label: string): string => `${label} #${(counter += 1)}`;

const approvers = (door: 'users' | 'groups', workspace: string) => `/api/admin/${door}/${workspace}/approvers`;
const addApprover = (door: 'users' | 'groups', workspace: string, approver: string, type: string, s: StoreSession = admin) =>
  as(seeder.client, s, 'POST', approvers(door, workspace), { approver_id: approver, share_type: type });
const decide = (who: SeededUser, pending: string, body: unknown) => as(seeder.client, who, 'PUT', `/api/pending_shares/${pending}/approval`, body);
const pendingList = (who: SeededUser) => dataOf<Array<Record<string, unknown>>>(as(seeder.client, who, 'GET', '/api/pending_shares'));
const myList = (who: SeededUser) => dataOf<Array<Record<string, unknown>>>(as(seeder.client, who, 'GET', '/api/my_pending_shares'));
const incomingOf = (who: SeededUser) => dataOf<Array<Record<string, unknown>>>(as(seeder.client, who, 'GET', '/api/user/pending_incoming'));

/** A requester whose workspace has `approver` for share_copy, a recipient, and a file to share. */
interface Scene {
  requester: SeededUser;
  approver: SeededUser;
  recipient: SeededUser;
  file: string;
  content: string;
}

async function scene(type = 'share_copy'): Promise<Scene> {
  const requester = await person('Rhea Requester');
  const approver = await person('Paula Approver');
  const recipient = await person('Rory Recipient');
  await dataOf(addApprover('users', requester.uuid, approver.uuid, type));
  const content = text('to share');
  const file = await uploadFile(seeder.client, requester.session, 'home', 'report.txt', content);
  return { requester, approver, recipient, file, content };
}

async function requestCopy(s: Scene, comment?: string): Promise<string> {
  const res = await as(seeder.client, s.requester, 'POST', `/api/nodes/${s.file}`, { share_copy_with: [s.recipient.uuid], ...(comment === undefined ? {} : { comment }) });
  expect({ status: res.status, body: res.body }).toEqual({
    status: 202,
    body: { status: 'success', msg: 'the share awaits approval', data: { pending_uuid: expect.any(String) } },
  });
  return (res.body as { data: { pending_uuid: string } }).data.pending_uuid;
}

describe('approvers', () => {
  it('are added, listed and removed by administrators, per workspace and share type', async () => {
    const owner = await person('Wanda Workspace');
    const a = await person('Abe Approver');
    const b = await person('Bea Approver');
    const added = await dataOf<unknown[]>(addApprover('users', owner.uuid, a.uuid, 'public'));
    expect(added).toEqual([{ approver_id: a.uuid, share_type: 'public', fullname: expect.stringMatching(/^Abe Approver/), email: a.email, added: expect.any(Number) }]);
    await dataOf(addApprover('users', owner.uuid, b.uuid, 'public'));
    await dataOf(addApprover('users', owner.uuid, a.uuid, 'share_copy'));
    const listed = await dataOf<Array<{ approver_id: string; share_type: string }>>(as(seeder.client, admin, 'GET', approvers('users', owner.uuid)));
    expect(listed.map((r) => [r.share_type, r.approver_id])).toEqual([
      ['public', a.uuid],
      ['public', b.uuid],
      ['share_copy', a.uuid],
    ]);
    expect(await dataOf(as(seeder.client, admin, 'DELETE', `${approvers('users', owner.uuid)}/${a.uuid}/public`))).toBeUndefined();
    const after = await dataOf<Array<{ approver_id: string; share_type: string }>>(as(seeder.client, admin, 'GET', approvers('users', owner.uuid)));
    expect(after.map((r) => [r.share_type, r.approver_id])).toEqual([
      ['public', b.uuid],
      ['share_copy', a.uuid],
    ]);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM approvers WHERE workspace_uuid = ?', owner.uuid)).toBe(2);
  });

  it('refuses each broken rule, changing nothing', async () => {
    const owner = await person('Wes Workspace');
    const a = await person('Ann Approver');
    const group = await ga.group();
    await dataOf(addApprover('users', owner.uuid, a.uuid, 'upload'));
    await ga.organization('faraway');
    const foreign = await seeder.client.createUser(admin, { fullname: 'Finn Faraway', email: 'finn@example.test', password: 'Secret-Passw0rd' }, 'faraway');
    const plain = owner.session;
    const before = await readCountRows(store, 'SELECT COUNT(*) AS n FROM approvers');
    const cases: Array<[string, Promise<RawResponse>, number, string, RegExp]> = [
      ['twice', addApprover('users', owner.uuid, a.uuid, 'upload'), 409, 'approver_exists', /^approver_id: already approves upload/],
      ['the workspace’s own user', addApprover('users', owner.uuid, owner.uuid, 'public'), 400, 'invalid_request', /^approver_id: a user cannot approve/],
      ['an unknown user', addApprover('users', owner.uuid, '00000000-0000-4000-8000-000000000009', 'public'), 404, 'not_found', /^approver_id: no such user/],
      ['a user of another organization', addApprover('groups', group, foreign as string, 'public'), 404, 'not_found', /^approver_id: no such user/],
      ['an unknown share type', addApprover('users', owner.uuid, a.uuid, 'everything'), 400, 'invalid_request', /^share_type: /],
      ['an unknown workspace', addApprover('users', '00000000-0000-4000-8000-000000000008', a.uuid, 'public'), 404, 'not_found', /^user not found$/],
      ['an unknown group workspace', addApprover('groups', '00000000-0000-4000-8000-000000000008', a.uuid, 'public'), 404, 'not_found', /^group not found$/],
      ['a non-administrator adding', addApprover('users', owner.uuid, a.uuid, 'private', plain), 403, 'forbidden', /administrator/],
      ['a non-administrator listing', as(seeder.client, plain, 'GET', approvers('users', owner.uuid)), 403, 'forbidden', /administrator/],
      ['removing one who is none', as(seeder.client, admin, 'DELETE', `${approvers('users', owner.uuid)}/${a.uuid}/public`), 404, 'not_found', /^approver not found$/],
      ['removing with an unknown type', as(seeder.client, admin, 'DELETE', `${approvers('users', owner.uuid)}/${a.uuid}/all`), 400, 'invalid_request', /^type must be one of/],
      ['a non-administrator removing', as(seeder.client, plain, 'DELETE', `${approvers('users', owner.uuid)}/${a.uuid}/upload`), 403, 'forbidden', /administrator/],
    ];
    for (const [what, pending, status, code, msg] of cases) {
      const res = await pending;
      expect({ what, status: res.status, body: res.body }).toMatchObject({ what, status, body: { code, msg: expect.stringMatching(msg) } });
    }
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM approvers')).toBe(before);
  });
});

describe('a share_copy awaiting approval', () => {
  it('holds its copy in the request: no incoming share yet, no disk_used, no blob bytes', async () => {
    const s = await scene();
    const before = { used: await Promise.all([s.requester, s.recipient].map((u) => readDiskUsed(store, u.uuid))), blobBytes: await readBlobBytes(store), snapshots: await readSnapshotCounts(store) };
    const pending = await requestCopy(s, 'for the audit');
    expect(await incomingOf(s.recipient)).toEqual([]);
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'pending', share_type: 'share_copy', workspace_uuid: s.requester.uuid, requester_uuid: s.requester.uuid });
    expect(await readBlobRefs(store, blobHashOf(s.content))).toBe(2);
    expect(await readSnapshotCounts(store)).toEqual({ snapshots: before.snapshots.snapshots + 1, entries: before.snapshots.entries + 1 });
    expect({ used: await Promise.all([s.requester, s.recipient].map((u) => readDiskUsed(store, u.uuid))), blobBytes: await readBlobBytes(store) }).toEqual({
      used: before.used,
      blobBytes: before.blobBytes,
    });
  });

  it('is listed to its approvers and its requester with every field of docs/api.md, and to nobody else', async () => {
    const s = await scene();
    const stranger = await person('Stan Stranger');
    const pending = await requestCopy(s, 'for the audit');
    const expected = {
      pending_uuid: pending,
      workspace_id: s.requester.uuid,
      workspace_type: 'User',
      workspace_name: expect.stringMatching(/^Rhea Requester/),
      share_type: 'share_copy',
      requested_at: expect.any(Number),
      comment: 'for the audit',
      share_info: {
        node_uuid: s.file,
        node_name: 'report.txt',
        node_type: 'File',
        size: Buffer.byteLength(s.content),
        recipients: [{ uuid: s.recipient.uuid, type: 'User', name: expect.stringMatching(/^Rory Recipient/) }],
      },
      requester_uuid: s.requester.uuid,
      requester_fullname: expect.stringMatching(/^Rhea Requester/),
      state: 'pending',
      decided_at: null,
      approval_comment: '',
    };
    expect(await pendingList(s.approver)).toEqual([expected]);
    expect(await myList(s.requester)).toEqual([expected]);
    for (const who of [stranger, s.recipient, s.requester]) expect(await pendingList(who)).toEqual([]);
    expect(await myList(s.approver)).toEqual([]);
  });

  it('approved: the recipients get the copy taken when it was requested', async () => {
    const s = await scene();
    const pending = await requestCopy(s);
    await uploadFile(seeder.client, s.requester.session, 'home', 'report.txt', text('edited after the request'));
    const record = await dataOf<Record<string, unknown>>(decide(s.approver, pending, { status: 'approved', comment: 'fine' }));
    expect(record).toMatchObject({ pending_uuid: pending, state: 'approved', decided_at: expect.any(Number), approval_comment: 'fine' });
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'approved', decided_by: s.approver.uuid, snapshot_uuid: null });
    const [offer] = await incomingOf(s.recipient);
    expect(offer).toMatchObject({ name: 'report.txt', sharer_uuid: s.requester.uuid, source_uuid: s.file, size: Buffer.byteLength(s.content) });
    const { node_uuid } = await dataOf<{ node_uuid: string }>(as(seeder.client, s.recipient, 'PUT', '/api/user/pending_incoming', { uuid: offer!.uuid, action: 'accept' }));
    expect(await readText(store, s.recipient.session, node_uuid)).toBe(s.content);
    expect(await pendingList(s.approver)).toEqual([]);
    expect(await myList(s.requester)).toMatchObject([{ pending_uuid: pending, state: 'approved', approval_comment: 'fine' }]);
  });

  it('rejected: the copy is discarded and the comment shown to the requester', async () => {
    const s = await scene();
    const pending = await requestCopy(s);
    await seeder.client.remove(s.requester.session, s.file as never);
    await seeder.client.remove(s.requester.session, s.file as never);
    expect(await readBlobStored(store, blobHashOf(s.content))).toBe(true);
    const record = await dataOf(decide(s.approver, pending, { status: 'rejected', comment: 'not outside the team' }));
    expect(record).toMatchObject({ state: 'rejected', approval_comment: 'not outside the team' });
    expect(await readBlobRefs(store, blobHashOf(s.content))).toBe(0);
    expect(await readBlobStored(store, blobHashOf(s.content))).toBe(false);
    expect(await incomingOf(s.recipient)).toEqual([]);
    expect(await myList(s.requester)).toMatchObject([{ pending_uuid: pending, state: 'rejected', approval_comment: 'not outside the team', decided_at: expect.any(Number) }]);
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'rejected', decision_comment: 'not outside the team', snapshot_uuid: null });
  });

  it('withdrawn: gone from the lists, the copy released; only the requester withdraws', async () => {
    const s = await scene();
    const stranger = await person('Stu Stranger');
    const pending = await requestCopy(s);
    const refs = await readBlobRefs(store, blobHashOf(s.content));
    for (const who of [stranger, s.approver, s.recipient]) {
      expectError(await as(seeder.client, who, 'DELETE', `/api/my_pending_shares/${pending}`), 404, 'not_found', 'pending share not found');
    }
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'pending' });
    expect(await dataOf(as(seeder.client, s.requester, 'DELETE', `/api/my_pending_shares/${pending}`))).toMatchObject({ pending_uuid: pending, state: 'withdrawn' });
    expect(await readBlobRefs(store, blobHashOf(s.content))).toBe(refs - 1);
    expect(await myList(s.requester)).toEqual([]);
    expect(await pendingList(s.approver)).toEqual([]);
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'withdrawn', decided_by: s.requester.uuid, snapshot_uuid: null });
  });

  it('refuses a non-approver (404), a double decision and deciding or withdrawing what was decided (409)', async () => {
    const s = await scene();
    const stranger = await person('Sue Stranger');
    const otherTypeApprover = await person('Otis Other');
    await dataOf(addApprover('users', s.requester.uuid, otherTypeApprover.uuid, 'public'));
    const elsewhere = await scene();
    const pending = await requestCopy(s);
    const withdrawn = await requestCopy(s);
    await dataOf(as(seeder.client, s.requester, 'DELETE', `/api/my_pending_shares/${withdrawn}`));

    for (const who of [stranger, s.recipient, otherTypeApprover, elsewhere.approver]) {
      expectError(await decide(who, pending, { status: 'approved' }), 404, 'not_found', 'pending share not found');
    }
    // The requester of a user workspace is never its approver: for them the request is not theirs to decide.
    expectError(await decide(s.requester, pending, { status: 'approved' }), 404, 'not_found');
    expectError(await decide(s.approver, '00000000-0000-4000-8000-00000000000f', { status: 'approved' }), 404, 'not_found');
    expectError(await decide(s.approver, pending, { status: 'maybe' }), 400, 'invalid_request', /^status: /);
    expectError(await decide(s.approver, pending, { status: 'approved', comment: 5 }), 400, 'invalid_request', /^comment: /);
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'pending' });

    await dataOf(decide(s.approver, pending, { status: 'rejected' }));
    const before = { incoming: await incomingOf(s.recipient), snapshots: await readSnapshotCounts(store) };
    for (const status of ['approved', 'rejected']) {
      expectError(await decide(s.approver, pending, { status }), 409, 'request_decided', 'the request was rejected already');
      expectError(await decide(s.approver, withdrawn, { status }), 409, 'request_decided', 'the request was withdrawn already');
    }
    expectError(await as(seeder.client, s.requester, 'DELETE', `/api/my_pending_shares/${pending}`), 409, 'request_decided', 'the request was rejected already');
    expectError(await as(seeder.client, s.requester, 'DELETE', `/api/my_pending_shares/${withdrawn}`), 409, 'request_decided');
    expect({ incoming: await incomingOf(s.recipient), snapshots: await readSnapshotCounts(store) }).toEqual(before);
  });

  it('an approver removed no longer decides; removing the last approver makes later shares direct', async () => {
    const s = await scene();
    const second = await person('Sela Second');
    await dataOf(addApprover('users', s.requester.uuid, second.uuid, 'share_copy'));
    const pending = await requestCopy(s);
    await dataOf(as(seeder.client, admin, 'DELETE', `${approvers('users', s.requester.uuid)}/${s.approver.uuid}/share_copy`));
    expectError(await decide(s.approver, pending, { status: 'approved' }), 404, 'not_found');
    expect(await pendingList(second)).toHaveLength(1);
    await requestCopy(s);
    await dataOf(as(seeder.client, admin, 'DELETE', `${approvers('users', s.requester.uuid)}/${second.uuid}/share_copy`));
    // The pending ones stay pending (the requester may withdraw them); new shares are direct.
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'pending' });
    const res = await as(seeder.client, s.requester, 'POST', `/api/nodes/${s.file}`, { share_copy_with: [s.recipient.uuid] });
    expect(res.status).toBe(204);
    expect(await incomingOf(s.recipient)).toHaveLength(1);
  });

  it('cannot be approved while its node lies in trash (409 node_in_trash) or once it is gone (409 node_gone): nothing offered, still pending', async () => {
    const s = await scene();
    const pending = await requestCopy(s);
    await seeder.client.remove(s.requester.session, s.file as never);
    expectError(await decide(s.approver, pending, { status: 'approved' }), 409, 'node_in_trash');
    await seeder.client.remove(s.requester.session, s.file as never);
    expectError(await decide(s.approver, pending, { status: 'approved' }), 409, 'node_gone');
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'pending', node_uuid: null, snapshot_uuid: expect.any(String) });
    expect(await incomingOf(s.recipient)).toEqual([]);
    expect(await dataOf(decide(s.approver, pending, { status: 'rejected' }))).toMatchObject({ state: 'rejected' });
    expect(await readBlobRefs(store, blobHashOf(s.content))).toBe(0);
  });

  it('an approver of another type leaves share_copy direct', async () => {
    const s = await scene('public');
    expect((await as(seeder.client, s.requester, 'POST', `/api/nodes/${s.file}`, { share_copy_with: [s.recipient.uuid] })).status).toBe(204);
    expect(await incomingOf(s.recipient)).toHaveLength(1);
  });
});

describe("a group's workspace", () => {
  it('routes its members’ shares to the group’s approvers; a member approver never decides their own request (403)', async () => {
    const group = await ga.group();
    const m1 = await person('Mona Member');
    const m2 = await person('Max Member');
    const recipient = await person('Ray Recipient');
    for (const m of [m1, m2]) await ga.member(group, m.uuid, { node_permissions: ['read', 'write', 'download'] });
    for (const m of [m1, m2]) await dataOf(addApprover('groups', group, m.uuid, 'share_copy'));
    const file = await uploadFile(seeder.client, m1.session, `home:${group}`, 'team plan.txt', text('team'));
    const res = await as(seeder.client, m1, 'POST', `/api/nodes/${file}`, { share_copy_with: [recipient.uuid] });
    expect(res.status).toBe(202);
    const pending = (res.body as { data: { pending_uuid: string } }).data.pending_uuid;
    expect(await pendingList(m1)).toMatchObject([{ pending_uuid: pending, workspace_id: group, workspace_type: 'Group' }]);
    expectError(await decide(m1, pending, { status: 'approved' }), 403, 'forbidden', 'the requester cannot decide their own request');
    expect(await dataOf(decide(m2, pending, { status: 'approved' }))).toMatchObject({ state: 'approved' });
    expect(await incomingOf(recipient)).toMatchObject([{ sharer_uuid: m1.uuid, name: 'team plan.txt' }]);
  });
});

describe('share links awaiting approval', () => {
  it('a public link: its token is handed out at once and serves only once approved', async () => {
    const s = await scene('public');
    const res = await as(seeder.client, s.requester, 'POST', `/api/nodes/${s.file}/shares`, { type: 'public', password: 'open sesame', expires: store.clock.now() + 3_600_000, comment: 'for the press' });
    expect(res.status).toBe(202);
    const data = (res.body as { data: { pending_uuid: string; token: string; url: string } }).data;
    expect(data).toEqual({ pending_uuid: expect.any(String), token: expect.stringMatching(/^[\w-]{43}$/), url: `${store.url}/public/${data.token}` });
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', s.file)).toBe(0);
    expect((await fetchRaw(store, data.url)).status).toBe(404);
    const [listed] = await pendingList(s.approver);
    expect(listed).toMatchObject({
      share_type: 'public',
      comment: 'for the press',
      share_info: { node_uuid: s.file, node_name: 'report.txt', node_type: 'File', password_protected: true, expires: expect.any(Number) },
    });
    expect(JSON.stringify(listed)).not.toMatch(/hash|sesame/);
    const record = await dataOf<Record<string, unknown>>(decide(s.approver, data.pending_uuid, { status: 'approved' }));
    expect((await readRequestRow(store, data.pending_uuid))?.result_uuid).toEqual(expect.any(String));
    expect(record.state).toBe('approved');
    const served = await fetchRaw(store, data.url, { headers: { authorization: `Basic ${Buffer.from('x:open sesame').toString('base64')}` } });
    expect({ status: served.status, body: served.body.toString() }).toEqual({ status: 200, body: s.content });
  });

  it('private and upload requests say what would be shared with whom', async () => {
    const s = await scene('private');
    await dataOf(addApprover('users', s.requester.uuid, s.approver.uuid, 'upload'));
    const folder = await createFolder(seeder.client, s.requester.session, 'home', 'Inbox');
    expect((await as(seeder.client, s.requester, 'POST', `/api/nodes/${s.file}/shares`, { type: 'private', recipients: [s.recipient.uuid], writable: true })).status).toBe(202);
    expect((await as(seeder.client, s.requester, 'POST', `/api/nodes/${folder}/shares`, { type: 'upload' })).status).toBe(202);
    const list = await pendingList(s.approver);
    expect(list.map((r) => [r.share_type, r.share_info])).toEqual([
      ['private', { node_uuid: s.file, node_name: 'report.txt', node_type: 'File', writable: true, recipients: [{ uuid: s.recipient.uuid, type: 'User', name: expect.any(String) }] }],
      ['upload', { node_uuid: folder, node_name: 'Inbox', node_type: 'Dir', folder: 'Inbox', password_protected: false, expires: null }],
    ]);
    // Approving the private share lets the recipient in.
    expectError(await as(seeder.client, s.recipient, 'GET', `/api/nodes/${s.file}`), 404, 'not_found');
    await dataOf(decide(s.approver, list[0]!.pending_uuid as string, { status: 'approved' }));
    expect(await dataOf(as(seeder.client, s.recipient, 'GET', `/api/nodes/${s.file}/myaccess`))).toEqual(['read', 'write', 'download']);
  });

  it('cannot be approved once the expiry it asks for has passed (409 request_expired): no live link, the request stays pending', async () => {
    const s = await scene('upload');
    const folder = await createFolder(seeder.client, s.requester.session, 'home', 'Drop');
    const expires = store.clock.now() + 60_000;
    const res = await as(seeder.client, s.requester, 'POST', `/api/nodes/${folder}/shares`, { type: 'upload', expires });
    const { pending_uuid: pending, url } = (res.body as { data: { pending_uuid: string; url: string } }).data;
    store.clock.advance(60_000);
    expectError(await decide(s.approver, pending, { status: 'approved' }), 409, 'request_expired', /expired at .*reject the request/);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', folder)).toBe(0);
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'pending', result_uuid: null });
    expect((await fetchRaw(store, `${url}/upload`, { method: 'POST' })).status).toBe(404);
    expect(await dataOf(decide(s.approver, pending, { status: 'rejected' }))).toMatchObject({ state: 'rejected' });
  });

  it('cannot be approved once its node is in trash (409 node_in_trash) or gone (409 node_gone); it can be rejected', async () => {
    const s = await scene('public');
    const res = await as(seeder.client, s.requester, 'POST', `/api/nodes/${s.file}/shares`, { type: 'public' });
    const pending = (res.body as { data: { pending_uuid: string } }).data.pending_uuid;
    await seeder.client.remove(s.requester.session, s.file as never);
    expectError(await decide(s.approver, pending, { status: 'approved' }), 409, 'node_in_trash');
    await seeder.client.remove(s.requester.session, s.file as never);
    expectError(await decide(s.approver, pending, { status: 'approved' }), 409, 'node_gone');
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'pending', node_uuid: null });
    expect(await dataOf(decide(s.approver, pending, { status: 'rejected' }))).toMatchObject({ state: 'rejected', share_info: { node_uuid: null, node_name: 'report.txt' } });
  });
});

describe('approval checks the requester again (issue 21, item 10)', () => {
  const ALL_SHARE_PERMISSIONS = ['public_create', 'public_delete', 'private_create', 'private_delete', 'upload_link_create', 'upload_link_delete'];
  const membership = (group: string, who: SeededUser, change: Record<string, unknown>) => dataOf(as(seeder.client, admin, 'PUT', `/api/admin/groups/${group}/users/${who.uuid}`, change));
  const lacks = (res: RawResponse, why: RegExp) => expectError(res, 409, 'requester_lacks_permission', new RegExp(`^the requester may no longer make this share: ${why.source}.*; reject the request`));

  /** A group whose member asks for shares its approver decides: the member may do everything to start with. */
  async function groupScene(types: readonly string[]): Promise<{ group: string; member: SeededUser; approver: SeededUser; recipient: SeededUser; file: string; folder: string; content: string }> {
    const group = await ga.group();
    const member = await person('Mia Member');
    const approver = await person('Aldo Approver');
    const recipient = await person('Rita Recipient');
    await ga.member(group, member.uuid, { node_permissions: ['read', 'write', 'delete', 'download'], share_permissions: ALL_SHARE_PERMISSIONS });
    for (const type of types) await dataOf(addApprover('groups', group, approver.uuid, type));
    const content = text('team file');
    const file = await uploadFile(seeder.client, member.session, `home:${group}`, 'plan.txt', content);
    const folder = await createFolder(seeder.client, member.session, `home:${group}`, 'Drop');
    return { group, member, approver, recipient, file, folder, content };
  }

  /** What a refused approval must leave as it was: the request pending with its copy, nothing offered, no share made. */
  async function untouched(pending: string, recipient: SeededUser, node: string) {
    return {
      request: await readRequestRow(store, pending),
      incoming: await incomingOf(recipient),
      shares: await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', node),
      snapshots: await readSnapshotCounts(store),
    };
  }

  it('refuses a share_copy whose requester lost download, left the group or was deactivated (409), leaving it pending with its copy; approves it once they hold download again', async () => {
    const s = await groupScene(['share_copy']);
    const ask = async () => {
      const res = await as(seeder.client, s.member, 'POST', `/api/nodes/${s.file}`, { share_copy_with: [s.recipient.uuid] });
      expect(res.status).toBe(202);
      return (res.body as { data: { pending_uuid: string } }).data.pending_uuid;
    };
    const [lostDownload, leftGroup, deactivated] = [await ask(), await ask(), await ask()];

    await membership(s.group, s.member, { node_permissions: ['read', 'write', 'delete'] });
    let before = await untouched(lostDownload, s.recipient, s.file);
    lacks(await decide(s.approver, lostDownload, { status: 'approved' }), /download permission required to share a copy/);
    expect(await untouched(lostDownload, s.recipient, s.file)).toEqual(before);
    expect(before.request).toMatchObject({ state: 'pending', snapshot_uuid: expect.any(String), decided_by: null });
    expect(await myList(s.member)).toMatchObject([{ state: 'pending' }, { state: 'pending' }, { state: 'pending' }]);

    // The request waits: with download back, the approver may approve it after all.
    await membership(s.group, s.member, { node_permissions: ['read', 'download'] });
    expect(await dataOf(decide(s.approver, lostDownload, { status: 'approved' }))).toMatchObject({ state: 'approved' });
    expect(await incomingOf(s.recipient)).toMatchObject([{ sharer_uuid: s.member.uuid, source_uuid: s.file, size: Buffer.byteLength(s.content) }]);

    await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/groups/${s.group}/users/${s.member.uuid}`));
    before = await untouched(leftGroup, s.recipient, s.file);
    lacks(await decide(s.approver, leftGroup, { status: 'approved' }), /they no longer see the node/);
    expect(await untouched(leftGroup, s.recipient, s.file)).toEqual(before);

    await ga.member(s.group, s.member.uuid, { node_permissions: ['read', 'download'] });
    await dataOf(as(seeder.client, admin, 'PUT', `/api/admin/users/${s.member.uuid}`, { is_active: false }));
    before = await untouched(deactivated, s.recipient, s.file);
    lacks(await decide(s.approver, deactivated, { status: 'approved' }), /their account was deleted or deactivated/);
    expect(await untouched(deactivated, s.recipient, s.file)).toEqual(before);

    // Rejecting still works, and releases the copy.
    expect(await dataOf(decide(s.approver, deactivated, { status: 'rejected' }))).toMatchObject({ state: 'rejected' });
    expect(await readRequestRow(store, deactivated)).toMatchObject({ state: 'rejected', snapshot_uuid: null });
    expect(await incomingOf(s.recipient)).toHaveLength(1);
  });

  it('refuses a share_copy asked through a private share once the owner withdrew it (another user’s node, 409)', async () => {
    const owner = await person('Olga Owner');
    const asker = await person('Ivo Insider');
    const approver = await person('Ada Approver');
    const recipient = await person('Rex Recipient');
    await dataOf(addApprover('users', owner.uuid, approver.uuid, 'share_copy'));
    const file = await uploadFile(seeder.client, owner.session, 'home', 'owned.txt', text('owned'));
    const share = await dataOf<{ share_uuid: string }>(as(seeder.client, owner, 'POST', `/api/nodes/${file}/shares`, { type: 'private', recipients: [asker.uuid] }));
    const res = await as(seeder.client, asker, 'POST', `/api/nodes/${file}`, { share_copy_with: [recipient.uuid] });
    expect(res.status).toBe(202);
    const pending = (res.body as { data: { pending_uuid: string } }).data.pending_uuid;
    expect(await readRequestRow(store, pending)).toMatchObject({ workspace_uuid: owner.uuid, requester_uuid: asker.uuid });

    await dataOf(as(seeder.client, owner, 'DELETE', `/api/shares/${share.share_uuid}`));
    lacks(await decide(approver, pending, { status: 'approved' }), /they no longer see the node/);
    expect(await readRequestRow(store, pending)).toMatchObject({ state: 'pending', snapshot_uuid: expect.any(String) });
    expect(await incomingOf(recipient)).toEqual([]);
  });

  it('refuses a link whose requester lost the share permission, download or write since asking (409): no share, the link does not serve', async () => {
    const s = await groupScene(['public', 'upload', 'private']);
    const ask = async (node: string, body: Record<string, unknown>) => {
      const res = await as(seeder.client, s.member, 'POST', `/api/nodes/${node}/shares`, body);
      expect(res.status).toBe(202);
      return (res.body as { data: { pending_uuid: string; url?: string } }).data;
    };
    const pub = await ask(s.file, { type: 'public' });
    const upload = await ask(s.folder, { type: 'upload' });
    const writable = await ask(s.file, { type: 'private', recipients: [s.recipient.uuid], writable: true });
    const readOnly = await ask(s.file, { type: 'private', recipients: [s.recipient.uuid] });

    await membership(s.group, s.member, { share_permissions: ALL_SHARE_PERMISSIONS.filter((p) => p !== 'public_create') });
    lacks(await decide(s.approver, pub.pending_uuid, { status: 'approved' }), /public_create share permission required/);
    await membership(s.group, s.member, { share_permissions: ALL_SHARE_PERMISSIONS, node_permissions: ['read', 'write'] });
    lacks(await decide(s.approver, pub.pending_uuid, { status: 'approved' }), /download permission required to make a public link/);
    await membership(s.group, s.member, { node_permissions: ['read', 'download'] });
    lacks(await decide(s.approver, upload.pending_uuid, { status: 'approved' }), /write permission required to make an upload link/);
    lacks(await decide(s.approver, writable.pending_uuid, { status: 'approved' }), /write permission required to make a writable private share/);
    await membership(s.group, s.member, { node_permissions: [] });
    lacks(await decide(s.approver, readOnly.pending_uuid, { status: 'approved' }), /read permission required/);

    for (const p of [pub, upload, writable, readOnly]) expect(await readRequestRow(store, p.pending_uuid)).toMatchObject({ state: 'pending', result_uuid: null });
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid IN (?, ?)', s.file, s.folder)).toBe(0);
    expect((await fetchRaw(store, pub.url as string)).status).toBe(404);
    expectError(await as(seeder.client, s.recipient, 'GET', `/api/nodes/${s.file}`), 404, 'not_found');

    // Held again, each is approved as asked.
    await membership(s.group, s.member, { node_permissions: ['read', 'write', 'download'] });
    for (const p of [pub, upload, writable, readOnly]) expect(await dataOf(decide(s.approver, p.pending_uuid, { status: 'approved' }))).toMatchObject({ state: 'approved' });
    expect((await fetchRaw(store, pub.url as string)).status).toBe(200);
    expect(await dataOf(as(seeder.client, s.recipient, 'GET', `/api/nodes/${s.file}/myaccess`))).toEqual(['read', 'write', 'download']);
  });

  it('an approval racing the requester’s loss of download ends as one or the other happened first', async () => {
    const s = await groupScene(['share_copy']);
    for (let round = 0; round < 6; round += 1) {
      await membership(s.group, s.member, { node_permissions: ['read', 'download'] });
      const res = await as(seeder.client, s.member, 'POST', `/api/nodes/${s.file}`, { share_copy_with: [s.recipient.uuid] });
      const pending = (res.body as { data: { pending_uuid: string } }).data.pending_uuid;
      const offered = (await incomingOf(s.recipient)).length;
      const [decision] = await Promise.all([decide(s.approver, pending, { status: 'approved' }), membership(s.group, s.member, { node_permissions: ['read'] })]);
      const after = { request: await readRequestRow(store, pending), offered: (await incomingOf(s.recipient)).length };
      if (decision.status === 200) {
        expect(after).toMatchObject({ request: { state: 'approved', snapshot_uuid: null }, offered: offered + 1 });
      } else {
        lacks(decision, /download permission required to share a copy/);
        expect(after).toMatchObject({ request: { state: 'pending', snapshot_uuid: expect.any(String) }, offered });
      }
      expect(await dataOf(as(seeder.client, s.member, 'GET', `/api/nodes/${s.file}/myaccess`))).toEqual(['read']);
    }
  });
});
