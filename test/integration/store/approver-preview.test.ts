/**
 * An approver previews what they decide on (issue 31, item 9; access.ts resolveApproverPreview):
 * GET /resources/auth/pending/{file_access_key}/{pending_uuid}/{name} serves the request's file,
 * inline, to an approver of its workspace and share type while it waits, and to nobody else: not
 * the requester, another approver's colleague of another workspace, a recipient, a stranger, an
 * unknown or malformed UUID (all 404 alike, in parallel); the door shuts once the request is
 * decided or withdrawn, and gives nothing else of the node (no details, no listing, no download).
 * GET /api/nodes/{id}/approvals says which share types wait for an approver, naming nobody.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/store-client/index.js';
import type { TestStore } from '../../helpers/start-store.js';
import { createFolder, people, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { dataOf, startGroupStore, stopGroupStore } from '../../helpers/groups.js';
import { as, expectError, fetchRaw, LATEST } from '../../helpers/sharing.js';

let store: TestStore;
let seeder: Seeder;
let admin: StoreSession;
let person: ReturnType<typeof people>;

beforeAll(async () => {
  ({ store, seeder, admin } = await startGroupStore());
  person = people(seeder);
});
afterAll(() => stopGroupStore({ seeder, store }));

const addApprover = (workspace: string, approver: string, type: string) =>
  dataOf(as(seeder.client, admin, 'POST', `/api/admin/users/${workspace}/approvers`, { approver_id: approver, share_type: type }));
const preview = (who: SeededUser, pending: string, method: 'GET' | 'HEAD' = 'GET') => fetchRaw(store, `/resources/auth/pending/${who.session.fileAccessKey}/${pending}/report.txt`, { method });

async function requestLink(requester: SeededUser, node: string): Promise<string> {
  const res = await as(seeder.client, requester, 'POST', `/api/nodes/${node}/shares`, { type: 'public' });
  expect(res.status).toBe(202);
  return (res.body as { data: { pending_uuid: string } }).data.pending_uuid;
}

describe('an approver’s preview of a pending request', () => {
  it('serves the file inline to its approver while the request waits, and shuts when it is decided', async () => {
    const requester = await person('Rhea Requester');
    const approver = await person('Paula Approver');
    await addApprover(requester.uuid, approver.uuid, 'public');
    const file = await uploadFile(seeder.client, requester.session, 'home', 'report.txt', 'quarterly figures\n');
    const pending = await requestLink(requester, file);

    const seen = await preview(approver, pending);
    expect(seen.status).toBe(200);
    expect(seen.body.toString('utf8')).toBe('quarterly figures\n');
    expect(String(seen.headers['content-disposition'])).toMatch(/^inline/);
    expect((await preview(approver, pending, 'HEAD')).status).toBe(200);

    // Nothing else of the node: its details, its download path, its parent's listing.
    expectError(await as(seeder.client, approver, 'GET', `/api/nodes/${file}`), 404, 'not_found');
    expect((await fetchRaw(store, `/resources/auth/download/${approver.session.fileAccessKey}/${file}/${LATEST}/report.txt`)).status).toBe(404);
    expect((await fetchRaw(store, `/resources/auth/view/${approver.session.fileAccessKey}/${file}/${LATEST}/report.txt`)).status).toBe(404);

    // Decided: the door shuts.
    await dataOf(as(seeder.client, approver, 'PUT', `/api/pending_shares/${pending}/approval`, { status: 'rejected' }));
    const after = await preview(approver, pending);
    expect(after.status).toBe(404);
    expect(after.json()).toEqual({ status: 'error', msg: 'pending share not found', code: 'not_found' });
  });

  it('refuses everyone else alike, in parallel: requester, stranger, another workspace’s approver, unknown and malformed UUIDs', async () => {
    const requester = await person('Rita Requester');
    const approver = await person('Pia Approver');
    const stranger = await person('Sam Stranger');
    const elsewhere = await person('Olga Other');
    const otherOwner = await person('Otto Owner');
    await addApprover(requester.uuid, approver.uuid, 'public');
    await addApprover(otherOwner.uuid, elsewhere.uuid, 'public');
    const file = await uploadFile(seeder.client, requester.session, 'home', 'report.txt', 'secret draft\n');
    const pending = await requestLink(requester, file);

    const answers = await Promise.all([
      preview(requester, pending),
      preview(stranger, pending),
      preview(elsewhere, pending),
      preview(approver, randomUUID()),
      preview(approver, 'not-a-uuid'),
      ...Array.from({ length: 8 }, () => preview(stranger, randomUUID())),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body.toString('utf8')).not.toContain('secret draft');
    }
    // The approver alone, meanwhile, still sees it; a withdrawn request shuts the door too.
    expect((await preview(approver, pending)).status).toBe(200);
    await dataOf(as(seeder.client, requester, 'DELETE', `/api/my_pending_shares/${pending}`));
    expect((await preview(approver, pending)).status).toBe(404);
    // A bad key is no session at all.
    expect((await fetchRaw(store, `/resources/auth/pending/nope/${pending}/x`)).status).toBe(401);
  });

  it('gives no preview of a folder, and shuts for an approver who stops approving', async () => {
    const requester = await person('Fred Requester');
    const approver = await person('Fay Approver');
    await addApprover(requester.uuid, approver.uuid, 'public');
    const folder = await createFolder(seeder.client, requester.session, 'home', 'plans');
    expect((await preview(approver, await requestLink(requester, folder))).status).toBe(404);
    const file = await uploadFile(seeder.client, requester.session, 'home', 'report.txt', 'x');
    const pending = await requestLink(requester, file);
    expect((await preview(approver, pending)).status).toBe(200);
    await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/users/${requester.uuid}/approvers/${approver.uuid}/public`));
    expect((await preview(approver, pending)).status).toBe(404);
  });
});

describe('which shares of a node wait for an approver', () => {
  it('names the share types, never the approvers, and only to who sees the node', async () => {
    const owner = await person('Nora Owner');
    const approver = await person('Abe Approver');
    const stranger = await person('Stan Stranger');
    const file = await uploadFile(seeder.client, owner.session, 'home', 'a.txt', 'a');
    expect(await dataOf(as(seeder.client, owner, 'GET', `/api/nodes/${file}/approvals`))).toEqual({ needs_approval: [] });
    await addApprover(owner.uuid, approver.uuid, 'share_copy');
    await addApprover(owner.uuid, approver.uuid, 'public');
    expect(await dataOf(as(seeder.client, owner, 'GET', `/api/nodes/${file}/approvals`))).toEqual({ needs_approval: ['public', 'share_copy'] });
    expectError(await as(seeder.client, stranger, 'GET', `/api/nodes/${file}/approvals`), 404, 'not_found');
  });
});
