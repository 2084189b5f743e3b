/**
 * The OCS sharing API on the bridge (issue 32, item 6), as the apps' share sheets call it
 * (Nextcloud's ShareAPIController: form fields path, shareType, shareWith, permissions,
 * publicUpload, password, expireDate): a public link is the store's link and works at
 * `/public/{token}` (password, expiry, upload-only), changed and removed through the same ids; a
 * user share is a copy offered (share_copy_with); on a drive with an approver the share answers
 * pending and a pending request exists, nothing offered; another user's ids are 404 (a fellow group
 * member's too, and the store refuses them the change as it refuses the removal); a read-only
 * group member cannot make an upload link. Everything through the store's own rules.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/index.js';
import { call, dataOf, groupAdmin } from '../../helpers/groups.js';
import { createFolder, uploadFile } from '../../helpers/seed.js';
import { basicAuth, bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

interface OcsAnswer {
  status: number;
  meta: { status: string; statuscode: number; message: string };
  data: Record<string, unknown> & Array<Record<string, unknown>>;
}

const SHARES = '/ocs/v2.php/apps/files_sharing/api/v1/shares';

describe('the OCS sharing API', () => {
  let f: BridgeFixture;
  let ada: DavUser;
  let bob: DavUser;
  let reports: NodeId;

  async function ocs(as: DavUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, form?: Record<string, string>): Promise<OcsAnswer> {
    const res = await request(`${f.davUrl}${path}${path.includes('?') ? '&' : '?'}format=json`, {
      method,
      headers: { authorization: as.auth, 'ocs-apirequest': 'true', ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    const json = (await res.body.json()) as { ocs: { meta: OcsAnswer['meta']; data: OcsAnswer['data'] } };
    return { status: res.statusCode, meta: json.ocs.meta, data: json.ocs.data };
  }

  const fetchLink = async (url: string, password?: string) => {
    const res = await request(url, { headers: password ? { authorization: `Basic ${Buffer.from(`x:${password}`).toString('base64')}` } : {} });
    return { status: res.statusCode, text: await res.body.text() };
  };

  beforeAll(async () => {
    f = await bridgeFixture();
    ada = await f.newDavUser();
    bob = await f.newDavUser();
    reports = await createFolder(f.client, ada.session, 'home', 'Reports');
    await uploadFile(f.client, ada.session, reports, 'q3.txt', 'third quarter');
  });
  afterAll(async () => {
    await f.close();
  });

  it('advertises files_sharing: links with optional password and expiry, upload, no federation', async () => {
    const res = await request(`${f.davUrl}/ocs/v1.php/cloud/capabilities?format=json`);
    const caps = ((await res.body.json()) as { ocs: { data: { capabilities: Record<string, Record<string, unknown>> } } }).ocs.data.capabilities;
    expect(caps.files_sharing).toMatchObject({
      api_enabled: true,
      public: { enabled: true, password: { enforced: false }, upload: true, upload_files_drop: true },
      federation: { outgoing: false, incoming: false },
    });
  });

  it('creates, lists, changes and deletes a public link that works at /public/{token}', async () => {
    const made = await ocs(ada, 'POST', SHARES, { path: '/home/Reports/q3.txt', shareType: '3', password: 'open sesame', expireDate: '2099-12-31' });
    expect(made.status).toBe(200);
    expect(made.meta.statuscode).toBe(200);
    const link = made.data;
    expect(link).toMatchObject({ share_type: 3, permissions: 1, path: '/home/Reports/q3.txt', item_type: 'file', expiration: '2099-12-31 00:00:00', uid_owner: ada.email, state: 'made' });
    expect(link.id).toMatch(/^\d+$/);
    expect(link.file_source).toEqual(expect.any(Number));
    expect(link.password).toBe('********');
    const url = String(link.url);
    expect(url).toBe(`${f.store.url}/public/${String(link.token)}`);
    expect((await fetchLink(url)).status).toBe(401);
    expect(await fetchLink(url, 'open sesame')).toEqual({ status: 200, text: 'third quarter' });
    // Stored as the store's link: its own listing holds it, with the expiry asked (the end of that day, UTC).
    const stored = await f.client.listMyShares(ada.session);
    expect(stored.map((s) => [s.type, s.node, s.passwordProtected, s.expiresMs])).toEqual([['public', expect.any(String), true, Date.UTC(2100, 0, 1)]]);

    const listed = await ocs(ada, 'GET', `${SHARES}?path=${encodeURIComponent('/home/Reports/q3.txt')}&reshares=true`);
    expect(listed.data.map((s) => [s.id, s.share_type, s.token, s.url])).toEqual([[link.id, 3, null, null]]);
    const sub = await ocs(ada, 'GET', `${SHARES}?path=${encodeURIComponent('/home/Reports')}&subfiles=true`);
    expect(sub.data.map((s) => s.id)).toEqual([link.id]);

    // The password removed and the expiry moved: the same token now opens without one.
    const changed = await ocs(ada, 'PUT', `${SHARES}/${String(link.id)}`, { password: '', expireDate: '2098-01-02' });
    expect(changed.status).toBe(200);
    expect(changed.data).toMatchObject({ id: link.id, expiration: '2098-01-02 00:00:00', password: null });
    expect(await fetchLink(url)).toEqual({ status: 200, text: 'third quarter' });
    expect((await ocs(ada, 'GET', `${SHARES}/${String(link.id)}`)).data[0]).toMatchObject({ id: link.id, expiration: '2098-01-02 00:00:00' });

    const removed = await ocs(ada, 'DELETE', `${SHARES}/${String(link.id)}`);
    expect(removed.status).toBe(200);
    expect((await fetchLink(url)).status).toBe(404);
    expect(await f.client.listMyShares(ada.session)).toEqual([]);
    expect((await ocs(ada, 'GET', `${SHARES}/${String(link.id)}`)).status).toBe(404);
  });

  it('makes an upload-only link of a folder (permissions 4) and switches a link between reading and uploads', async () => {
    const made = await ocs(ada, 'POST', SHARES, { path: '/home/Reports', shareType: '3', permissions: '4' });
    expect(made.data).toMatchObject({ share_type: 3, permissions: 4, item_type: 'folder' });
    const url = String(made.data.url);
    const info = await request(`${url}?info`);
    expect(await info.body.json()).toMatchObject({ data: { type: 'Upload' } });
    const toRead = await ocs(ada, 'PUT', `${SHARES}/${String(made.data.id)}`, { permissions: '1' });
    expect(toRead.data).toMatchObject({ permissions: 1 });
    expect((await f.client.listMyShares(ada.session)).map((s) => s.type)).toEqual(['public']);
    // An upload link needs a folder; read and upload together is no driveway link.
    expect((await ocs(ada, 'POST', SHARES, { path: '/home/Reports/q3.txt', shareType: '3', publicUpload: 'true' })).status).toBe(404);
    expect((await ocs(ada, 'PUT', `${SHARES}/${String(made.data.id)}`, { permissions: '15' })).status).toBe(400);
    await ocs(ada, 'DELETE', `${SHARES}/${String(made.data.id)}`);
  });

  it('offers a copy to another user for share_type 0: pending in their incoming list, no lasting share', async () => {
    const made = await ocs(ada, 'POST', SHARES, { path: '/home/Reports/q3.txt', shareType: '0', shareWith: bob.email });
    expect(made.status).toBe(200);
    expect(made.data).toMatchObject({ share_type: 0, share_with: bob.email, state: 'offered' });
    const offered = (await dataOf<Array<{ name: string; sharer_uuid: string }>>(call(f.client, bob.session, 'GET', '/api/user/pending_incoming'))).map((o) => [o.name, o.sharer_uuid]);
    expect(offered).toEqual([['q3.txt', ada.uuid]]);
    expect((await ocs(ada, 'POST', SHARES, { path: '/home/Reports/q3.txt', shareType: '0', shareWith: 'nobody@example.test' })).status).toBe(404);
  });

  it('answers pending on a drive with an approver: a request exists, nothing offered, nothing linked, and DELETE withdraws it', async () => {
    const carl = await f.newDavUser();
    const approver = await f.newDavUser();
    const dora = await f.newDavUser();
    for (const type of ['share_copy', 'public']) {
      await dataOf(call(f.client, f.admin, 'POST', `/api/admin/users/${carl.uuid}/approvers`, { approver_id: approver.uuid, share_type: type }));
    }
    await uploadFile(f.client, carl.session, 'home', 'plan.txt', 'the plan');
    const copy = await ocs(carl, 'POST', SHARES, { path: '/home/plan.txt', shareType: '0', shareWith: dora.email });
    expect(copy.status).toBe(200);
    expect(copy.data).toMatchObject({ share_type: 0, state: 'pending', token: null, note: expect.stringMatching(/^Waiting for approval/) });
    const link = await ocs(carl, 'POST', SHARES, { path: '/home/plan.txt', shareType: '3' });
    expect(link.data).toMatchObject({ share_type: 3, state: 'pending', token: null, url: null });
    // Where the link will be once approved is said in the note only: it does not open yet.
    const future = /Once approved, the link is (\S+)$/.exec(String(link.data.note))?.[1] as string;
    expect(future).toMatch(/\/public\//);
    expect((await fetchLink(future)).status).toBe(404);
    const pending = await dataOf<Array<{ share_type: string; state: string }>>(call(f.client, approver.session, 'GET', '/api/pending_shares'));
    expect(pending.map((p) => [p.share_type, p.state]).sort()).toEqual([
      ['public', 'pending'],
      ['share_copy', 'pending'],
    ]);
    expect(await dataOf(call(f.client, dora.session, 'GET', '/api/user/pending_incoming'))).toEqual([]);
    expect(await f.client.listMyShares(carl.session)).toEqual([]);
    // Listed as pending, and withdrawn by DELETE of its id.
    const listed = await ocs(carl, 'GET', SHARES);
    expect(listed.data.map((s) => [s.id, s.state]).sort()).toEqual([[copy.data.id, 'pending'], [link.data.id, 'pending']].sort());
    expect((await ocs(carl, 'PUT', `${SHARES}/${String(link.data.id)}`, { password: 'x' })).status).toBe(400);
    expect((await ocs(carl, 'DELETE', `${SHARES}/${String(link.data.id)}`)).status).toBe(200);
    expect((await dataOf<unknown[]>(call(f.client, approver.session, 'GET', '/api/pending_shares'))).length).toBe(1);
  });

  it("refuses another user's share ids with 404, in parallel, and changes nothing", async () => {
    const made = await ocs(ada, 'POST', SHARES, { path: '/home/Reports', shareType: '3' });
    const id = String(made.data.id);
    const answers = await Promise.all([
      ocs(bob, 'GET', `${SHARES}/${id}`),
      ocs(bob, 'PUT', `${SHARES}/${id}`, { password: 'mine now' }),
      ocs(bob, 'DELETE', `${SHARES}/${id}`),
      ocs(bob, 'GET', `${SHARES}/12345`),
    ]);
    expect(answers.map((a) => [a.status, a.meta.statuscode])).toEqual(Array.from({ length: 4 }, () => [404, 404]));
    expect((await ocs(bob, 'GET', SHARES)).data).toEqual([]);
    const still = await f.client.listMyShares(ada.session);
    expect(still.map((s) => [s.type, s.passwordProtected])).toEqual([['public', false]]);
    expect((await fetchLink(String(made.data.url))).status).toBe(200);
    await ocs(ada, 'DELETE', `${SHARES}/${id}`);
  });

  it("refuses a group member's change of another member's link: 404 here (ids name one's own links), 403 from the store, the link keeping its password and expiry", async () => {
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group(`Pair ${Date.now()}`, { quotaBytes: 1_000_000 });
    const [ann, ben] = [await f.newDavUser(), await f.newDavUser()];
    const all = ['read', 'write', 'delete', 'download'];
    await ga.member(team, ann.uuid, { node_permissions: all, share_permissions: ['public_create', 'public_delete'] });
    await ga.member(team, ben.uuid, { node_permissions: all, share_permissions: ['public_create'] });
    await createFolder(f.client, ann.session, `home:${team}`, 'Minutes');
    const name = (await f.client.listGroups(ann.session)).find((g) => g.id === team)?.name as string;
    const made = await ocs(ann, 'POST', SHARES, { path: `/groups/${name}/home/Minutes`, shareType: '3', password: 'ann only', expireDate: '2099-12-31' });
    expect(made.status).toBe(200);
    const [link] = await f.client.listMyShares(ann.session);
    const loosened = await ocs(ben, 'PUT', `${SHARES}/${String(made.data.id)}`, { password: '', expireDate: '' });
    expect([loosened.status, loosened.meta.statuscode]).toEqual([404, 404]);
    const direct = await call(f.client, ben.session, 'PUT', `/api/shares/${link!.id}`, { password: null, expires: null });
    expect([direct.status, direct.body]).toEqual([403, { status: 'error', code: 'forbidden', msg: 'public_delete share permission required' }]);
    const still = await f.client.listMyShares(ann.session);
    expect(still.map((s) => [s.id, s.passwordProtected, s.expiresMs])).toEqual([[link!.id, true, Date.UTC(2100, 0, 1)]]);
    expect((await fetchLink(String(made.data.url))).status).toBe(401);
    expect(await fetchLink(String(made.data.url), 'ann only')).toEqual({ status: 200, text: expect.any(String) });
  });

  it('refuses an upload link from a read-only group drive member: a share never grants more than its creator holds', async () => {
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group(`Team ${Date.now()}`, { quotaBytes: 1_000_000 });
    const reader = await f.newDavUser();
    const writer = await f.newDavUser();
    const shareAll = ['public_create', 'public_delete', 'upload_link_create', 'upload_link_delete'];
    await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'], share_permissions: shareAll });
    await ga.member(team, writer.uuid, { node_permissions: ['read', 'write', 'delete', 'download'], share_permissions: shareAll });
    await createFolder(f.client, writer.session, `home:${team}`, 'Drop');
    const groups = await f.client.listGroups(reader.session);
    const name = groups.find((g) => g.id === team)?.name as string;
    const path = `/groups/${name}/home/Drop`;
    const refused = await ocs(reader, 'POST', SHARES, { path, shareType: '3', permissions: '4' });
    expect(refused.status).toBe(403);
    expect(refused.meta.message).toMatch(/write/);
    expect(await f.client.listMyShares(reader.session)).toEqual([]);
    // A read link the member may make; turning it into an upload link is refused the same way.
    const read = await ocs(reader, 'POST', SHARES, { path, shareType: '3' });
    expect(read.data).toMatchObject({ permissions: 1, path });
    expect((await ocs(reader, 'PUT', `${SHARES}/${String(read.data.id)}`, { permissions: '4' })).status).toBe(403);
    expect((await f.client.listMyShares(reader.session)).map((s) => s.type)).toEqual(['public']);
  });

  describe('as an app password (the apps sign in with the login flow\'s)', () => {
    // An app password of ada's, as the login flow makes it (may_share) or not, and a session it opens.
    async function appPassword(mayShare: boolean): Promise<{ uuid: string; dav: DavUser }> {
      const made = await dataOf<{ uuid: string; password: string; may_share: boolean }>(
        call(f.client, ada.session, 'POST', '/api/user/app_passwords', { name: mayShare ? 'phone' : 'rclone', password: ada.password, ...(mayShare ? { may_share: true } : {}) }),
      );
      expect(made.may_share).toBe(mayShare);
      const session = await f.client.login(ada.email, made.password);
      return { uuid: made.uuid, dav: { ...ada, session, auth: basicAuth(ada.email, made.password) } };
    }
    const linkCount = async () => (await f.client.listMyShares(ada.session)).length;

    it('one made with may_share makes, changes and removes a link through OCS and REST, and is listed so', async () => {
      const { uuid, dav } = await appPassword(true);
      const listed = await dataOf<Array<{ uuid: string; may_share: boolean }>>(call(f.client, ada.session, 'GET', '/api/user/app_passwords'));
      expect(listed.find((a) => a.uuid === uuid)?.may_share).toBe(true);
      const before = await linkCount();
      const made = await ocs(dav, 'POST', SHARES, { path: '/home/Reports/q3.txt', shareType: '3' });
      expect(made.status).toBe(200);
      expect((await ocs(dav, 'PUT', `${SHARES}/${String(made.data.id)}`, { expireDate: '2099-01-02' })).status).toBe(200);
      const viaRest = await dataOf<{ share_uuid: string; token: string }>(call(f.client, dav.session, 'POST', `/api/nodes/${reports}/shares`, { type: 'public' }));
      expect(viaRest.token).toEqual(expect.any(String));
      expect(await linkCount()).toBe(before + 2);
      expect((await ocs(dav, 'DELETE', `${SHARES}/${String(made.data.id)}`)).status).toBe(200);
      expect((await call(f.client, dav.session, 'DELETE', `/api/shares/${viaRest.share_uuid}`)).status).toBe(200);
      expect(await linkCount()).toBe(before);
    });

    it('one made without it is refused 403 through OCS and REST and nothing is made', async () => {
      const { uuid, dav } = await appPassword(false);
      const listed = await dataOf<Array<{ uuid: string; may_share: boolean }>>(call(f.client, ada.session, 'GET', '/api/user/app_passwords'));
      expect(listed.find((a) => a.uuid === uuid)?.may_share).toBe(false);
      const before = await linkCount();
      expect((await ocs(dav, 'POST', SHARES, { path: '/home/Reports/q3.txt', shareType: '3' })).status).toBe(403);
      const rest = await call(f.client, dav.session, 'POST', `/api/nodes/${reports}/shares`, { type: 'public' });
      expect(rest.status).toBe(403);
      expect(rest.body).toMatchObject({ status: 'error', msg: expect.stringContaining('app password') });
      expect(await linkCount()).toBe(before);
    });

    it('neither may approve or decline a pending request (403 before anything is looked up)', async () => {
      for (const mayShare of [true, false]) {
        const { dav } = await appPassword(mayShare);
        const res = await call(f.client, dav.session, 'PUT', '/api/pending_shares/00000000-0000-4000-8000-000000000000/approval', { approve: true });
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ status: 'error', msg: expect.stringContaining('app password') });
      }
    });
  });
});
