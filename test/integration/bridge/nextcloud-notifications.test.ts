/**
 * Nextcloud's notifications API on the bridge (bridge/nextcloud/notifications.ts) over the
 * store's notifications: a copy offered, an approval asked and decided each listed once, in JSON
 * and XML, with the fields of the notifications app's notificationToArray; the list's ETag (304
 * for the desktop's If-None-Match while nothing changed); one read by id; deleted one and all.
 * The caller's own only: another user's id is 404 to GET, and a DELETE of it (200, as in
 * Nextcloud) deletes nothing.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { apiCall, dataOf } from '../../helpers/user-api.js';
import { uploadFile } from '../../helpers/seed.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

interface NcNotification {
  notification_id: number;
  object_type: string;
  object_id: string;
  subject: string;
  [key: string]: unknown;
}

const LIST = '/ocs/v2.php/apps/notifications/api/v2/notifications';

describe('the Nextcloud notifications API on the bridge', () => {
  let f: BridgeFixture;
  let requester: DavUser;
  let approver: DavUser;
  let recipient: DavUser;
  let pendingUuid: string;

  async function call(path: string, who: DavUser, method = 'GET', headers: Record<string, string> = {}): Promise<Answer> {
    const res = await request(`${f.davUrl}${path}`, { method: method as 'GET', headers: { authorization: who.auth, 'ocs-apirequest': 'true', ...headers } });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  async function listOf(who: DavUser): Promise<NcNotification[]> {
    const answer = await call(`${LIST}?format=json`, who);
    expect(answer.status).toBe(200);
    return (JSON.parse(answer.text) as { ocs: { data: NcNotification[] } }).ocs.data;
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    requester = await f.newDavUser();
    approver = await f.newDavUser();
    recipient = await f.newDavUser();
    dataOf(await apiCall(f.client, f.admin, 'POST', `/api/admin/users/${requester.uuid}/approvers`, { approver_id: approver.uuid, share_type: 'share_copy' }));
    const file = await uploadFile(f.client, requester.session, 'home', 'budget.ods', 'numbers');
    const asked = await apiCall(f.client, requester.session, 'POST', `/api/nodes/${file}`, { share_copy_with: [recipient.uuid] });
    expect(asked.status).toBe(202);
    pendingUuid = (asked.body as { data: { pending_uuid: string } }).data.pending_uuid;
  });
  afterAll(async () => {
    await f.close();
  });

  it('lists the approval asked to its approver, with every field of the notifications app, in JSON', async () => {
    const listed = await listOf(approver);
    expect(listed).toEqual([
      {
        notification_id: expect.any(Number),
        app: 'driveway',
        user: approver.email,
        datetime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/),
        object_type: 'share_request',
        object_id: pendingUuid,
        subject: expect.stringMatching(/ asks you to approve a copy of "budget\.ods"$/),
        message: '',
        link: '',
        subjectRich: expect.stringMatching(/ asks you to approve a copy of "budget\.ods"$/),
        subjectRichParameters: [],
        messageRich: '',
        messageRichParameters: [],
        icon: '',
        shouldNotify: true,
        actions: [],
      },
    ]);
    expect(await listOf(requester)).toEqual([]);
    expect(await listOf(recipient)).toEqual([]);
  });

  it('lists in XML too, and in v1 without the rich fields', async () => {
    const xml = await call(LIST, approver);
    expect(xml.status).toBe(200);
    expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(xml.text).toMatch(/<data>\n {2}<element>\n {3}<notification_id>\d+<\/notification_id>\n {3}<app>driveway<\/app>/);
    expect(xml.text).toContain(`<object_id>${pendingUuid}</object_id>`);
    const v1 = await call('/ocs/v1.php/apps/notifications/api/v1/notifications?format=json', approver);
    const data = (JSON.parse(v1.text) as { ocs: { meta: { statuscode: number }; data: NcNotification[] } }).ocs;
    expect(data.meta.statuscode).toBe(100);
    expect(Object.keys(data.data[0]!).sort()).toEqual(['actions', 'app', 'datetime', 'link', 'message', 'notification_id', 'object_id', 'object_type', 'subject', 'user']);
  });

  it('gives the list an ETag: 304 to If-None-Match while it is unchanged, the desktop status header', async () => {
    const first = await call(`${LIST}?format=json`, approver);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(first.headers['x-nextcloud-user-status']).toBe('online');
    const again = await call(`${LIST}?format=json`, approver, 'GET', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('lists the decision to the requester and the copy to the recipient, once each; reads one by id; refuses another user\'s id', async () => {
    dataOf(await apiCall(f.client, approver.session, 'PUT', `/api/pending_shares/${pendingUuid}/approval`, { status: 'approved', comment: 'go ahead' }));
    const decided = await listOf(requester);
    expect(decided).toEqual([expect.objectContaining({ object_type: 'share_request', object_id: pendingUuid, subject: expect.stringMatching(/ approved your copy of "budget\.ods"$/), message: 'go ahead' })]);
    const offered = await listOf(recipient);
    expect(offered).toEqual([expect.objectContaining({ object_type: 'incoming_share', subject: expect.stringMatching(/ shared a copy of "budget\.ods" with you$/) })]);

    const id = decided[0]!.notification_id;
    const one = await call(`${LIST}/${id}?format=json`, requester);
    expect(one.status).toBe(200);
    expect((JSON.parse(one.text) as { ocs: { data: unknown } }).ocs.data).toEqual(decided[0]);
    const others = await Promise.all([call(`${LIST}/${id}?format=json`, recipient), call(`${LIST}/${id}?format=json`, approver), call(`${LIST}/0?format=json`, requester), call(`${LIST}/999999999?format=json`, requester)]);
    for (const other of others) {
      expect(other.status).toBe(404);
      expect((JSON.parse(other.text) as { ocs: { meta: { statuscode: number } } }).ocs.meta.statuscode).toBe(404);
    }
  });

  it('deletes one and all; a DELETE of another user\'s id answers 200 and deletes nothing', async () => {
    const theirs = (await listOf(recipient))[0]!.notification_id;
    const meddled = await call(`${LIST}/${theirs}?format=json`, approver, 'DELETE');
    expect(meddled.status).toBe(200);
    expect((await listOf(recipient)).map((n) => n.notification_id)).toEqual([theirs]);

    const own = (await listOf(approver))[0]!.notification_id;
    expect((await call(`${LIST}/${own}?format=json`, approver, 'DELETE')).status).toBe(200);
    expect(await listOf(approver)).toEqual([]);

    expect((await call(`${LIST}?format=json`, recipient, 'DELETE')).status).toBe(200);
    expect(await listOf(recipient)).toEqual([]);
    expect(dataOf<unknown[]>(await apiCall(f.client, recipient.session, 'GET', '/api/notifications'))).toEqual([]);
    expect(await listOf(requester)).toHaveLength(1);
  });
});
