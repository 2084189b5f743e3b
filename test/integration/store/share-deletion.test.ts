/**
 * What sharing leaves when users and groups are deleted (DELETE /api/admin/{users,groups}/{uuid};
 * docs/store-semantics.md "Sharing"): without transfer the owner's shares, approvers, requests
 * and pending incoming shares go (their copies' blob references released, orphaned blob files
 * unlinked); shares it sent to others stay with them. With transfer_data_to, the shares of the
 * transferred nodes move with them unless delete_all_public_shares / delete_all_private_shares
 * say they go, and only those someone of the receiver's workspace vouches for: the receiving
 * user's own, the deleted user's (handed to a receiving user), a receiving group's members'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type StoreSession } from '../../../src/store-client/index.js';
import type { TestStore } from '../../helpers/start-store.js';
import { readBlobStored, blobHashOf, readBlobRefs, createFolder, people, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { readCountRows, dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { as, expectError, fetchRaw, readIncomingRow } from '../../helpers/sharing.js';

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
const post = (who: SeededUser, path: string, json: unknown) => as(seeder.client, who, 'POST', path, json);
const rows = (sql: string, ...params: unknown[]): Promise<number> => readCountRows(store, sql, ...params);

describe('deleting a user without transfer', () => {
  it('forgets everything sharing held for them, releasing the copies; what they sent stays with its recipients', async () => {
    const user = await person('Dora Deleted');
    const friend = await person('Finn Friend');
    const sender = await person('Sara Sender');
    const approver = await person('Abel Approver');
    const otherWorkspace = await person('Walt Workspace');

    // Their links on their own node.
    const file = await uploadFile(seeder.client, user.session, 'home', 'mine.txt', text('mine'));
    const link = await dataOf<{ share_uuid: string; url: string }>(post(user, `/api/nodes/${file}/shares`, { type: 'public' }));
    await dataOf(post(user, `/api/nodes/${file}/shares`, { type: 'private', recipients: [friend.uuid] }));
    // A request in their workspace holding a copy nobody else holds.
    await dataOf(as(seeder.client, admin, 'POST', `/api/admin/users/${user.uuid}/approvers`, { approver_id: approver.uuid, share_type: 'share_copy' }));
    const requested = text('requested');
    const reqFile = await uploadFile(seeder.client, user.session, 'home', 'requested.txt', requested);
    expect((await post(user, `/api/nodes/${reqFile}`, { share_copy_with: [friend.uuid] })).status).toBe(202);
    // A share awaiting them whose copy only it holds, and a private share with them alone.
    const offered = text('offered');
    const senderFile = await uploadFile(seeder.client, sender.session, 'home', 'offered.txt', offered);
    expect((await post(sender, `/api/nodes/${senderFile}`, { share_copy_with: [user.uuid] })).status).toBe(204);
    await seeder.client.remove(sender.session, senderFile as never);
    await seeder.client.remove(sender.session, senderFile as never);
    const senderFolder = await createFolder(seeder.client, sender.session, 'home', 'For Dora');
    const privateToUser = await dataOf<{ share_uuid: string }>(post(sender, `/api/nodes/${senderFolder}/shares`, { type: 'private', recipients: [user.uuid] }));
    // They approve another workspace's shares.
    await dataOf(as(seeder.client, admin, 'POST', `/api/admin/users/${otherWorkspace.uuid}/approvers`, { approver_id: user.uuid, share_type: 'public' }));
    // Without their approver, their next share_copy is direct: a copy they sent to their friend.
    await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/users/${user.uuid}/approvers/${approver.uuid}/share_copy`));
    const sent = text('sent');
    const sentFile = await uploadFile(seeder.client, user.session, 'home', 'sent.txt', sent);
    expect((await post(user, `/api/nodes/${sentFile}`, { share_copy_with: [friend.uuid] })).status).toBe(204);
    const sentOffer = (await store.ctx.storage.sql.get<{ uuid: string }>('SELECT uuid FROM incoming_shares WHERE source_uuid = ?', [sentFile]))!.uuid;

    expect((await as(seeder.client, admin, 'DELETE', `/api/admin/users/${user.uuid}?confirm_delete=yes`)).status).toBe(200);

    expect(await rows('SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', file)).toBe(0);
    expect((await fetchRaw(store, link.url)).status).toBe(404);
    expect(await rows('SELECT COUNT(*) AS n FROM share_requests WHERE workspace_uuid = ? OR requester_uuid = ?', user.uuid, user.uuid)).toBe(0);
    expect(await rows('SELECT COUNT(*) AS n FROM incoming_shares WHERE recipient_uuid = ?', user.uuid)).toBe(0);
    expect(await rows('SELECT COUNT(*) AS n FROM share_recipients WHERE recipient_uuid = ?', user.uuid)).toBe(0);
    expect(await rows('SELECT COUNT(*) AS n FROM shares WHERE uuid = ?', privateToUser.share_uuid)).toBe(0);
    expect(await rows('SELECT COUNT(*) AS n FROM approvers WHERE workspace_uuid = ? OR approver_uuid = ?', user.uuid, user.uuid)).toBe(0);
    for (const content of [requested, offered]) {
      expect({ content, refs: await readBlobRefs(store, blobHashOf(content)), file: await readBlobStored(store, blobHashOf(content)) }).toEqual({ content, refs: 0, file: false });
    }
    // The copy they sent is their friend's to answer.
    expect(await readIncomingRow(store, sentOffer)).toMatchObject({ state: 'pending', sharer_uuid: null, sharer_fullname: expect.stringMatching(/^Dora Deleted/) });
    expect(await readBlobStored(store, blobHashOf(sent))).toBe(true);
    const { node_uuid } = await dataOf<{ node_uuid: string }>(as(seeder.client, friend, 'PUT', '/api/user/pending_incoming', { uuid: sentOffer, action: 'accept' }));
    expect(node_uuid).toEqual(expect.any(String));
    expect(await dataOf(as(seeder.client, friend, 'GET', '/api/nodes/shared_with_you/dirlist'))).toEqual([]);
  });
});

describe('deleting a user with transfer_data_to', () => {
  async function userWithShares(): Promise<{ user: SeededUser; friend: SeededUser; receiver: SeededUser; file: string; url: string }> {
    const user = await person('Tom Transferred');
    const friend = await person('Fay Friend');
    const receiver = await person('Rob Receiver');
    const file = await uploadFile(seeder.client, user.session, 'home', 'kept.txt', text('kept'));
    const { url } = await dataOf<{ url: string }>(post(user, `/api/nodes/${file}/shares`, { type: 'public' }));
    await dataOf(post(user, `/api/nodes/${file}/shares`, { type: 'private', recipients: [friend.uuid] }));
    return { user, friend, receiver, file, url };
  }

  it('moves the shares with the nodes by default', async () => {
    const t = await userWithShares();
    await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/users/${t.user.uuid}?confirm_delete=yes&transfer_data_to=${t.receiver.uuid}`));
    expect((await fetchRaw(store, t.url)).status).toBe(200);
    expect(await dataOf(as(seeder.client, t.friend, 'GET', `/api/nodes/${t.file}`))).toMatchObject({ owner_uuid: t.receiver.uuid });
    const listed = await dataOf<Array<{ uuid: string; public_shares: number; private_shares: number }>>(as(seeder.client, t.receiver, 'GET', '/api/nodes/public_shares/dirlist'));
    expect(listed).toMatchObject([{ uuid: t.file, public_shares: 1, private_shares: 1 }]);
  });

  it('removes the public links with delete_all_public_shares, the private shares with delete_all_private_shares', async () => {
    const pub = await userWithShares();
    await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/users/${pub.user.uuid}?confirm_delete=yes&transfer_data_to=${pub.receiver.uuid}&delete_all_public_shares=true`));
    expect((await fetchRaw(store, pub.url)).status).toBe(404);
    expect((await as(seeder.client, pub.friend, 'GET', `/api/nodes/${pub.file}`)).status).toBe(200);

    const priv = await userWithShares();
    await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/users/${priv.user.uuid}?confirm_delete=yes&transfer_data_to=${priv.receiver.uuid}&delete_all_private_shares=true&delete_all_public_shares=false`));
    expect((await fetchRaw(store, priv.url)).status).toBe(200);
    expectError(await as(seeder.client, priv.friend, 'GET', `/api/nodes/${priv.file}`), 404, 'not_found');
    expect(await rows("SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ? AND type = 'private'", priv.file)).toBe(0);
  });
});

describe('deleting a group', () => {
  it('forgets its approvers, requests, pending incoming shares and its place among recipients; its links go with its nodes', async () => {
    const group = await ga.group();
    const member = await person('Gus Member');
    const approver = await person('Ava Approver');
    const sender = await person('Sid Sender');
    await ga.member(group, member.uuid, { is_admin: true });
    const file = await uploadFile(seeder.client, member.session, `home:${group}`, 'team.txt', text('team'));
    const { url } = await dataOf<{ url: string }>(post(member, `/api/nodes/${file}/shares`, { type: 'public' }));
    await dataOf(as(seeder.client, admin, 'POST', `/api/admin/groups/${group}/approvers`, { approver_id: approver.uuid, share_type: 'share_copy' }));
    expect((await post(member, `/api/nodes/${file}`, { share_copy_with: [sender.uuid] })).status).toBe(202);
    const offered = text('offered to the group');
    const senderFile = await uploadFile(seeder.client, sender.session, 'home', 'for the team.txt', offered);
    expect((await post(sender, `/api/nodes/${senderFile}`, { share_copy_with: [group] })).status).toBe(204);
    await seeder.client.remove(sender.session, senderFile as never);
    await seeder.client.remove(sender.session, senderFile as never);
    await dataOf(post(sender, `/api/nodes/${await createFolder(seeder.client, sender.session, 'home', 'Team only')}/shares`, { type: 'private', recipients: [group] }));

    expect((await as(seeder.client, admin, 'DELETE', `/api/admin/groups/${group}?confirm_delete=yes`)).status).toBe(200);
    expect((await fetchRaw(store, url)).status).toBe(404);
    for (const [what, sql] of [
      ['approvers', 'SELECT COUNT(*) AS n FROM approvers WHERE workspace_uuid = ?'],
      ['requests', 'SELECT COUNT(*) AS n FROM share_requests WHERE workspace_uuid = ?'],
      ['incoming', 'SELECT COUNT(*) AS n FROM incoming_shares WHERE recipient_uuid = ?'],
      ['recipients', 'SELECT COUNT(*) AS n FROM share_recipients WHERE recipient_uuid = ?'],
    ] as const) {
      expect({ what, n: await rows(sql, group) }).toEqual({ what, n: 0 });
    }
    expect(await readBlobStored(store, blobHashOf(offered))).toBe(false);
    expect(await dataOf(as(seeder.client, approver, 'GET', '/api/pending_shares'))).toEqual([]);
    expect(await dataOf(as(seeder.client, member, 'GET', '/api/my_pending_shares'))).toEqual([]);
  });
});

describe('who vouches for the shares a transfer moves (issue 21, item 10b)', () => {
  const ALL = { node_permissions: ['read', 'write', 'delete', 'download'], share_permissions: ['public_create', 'private_create', 'upload_link_create'] };
  const deleteWith = (door: 'users' | 'groups', uuid: string, receiver: string) =>
    dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/${door}/${uuid}?confirm_delete=yes&transfer_data_to=${receiver}`));
  const publicLink = async (who: SeededUser, node: string) => dataOf<{ share_uuid: string; url: string }>(post(who, `/api/nodes/${node}/shares`, { type: 'public' }));
  const creatorOf = async (share: string) => (await store.ctx.storage.sql.get<{ creator_uuid: string | null }>('SELECT creator_uuid FROM shares WHERE uuid = ?', [share]))?.creator_uuid;
  const served = async (url: string) => (await fetchRaw(store, url)).status;

  it('a group handed to a user keeps only the receiver’s own shares: those of other members, live or not, end', async () => {
    const group = await ga.group();
    const receiver = await person('Rae Receiver');
    const colleague = await person('Cole Colleague');
    const gone = await person('Gil Gone');
    const idle = await person('Ida Idle');
    const narrowed = await person('Ned Narrowed');
    const partner = await person('Pam Partner');
    for (const m of [receiver, colleague, gone, idle, narrowed]) await ga.member(group, m.uuid, ALL);
    const file = await uploadFile(seeder.client, receiver.session, `home:${group}`, 'plan.txt', text('plan'));
    const own = await publicLink(receiver, file);
    const live = await publicLink(colleague, file);
    const privateShare = await dataOf<{ share_uuid: string }>(post(colleague, `/api/nodes/${file}/shares`, { type: 'private', recipients: [partner.uuid] }));
    const dead = [await publicLink(gone, file), await publicLink(idle, file), await publicLink(narrowed, file)];
    // Each of these three gives nothing before the transfer: its creator deleted, deactivated, without download.
    await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/users/${gone.uuid}?confirm_delete=yes`));
    await dataOf(as(seeder.client, admin, 'PUT', `/api/admin/users/${idle.uuid}`, { is_active: false }));
    await dataOf(as(seeder.client, admin, 'PUT', `/api/admin/groups/${group}/users/${narrowed.uuid}`, { node_permissions: ['read'] }));
    for (const link of dead) expect(await served(link.url)).toBe(404);
    expect({ own: await served(own.url), live: await served(live.url) }).toEqual({ own: 200, live: 200 });

    await deleteWith('groups', group, receiver.uuid);

    expect(await served(own.url)).toBe(200);
    expect(await creatorOf(own.share_uuid)).toBe(receiver.uuid);
    for (const link of [live, ...dead]) expect({ url: link.url, status: await served(link.url), row: await creatorOf(link.share_uuid) }).toEqual({ url: link.url, status: 404, row: undefined });
    expect(await creatorOf(privateShare.share_uuid)).toBeUndefined();
    expectError(await as(seeder.client, partner, 'GET', `/api/nodes/${file}`), 404, 'not_found');
    expect(await rows('SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', file)).toBe(1);
    expect((await dataOf<Array<{ share_uuid: string }>>(as(seeder.client, receiver, 'GET', '/api/shares'))).map((s) => s.share_uuid)).toEqual([own.share_uuid]);
  });

  it('a group handed to another group keeps the shares of that group’s members, held to what they hold there; the others end', async () => {
    const group = await ga.group();
    const heir = await ga.group();
    const both = await person('Bo Both');
    const readerThere = await person('Rory Reader');
    const onlyHere = await person('Oona Only');
    const gone = await person('Gus Gone');
    for (const m of [both, readerThere, onlyHere, gone]) await ga.member(group, m.uuid, ALL);
    await ga.member(heir, both.uuid, { node_permissions: ['read', 'download'] });
    await ga.member(heir, readerThere.uuid, { node_permissions: ['read'] });
    const file = await uploadFile(seeder.client, both.session, `home:${group}`, 'minutes.txt', text('minutes'));
    const kept = await publicLink(both, file);
    const narrowed = await publicLink(readerThere, file);
    const ended = [await publicLink(onlyHere, file), await publicLink(gone, file)];
    await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/users/${gone.uuid}?confirm_delete=yes`));

    await deleteWith('groups', group, heir);

    expect({ status: await served(kept.url), creator: await creatorOf(kept.share_uuid) }).toEqual({ status: 200, creator: both.uuid });
    // Kept, as a share of any node moved between groups: it serves while its creator holds read and download there.
    expect({ status: await served(narrowed.url), creator: await creatorOf(narrowed.share_uuid) }).toEqual({ status: 404, creator: readerThere.uuid });
    for (const link of ended) expect({ status: await served(link.url), row: await creatorOf(link.share_uuid) }).toEqual({ status: 404, row: undefined });
  });

  it('a user handed to a user: their shares go to the receiver only if they were active; shares others made on their nodes end', async () => {
    const group = await ga.group();
    const leaver = await person('Lee Leaver');
    const member = await person('Moe Member');
    const receiver = await person('Roz Receiver');
    for (const m of [leaver, member]) await ga.member(group, m.uuid, ALL);
    // A group folder with a member's link, moved into the leaver's home: the link gives nothing there.
    const folder = await createFolder(seeder.client, member.session, `home:${group}`, 'Moved');
    const othersLink = await publicLink(member, folder);
    await seeder.client.moveInto(leaver.session, folder, nodeId('home'));
    expect(await served(othersLink.url)).toBe(404);
    const file = await uploadFile(seeder.client, leaver.session, 'home', 'mine.txt', text('mine'));
    const ownLink = await publicLink(leaver, file);

    await deleteWith('users', leaver.uuid, receiver.uuid);
    expect({ status: await served(ownLink.url), creator: await creatorOf(ownLink.share_uuid) }).toEqual({ status: 200, creator: receiver.uuid });
    expect({ status: await served(othersLink.url), row: await creatorOf(othersLink.share_uuid) }).toEqual({ status: 404, row: undefined });

    // A deactivated user's links gave nothing: the transfer does not bring them back.
    const idle = await person('Ivy Idle');
    const idleFile = await uploadFile(seeder.client, idle.session, 'home', 'idle.txt', text('idle'));
    const idleLink = await publicLink(idle, idleFile);
    await dataOf(as(seeder.client, admin, 'PUT', `/api/admin/users/${idle.uuid}`, { is_active: false }));
    await deleteWith('users', idle.uuid, receiver.uuid);
    expect({ status: await served(idleLink.url), row: await creatorOf(idleLink.share_uuid) }).toEqual({ status: 404, row: undefined });
  });

  it('a user handed to a group: their own shares end (nobody takes their place); a member’s share on their nodes stays with that member', async () => {
    const heir = await ga.group();
    const leaver = await person('Lia Leaver');
    const member = await person('Max Member');
    await ga.member(heir, leaver.uuid, ALL);
    await ga.member(heir, member.uuid, ALL);
    const folder = await createFolder(seeder.client, member.session, `home:${heir}`, 'Borrowed');
    const membersLink = await publicLink(member, folder);
    await seeder.client.moveInto(leaver.session, folder, nodeId('home'));
    const file = await uploadFile(seeder.client, leaver.session, 'home', 'notes.txt', text('notes'));
    const ownLink = await publicLink(leaver, file);

    await deleteWith('users', leaver.uuid, heir);
    expect({ status: await served(ownLink.url), row: await creatorOf(ownLink.share_uuid) }).toEqual({ status: 404, row: undefined });
    expect({ status: await served(membersLink.url), creator: await creatorOf(membersLink.share_uuid) }).toEqual({ status: 200, creator: member.uuid });
  });
});
