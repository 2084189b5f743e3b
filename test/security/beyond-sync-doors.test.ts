/**
 * Issue 32's doors, tried as an attacker (docs/security.md "Doors", "Sharing from the apps",
 * "Push"): the OCS sharing API and the store's `PUT /api/shares/{uuid}`, the OCS and REST
 * notifications, previews by file id and by path, WebDAV SEARCH and `POST /api/search`, favorites
 * (REPORT oc:filter-files, PROPPATCH oc:favorite), bulk upload, and push. Each is tried with
 * another user's ids (node UUIDs, numeric file ids, share ids, notification ids), a group's drive
 * the caller is not in or holds no read or write on, a user of another organization and an app
 * password without the share right; the id guessing in parallel. A real store, and the bridge over
 * HTTP on the in-process client (push needs the store's change feed); every refusal is checked
 * against the stored state read again through the store: nothing changed. Where the store shows a
 * group's node to a member without read (access.ts: visible, not readable), that member gets the
 * store's 403; a name in that drive answers alike whether it exists or not.
 */
import { createHash, randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type NodeId } from '../../src/store-client/index.js';
import { bridgeRequests, davRequest, multistatusOf, type DavAnswer } from '../helpers/dav-requests.js';
import { groupAdmin, readCountRows } from '../helpers/groups.js';
import { connectPush, pushUrl, type PushClient } from '../helpers/push-client.js';
import { topLevelRow, uploadFile, USER_PASSWORD } from '../helpers/seed.js';
import { basicAuth, bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { apiCall, dataOf } from '../helpers/user-api.js';

const OC = 'http://owncloud.org/ns';
const SHARES = '/ocs/v2.php/apps/files_sharing/api/v1/shares';
const NOTIFICATIONS = '/ocs/v2.php/apps/notifications/api/v2/notifications';
const FILEID_PROPFIND = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop><oc:fileid/></d:prop></d:propfind>`;
const ALL = ['read', 'write', 'delete', 'download'];
const BOUNDARY = 'boundary_5e3c1f0a9d7b4c2e8f6a1b3d5c7e9f01';

interface Ocs {
  status: number;
  text: string;
  /** OCS v1 answers HTTP 200 and says the status here; v2 both. */
  statuscode: number;
  data: Record<string, unknown>;
}

describe('issue 32’s doors reach nothing that is not the caller’s', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  let mallory: DavUser;
  /** A user of another organization. */
  let foreign: DavUser;
  let team: string;
  let teamHome: NodeId;
  let secret: NodeId;
  let photo: NodeId;
  let teamPhoto: NodeId;
  let photoFileId: number;
  let teamPhotoFileId: number;
  let secretLink: { ocsId: string; uuid: string };
  let teamLink: { ocsId: string; uuid: string };
  let bobNote: number;
  const { davAs } = bridgeRequests(() => f);
  const files = (u: DavUser): string => `/remote.php/dav/files/${encodeURIComponent(u.email)}`;

  async function ocs(as: DavUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, form?: Record<string, string>): Promise<Ocs> {
    const answer = await davRequest(f.davUrl, method, `${path}${path.includes('?') ? '&' : '?'}format=json`, {
      auth: as.auth,
      headers: { 'ocs-apirequest': 'true', ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    const json = JSON.parse(answer.text) as { ocs: { meta: { statuscode: number }; data: Record<string, unknown> } };
    return { status: answer.status, text: answer.text, statuscode: json.ocs.meta.statuscode, data: json.ocs.data };
  }
  const fileIdOf = async (as: DavUser, folder: string, name: string): Promise<number> => {
    const entry = (await f.client.listFolder(as.session, nodeId(folder))).find((e) => e.name === name);
    expect(entry?.fileId, `${name} in ${folder}`).toBeTypeOf('number');
    return entry!.fileId!;
  };
  const names = async (as: DavUser, folder: string): Promise<string[]> => (await f.client.listFolder(as.session, nodeId(folder))).map((e) => e.name).sort();
  const shareRow = (uuid: string) => f.store.ctx.storage.sql.get<Record<string, unknown>>('SELECT * FROM shares WHERE uuid = ?', [uuid]);
  const sharesOn = (node: string): Promise<number> => readCountRows(f.store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', node);
  const notesOf = async (u: DavUser): Promise<number[]> => dataOf<Array<{ id: number }>>(await apiCall(f.client, u.session, 'GET', '/api/notifications')).map((n) => n.id);

  beforeAll(async () => {
    f = await bridgeFixture({ transport: 'local' });
    [alice, bob, mallory] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
    const ga = groupAdmin(f.client, f.admin);
    await ga.organization('beyond-org');
    const foreignEmail = `foreign-${randomUUID().slice(0, 8)}@example.test`;
    const foreignUuid = await f.client.createUser(f.admin, { fullname: 'Foreign', email: foreignEmail, password: USER_PASSWORD }, 'beyond-org');
    foreign = { uuid: foreignUuid!, email: foreignEmail, password: USER_PASSWORD, session: await f.client.login(foreignEmail, USER_PASSWORD), auth: basicAuth(foreignEmail, USER_PASSWORD) };

    const png = await sharp({ create: { width: 120, height: 80, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();
    secret = await uploadFile(f.client, alice.session, 'home', 'secret.txt', 'alice only');
    photo = await uploadFile(f.client, alice.session, 'home', 'photo.png', png);
    photoFileId = await fileIdOf(alice, 'home', 'photo.png');
    team = await ga.group('Vault', { quotaBytes: 10_000_000 });
    teamHome = nodeId(`home:${team}`);
    await ga.member(team, alice.uuid, { node_permissions: ALL, share_permissions: ['public_create', 'public_delete', 'upload_link_create', 'upload_link_delete'] });
    await ga.member(team, mallory.uuid, { node_permissions: [] });
    await ga.member(team, bob.uuid, { node_permissions: ['read'] });
    teamPhoto = await uploadFile(f.client, alice.session, `home:${team}`, 'team.png', png);
    await uploadFile(f.client, alice.session, `home:${team}`, 'team.txt', 'team only');
    teamPhotoFileId = await fileIdOf(alice, `home:${team}`, 'team.png');

    const made = await ocs(alice, 'POST', SHARES, { path: '/home/secret.txt', shareType: '3', password: 'link-Passw0rd!', expireDate: '2099-01-01' });
    expect(made.status, made.text).toBe(200);
    const madeTeam = await ocs(alice, 'POST', SHARES, { path: '/groups/Vault/home/team.txt', shareType: '3' });
    expect(madeTeam.status, madeTeam.text).toBe(200);
    const links = await f.client.listMyShares(alice.session);
    const uuidOf = (node: NodeId | string) => links.find((l) => l.node === node)!.id;
    secretLink = { ocsId: String(made.data.id), uuid: uuidOf(secret) };
    const teamTxt = (await f.client.listFolder(alice.session, teamHome)).find((e) => e.name === 'team.txt')!.id;
    teamLink = { ocsId: String(madeTeam.data.id), uuid: uuidOf(teamTxt) };

    // A copy offered to bob: bob's notification.
    expect((await apiCall(f.client, alice.session, 'POST', `/api/nodes/${secret}`, { share_copy_with: [bob.uuid] })).status).toBe(204);
    bobNote = (await notesOf(bob))[0]!;
    expect(bobNote).toBeTypeOf('number');
  });
  afterAll(async () => {
    await f?.close();
  });



  describe('OCS sharing and PUT /api/shares/{uuid}', () => {
    it('another user’s share id is 404 to GET, PUT and DELETE, the body of a missing id, in parallel; the link is unchanged', async () => {
      const before = await shareRow(secretLink.uuid);
      const missing = await ocs(mallory, 'GET', `${SHARES}/123456789`);
      expect(missing.status).toBe(404);
      const tries = await Promise.all(
        [mallory, foreign, bob].flatMap((u) => [
          ocs(u, 'GET', `${SHARES}/${secretLink.ocsId}`),
          ocs(u, 'PUT', `${SHARES}/${secretLink.ocsId}`, { password: '', expireDate: '' }),
          ocs(u, 'DELETE', `${SHARES}/${secretLink.ocsId}`),
          ocs(u, 'PUT', `${SHARES}/${teamLink.ocsId}`, { publicUpload: 'true' }),
          ocs(u, 'DELETE', `${SHARES}/${teamLink.ocsId}`),
        ]),
      );
      for (const answer of tries) expect({ status: answer.status, text: answer.text }).toEqual({ status: missing.status, text: missing.text });
      // Nor does a list show them.
      for (const u of [mallory, foreign, bob]) expect((await ocs(u, 'GET', SHARES)).data).toEqual([]);
      expect(await shareRow(secretLink.uuid)).toEqual(before);
      expect(before?.password_hash).toBeTruthy();
      expect((await f.client.listMyShares(alice.session)).map((l) => l.id).sort()).toEqual([secretLink.uuid, teamLink.uuid].sort());
    });

    it('guessing share ids in parallel finds nothing: every guess is the body of a missing id', async () => {
      const missing = await ocs(mallory, 'GET', `${SHARES}/1`);
      const own = Number(secretLink.ocsId);
      const guesses = [own - 1, own + 1, Number(teamLink.ocsId) + 1, 0, 2 ** 48 - 1, ...Array.from({ length: 30 }, (_, i) => Math.floor(Math.random() * 2 ** 48) + i), `${own}.0`, `0${own}`, `${own}%20`, '-1'];
      const answers = await Promise.all(guesses.map((id) => ocs(mallory, 'GET', `${SHARES}/${id}`)));
      for (const answer of answers) expect({ status: answer.status, text: answer.text }).toEqual({ status: 404, text: missing.text });
    });

    it('PUT /api/shares/{uuid} of another’s link: 404 to whoever does not see its node, as a missing one, in parallel; 403 to a group member without the delete share right; unchanged', async () => {
      const before = await Promise.all([shareRow(secretLink.uuid), shareRow(teamLink.uuid)]);
      const put = (u: DavUser, uuid: string) => apiCall(f.client, u.session, 'PUT', `/api/shares/${uuid}`, { password: null, expires: null });
      const missing = await put(mallory, '00000000-0000-4000-8000-000000000000');
      expect(missing.status).toBe(404);
      const hidden = await Promise.all([put(mallory, secretLink.uuid), put(foreign, secretLink.uuid), put(bob, secretLink.uuid), put(foreign, teamLink.uuid), put(mallory, secretLink.uuid.toUpperCase()), put(foreign, teamLink.uuid.toUpperCase())]);
      for (const answer of hidden) expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: missing.body });
      // A group's nodes are visible to its members (access.ts), with read (bob) or without (mallory): the share right decides.
      for (const seen of await Promise.all([put(bob, teamLink.uuid), put(mallory, teamLink.uuid)])) {
        expect(seen.status).toBe(403);
        expect(seen.body).toMatchObject({ status: 'error', code: 'forbidden', msg: expect.stringContaining('public_delete') });
      }
      expect(await Promise.all([shareRow(secretLink.uuid), shareRow(teamLink.uuid)])).toEqual(before);
    });

    it('makes no link of a node outside the caller’s view, of a group drive without the right, nor through `..`; nothing made', async () => {
      const counts = async () => [await sharesOn(secret), await sharesOn(teamPhoto), await sharesOn(teamHome)];
      const before = await counts();
      const tries: Array<[DavUser, string, number]> = [
        [mallory, `/home/secret.txt`, 404],
        [mallory, `/home/../../${alice.email}/home/secret.txt`, 404],
        [mallory, `${files(alice)}/home/secret.txt`, 404],
        [foreign, '/groups/Vault/home/team.png', 404],
        [foreign, `/home/${secret}`, 404],
        [mallory, `/${secret}`, 404],
      ];
      const answers = await Promise.all(tries.map(([u, path]) => ocs(u, 'POST', SHARES, { path, shareType: '3' })));
      answers.forEach((answer, i) => expect(answer.status, tries[i]![1]).toBe(tries[i]![2]));
      // Mallory is in the group without read: its drive is not shown to her, so a name in it, there or not, is 404 naming nothing.
      const blind = await Promise.all(['team.png', 'team.txt', 'not-there.png'].map((name) => ocs(mallory, 'POST', SHARES, { path: `/groups/Vault/home/${name}`, shareType: '3' })));
      for (const answer of blind) {
        expect(answer.status).toBe(404);
        expect(answer.text).not.toMatch(/team\.|not-there/);
      }
      // Bob reads the group's drive, without the right to make a link there.
      const bobs = await ocs(bob, 'POST', SHARES, { path: '/groups/Vault/home/team.png', shareType: '3' });
      expect(bobs.status).toBe(403);
      expect(await counts()).toEqual(before);
    });

    it('offers no copy to a user of another organization (404), and that user is told nothing', async () => {
      const before = await notesOf(foreign);
      for (const shareWith of [foreign.email, foreign.uuid]) {
        const answer = await ocs(alice, 'POST', SHARES, { path: '/home/secret.txt', shareType: '0', shareWith });
        expect(answer.status, shareWith).toBe(404);
      }
      expect(await notesOf(foreign)).toEqual(before);
      expect(await names(foreign, 'incoming')).toEqual([]);
    });

    it('an app password without the share right makes, changes and removes no link (403); with it, another’s id is still 404', async () => {
      const app = async (u: DavUser, mayShare: boolean): Promise<DavUser> => {
        const made = dataOf<{ password: string }>(await apiCall(f.client, u.session, 'POST', '/api/user/app_passwords', { name: 'ocs', password: u.password, ...(mayShare ? { may_share: true } : {}) }));
        return { ...u, session: await f.client.login(u.email, made.password), auth: basicAuth(u.email, made.password) };
      };
      const [plain, bobSharing] = await Promise.all([app(alice, false), app(bob, true)]);
      const before = await Promise.all([shareRow(secretLink.uuid), sharesOn(photo)]);
      const refused = await Promise.all([
        ocs(plain, 'POST', SHARES, { path: '/home/photo.png', shareType: '3' }),
        ocs(plain, 'PUT', `${SHARES}/${secretLink.ocsId}`, { password: '' }),
        ocs(plain, 'DELETE', `${SHARES}/${secretLink.ocsId}`),
        apiCall(f.client, plain.session, 'PUT', `/api/shares/${secretLink.uuid}`, { password: null }),
        apiCall(f.client, plain.session, 'DELETE', `/api/shares/${secretLink.uuid}`),
      ]);
      for (const answer of refused) expect(answer.status).toBe(403);
      expect(await Promise.all([shareRow(secretLink.uuid), sharesOn(photo)])).toEqual(before);
      // Another user's app password with the share right: still only its own ids.
      const bobs = await Promise.all([
        ocs(bobSharing, 'DELETE', `${SHARES}/${secretLink.ocsId}`),
        ocs(bobSharing, 'PUT', `${SHARES}/${secretLink.ocsId}`, { password: '' }),
        apiCall(f.client, bobSharing.session, 'DELETE', `/api/shares/${secretLink.uuid}`),
        apiCall(f.client, bobSharing.session, 'PUT', `/api/shares/${secretLink.uuid}`, { password: null }),
      ]);
      expect(bobs.map((a) => a.status)).toEqual([404, 404, 404, 404]);
      expect(await shareRow(secretLink.uuid)).toEqual(before[0]);
    });
  });

  describe('notifications', () => {
    it('another user’s notification id is 404 through OCS and REST, the body of a missing id, in parallel; deletes change nothing', async () => {
      const before = await notesOf(bob);
      const missingOcs = await ocs(mallory, 'GET', `${NOTIFICATIONS}/987654321`);
      expect(missingOcs.status).toBe(404);
      const missingRest = await apiCall(f.client, mallory.session, 'GET', '/api/notifications/987654321');
      expect(missingRest.status).toBe(404);
      const [ocsGets, restGets, restDeletes, ocsDeletes] = await Promise.all([
        Promise.all([mallory, foreign, alice].flatMap((u) => [ocs(u, 'GET', `${NOTIFICATIONS}/${bobNote}`), ocs(u, 'GET', `/ocs/v1.php/apps/notifications/api/v1/notifications/${bobNote}`)])),
        Promise.all([mallory, foreign, alice].map((u) => apiCall(f.client, u.session, 'GET', `/api/notifications/${bobNote}`))),
        Promise.all([mallory, foreign, alice].map((u) => apiCall(f.client, u.session, 'DELETE', `/api/notifications/${bobNote}`))),
        Promise.all([mallory, foreign, alice].map((u) => ocs(u, 'DELETE', `${NOTIFICATIONS}/${bobNote}`))),
      ]);
      for (const answer of ocsGets) expect(answer.statuscode).toBe(404);
      // v2 says it in the HTTP status too, with the body of a missing id; v1 answers HTTP 200.
      for (const answer of ocsGets.filter((_, i) => i % 2 === 0)) expect([answer.status, answer.text]).toEqual([404, missingOcs.text]);
      for (const answer of restGets) expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: missingRest.body });
      for (const answer of restDeletes) expect(answer.status).toBe(404);
      // Nextcloud answers a DELETE of an id the caller has not with 200, and deletes nothing.
      for (const answer of ocsDeletes) expect(answer.status).toBe(200);
      // Deleting all of one's own leaves others' alone.
      expect((await ocs(mallory, 'DELETE', NOTIFICATIONS)).status).toBe(200);
      expect((await apiCall(f.client, foreign.session, 'DELETE', '/api/notifications')).status).toBe(200);
      expect(await notesOf(bob)).toEqual(before);
      expect(before).toContain(bobNote);
      // And no list shows another's.
      for (const u of [mallory, foreign, alice]) expect((await ocs(u, 'GET', NOTIFICATIONS)).data).toEqual([]);
    });

    it('guessing notification ids in parallel through REST and OCS finds none of another’s', async () => {
      const before = await notesOf(bob);
      const missingRest = await apiCall(f.client, mallory.session, 'GET', '/api/notifications/987654321');
      const missingOcs = await ocs(mallory, 'GET', `${NOTIFICATIONS}/987654321`);
      const ids = Array.from({ length: 25 }, (_, i) => i + 1);
      const [rest, viaOcs] = await Promise.all([
        Promise.all(ids.map((id) => apiCall(f.client, mallory.session, 'GET', `/api/notifications/${id}`))),
        Promise.all(ids.map((id) => ocs(foreign, 'GET', `${NOTIFICATIONS}/${id}`))),
      ]);
      for (const answer of rest) expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: missingRest.body });
      for (const answer of viaOcs) expect({ status: answer.status, text: answer.text }).toEqual({ status: 404, text: missingOcs.text });
      expect(await notesOf(bob)).toEqual(before);
    });
  });

  describe('previews', () => {
    const preview = (as: DavUser, query: string, form = 'preview'): Promise<DavAnswer> => davAs(as, 'GET', `/index.php/core/${form}?${query}`);

    it('another user’s and a closed group’s file ids are the empty 404 of a missing one, in parallel; a member without download 403', async () => {
      expect((await preview(alice, `fileId=${photoFileId}&x=64&y=64`)).status).toBe(200);
      const missing = await preview(mallory, 'fileId=900000000000&x=64&y=64');
      expect(missing.status).toBe(404);
      const tries = await Promise.all(
        [mallory, foreign, bob].flatMap((u) => [preview(u, `fileId=${photoFileId}&x=64&y=64`), preview(u, `fileId=${photoFileId}&x=-1&y=-1&forceIcon=0`)]).concat(
          [mallory, foreign].map((u) => preview(u, `fileId=${teamPhotoFileId}&x=64&y=64`)),
        ),
      );
      for (const answer of tries) {
        expect(answer.status).toBe(404);
        expect(answer.body.length).toBe(0);
        expect(answer.headers['content-type']).toBe(missing.headers['content-type']);
      }
      const noDownload = await preview(bob, `fileId=${teamPhotoFileId}&x=64&y=64`);
      expect(noDownload.status).toBe(403);
      expect(noDownload.body.length).toBe(0);
    });

    it('a path never leaves the caller’s view: another user’s names and `..` are 404; a name in a group without read answers as a missing one', async () => {
      const paths = [
        '/home/photo.png',
        `/../${alice.email}/home/photo.png`,
        `/home/../../${encodeURIComponent(alice.email)}/home/photo.png`,
        `${files(alice)}/home/photo.png`,
        `/${photo}`,
        '/shared_with_you/photo.png',
        '/favorites/photo.png',
      ];
      const answers = await Promise.all(paths.map((p) => preview(mallory, `file=${encodeURIComponent(p)}&x=64&y=64`, 'preview.png')));
      answers.forEach((answer, i) => expect(answer.status, paths[i]).toBe(404));
      // In the group without read, a name there or not is 404, as the drive is not shown to her.
      for (const name of ['team.png', 'not-there.png']) {
        const answer = await preview(mallory, `file=${encodeURIComponent(`/groups/Vault/home/${name}`)}&x=64&y=64`, 'preview.png');
        expect(answer.status, name).toBe(404);
        expect(answer.body.length).toBe(0);
      }
      expect((await preview(bob, `file=${encodeURIComponent('/groups/Vault/home/team.png')}&x=64&y=64`, 'preview.png')).status).toBe(403);
    });
  });

  describe('search', () => {
    const searchBody = (scope: string, literal: string) =>
      `<?xml version="1.0"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="${OC}"><d:basicsearch><d:select><d:prop><d:displayname/><oc:fileid/></d:prop></d:select>` +
      `<d:from><d:scope><d:href>${scope}</d:href><d:depth>infinity</d:depth></d:scope></d:from>` +
      `<d:where><d:like><d:prop><d:displayname/></d:prop><d:literal>${literal}</d:literal></d:like></d:where></d:basicsearch></d:searchrequest>`;
    const search = (as: DavUser, scope: string, literal = '%') => davAs(as, 'SEARCH', '/remote.php/dav/', { 'content-type': 'text/xml' }, searchBody(scope, literal));

    it('WebDAV SEARCH scoped to another user’s files or a group without read is refused, and the caller’s own finds none of theirs', async () => {
      const scopes = [`/files/${alice.email}`, `/files/${alice.email}/home`, `/remote.php/dav/files/${encodeURIComponent(alice.email)}/home`, `/files/${mallory.email}/../${alice.email}`, `/files/${mallory.email}/groups/Vault/home`, `/home/${secret}`];
      const answers = await Promise.all(scopes.map((s) => search(mallory, s)));
      answers.forEach((answer, i) => {
        expect(answer.status, scopes[i]).toBeGreaterThanOrEqual(400);
        expect(answer.status, scopes[i]).toBeLessThan(500);
        for (const name of ['secret.txt', 'photo.png', 'team.png', 'team.txt']) expect(answer.text, scopes[i]).not.toContain(name);
      });
      for (const u of [mallory, foreign]) {
        const own = multistatusOf(await search(u, `/files/${u.email}`, '%'));
        const text = own.map((r) => decodeURIComponent(r.href)).join('\n');
        for (const name of ['secret.txt', 'photo.png', 'team.png', 'team.txt']) expect(text).not.toContain(name);
      }
      // Bob reads the group's drive: its files, and none of alice's own.
      const bobs = multistatusOf(await search(bob, `/files/${bob.email}`, 'team%')).map((r) => decodeURIComponent(r.href));
      expect(bobs.some((h) => h.endsWith('/groups/Vault/home/team.png'))).toBe(true);
      expect(bobs.join('\n')).not.toContain('secret.txt');
    });

    it('WebDAV SEARCH by another’s file id or for favorites finds nothing of theirs', async () => {
      await f.client.setStarred(alice.session, photo, true);
      const where = (condition: string) =>
        `<?xml version="1.0"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="${OC}"><d:basicsearch><d:select><d:prop><d:displayname/><oc:fileid/></d:prop></d:select>` +
        `<d:from><d:scope><d:href>/files/{user}</d:href><d:depth>infinity</d:depth></d:scope></d:from><d:where>${condition}</d:where></d:basicsearch></d:searchrequest>`;
      const conditions = [
        ...[photoFileId, teamPhotoFileId].map((n) => `<d:eq><d:prop><oc:fileid/></d:prop><d:literal>${n}</d:literal></d:eq>`),
        '<d:eq><d:prop><oc:favorite/></d:prop><d:literal>yes</d:literal></d:eq>',
      ];
      const callers = [mallory, foreign, bob];
      const answers = await Promise.all(
        callers.flatMap((u) => conditions.map((c) => davAs(u, 'SEARCH', '/remote.php/dav/', { 'content-type': 'text/xml' }, where(c).replace('{user}', u.email)))),
      );
      answers.forEach((answer, i) => {
        const who = callers[Math.floor(i / conditions.length)]!;
        const hrefs = multistatusOf(answer).filter((r) => r.status === undefined).map((r) => decodeURIComponent(r.href));
        // Bob reads the group's drive: its file by its id is his to find (not as a favorite: the star is alice's).
        const found = hrefs.filter((h) => /photo\.png|team\.png|secret\.txt/.test(h));
        expect(found, `${who.email} ${conditions[i % conditions.length]}`).toEqual(who === bob && i % conditions.length === 1 ? [`${files(bob)}/groups/Vault/home/team.png`.replace(/%40/g, '@')] : []);
      });
      // The same search finds them for alice.
      const own = multistatusOf(await davAs(alice, 'SEARCH', '/remote.php/dav/', { 'content-type': 'text/xml' }, where(conditions[0]!).replace('{user}', alice.email)));
      expect(own.map((r) => decodeURIComponent(r.href)).some((h) => h.endsWith('/home/photo.png'))).toBe(true);
      await f.client.setStarred(alice.session, photo, false);
    });

    it('POST /api/search with another user’s or another group’s folder as scope is 404 as a missing one, in parallel; a member without read 403; no hit of theirs', async () => {
      const search = (u: DavUser, body: unknown) => apiCall(f.client, u.session, 'POST', '/api/search', body);
      const missing = await search(mallory, { scope: ['00000000-0000-4000-8000-000000000000'] });
      expect(missing.status).toBe(404);
      const aliceHome = (await topLevelRow(f.store, alice.uuid, 'home')).uuid;
      const teamDrive = (await topLevelRow(f.store, team, 'home')).uuid;
      const aliceScopes = [secret, aliceHome, `home:${alice.uuid}`];
      const teamScopes = [teamDrive, `home:${team}`];
      const [hidden, seen] = await Promise.all([
        Promise.all([...aliceScopes.map((s) => search(mallory, { scope: [s] })), ...[...aliceScopes, ...teamScopes].map((s) => search(foreign, { scope: [s] }))]),
        Promise.all(teamScopes.map((s) => search(mallory, { scope: [s, `home:${mallory.uuid}`] }))),
      ]);
      for (const answer of hidden) expect([answer.status, answer.body]).toEqual([404, missing.body]);
      // Mallory is a member of the group without read: its drive is seen, not read (access.ts).
      for (const answer of seen) expect([answer.status, answer.body]).toMatchObject([403, { code: 'forbidden', msg: 'read permission required' }]);
      for (const u of [mallory, foreign]) {
        const hits = dataOf<{ hits: Array<{ name: string }> }>(await search(u, { where: { name: '%' }, trash: true })).hits.map((h) => h.name);
        for (const name of ['secret.txt', 'photo.png', 'team.png', 'team.txt']) expect(hits).not.toContain(name);
      }
    });
  });

  describe('favorites', () => {
    const favoriteReport = `<?xml version="1.0"?><oc:filter-files xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop><d:displayname/><oc:fileid/></d:prop><oc:filter-rules><oc:favorite>1</oc:favorite></oc:filter-rules></oc:filter-files>`;
    const star = (value: string) =>
      `<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:oc="${OC}"><d:set><d:prop><oc:favorite>${value}</oc:favorite></d:prop></d:set></d:propertyupdate>`;
    const starredOf = async (u: DavUser): Promise<string[]> => (await f.client.listFolder(u.session, nodeId('favorites'))).map((e) => e.name).sort();

    it('REPORT of another user’s files is 404 and the caller’s own lists none of theirs; PROPPATCH oc:favorite stars nothing of another', async () => {
      await f.client.setStarred(alice.session, secret, true);
      const aliceStars = await starredOf(alice);
      expect(aliceStars).toEqual(['secret.txt']);
      const reports = await Promise.all([mallory, foreign].map((u) => davAs(u, 'REPORT', `${files(alice)}/`, { 'content-type': 'application/xml' }, favoriteReport)));
      for (const answer of reports) {
        expect(answer.status).toBe(404);
        expect(answer.text).not.toContain('secret.txt');
      }
      const own = multistatusOf(await davAs(mallory, 'REPORT', `${files(mallory)}/`, { 'content-type': 'application/xml' }, favoriteReport));
      expect(own.map((r) => decodeURIComponent(r.href)).join('\n')).not.toContain('secret.txt');

      const patches = await Promise.all([
        davAs(mallory, 'PROPPATCH', `${files(alice)}/home/secret.txt`, { 'content-type': 'application/xml' }, star('0')),
        davAs(foreign, 'PROPPATCH', `${files(alice)}/home/photo.png`, { 'content-type': 'application/xml' }, star('1')),
        davAs(mallory, 'PROPPATCH', `${files(mallory)}/groups/Vault/home/team.png`, { 'content-type': 'application/xml' }, star('1')),
        davAs(mallory, 'PROPPATCH', `/groups/Vault/home/team.png`, { 'content-type': 'application/xml' }, star('1')),
        davAs(mallory, 'PROPPATCH', `${files(mallory)}/home/../../${encodeURIComponent(alice.email)}/home/secret.txt`, { 'content-type': 'application/xml' }, star('0')),
      ]);
      for (const answer of patches) {
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(answer.status).toBeLessThan(500);
      }
      expect(await starredOf(alice)).toEqual(aliceStars);
      // A star of alice's on a group file is hers: no other member's report shows it.
      await f.client.setStarred(alice.session, teamPhoto, true);
      for (const u of [mallory, bob]) {
        const listed = multistatusOf(await davAs(u, 'REPORT', `${files(u)}/`, { 'content-type': 'application/xml' }, favoriteReport));
        expect(listed.map((r) => decodeURIComponent(r.href)).join('\n')).not.toMatch(/team\.png|secret\.txt/);
      }
      await f.client.setStarred(alice.session, teamPhoto, false);
      expect(await starredOf(mallory)).toEqual([]);
      expect(await starredOf(foreign)).toEqual([]);
    });
  });

  describe('bulk upload', () => {
    const md5 = (data: string): string => createHash('md5').update(data).digest('hex');
    const bulkBody = (paths: string[]): Buffer =>
      Buffer.concat([
        ...paths.map((p) => {
          const content = `planted by ${p}`;
          return Buffer.from(
            `--${BOUNDARY}\r\nContent-Type: application/octet-stream\r\nX-File-Mtime: 1700000000\r\nX-File-MD5: ${md5(content)}\r\nContent-Length: ${Buffer.byteLength(content)}\r\nX-File-Path: ${p}\r\n\r\n${content}\r\n`,
          );
        }),
        Buffer.from(`--${BOUNDARY}--\r\n`),
      ]);
    const bulk = (as: DavUser, paths: string[]) => davAs(as, 'POST', '/remote.php/dav/bulk', { 'content-type': `multipart/related; boundary="${BOUNDARY}"` }, bulkBody(paths));
    const state = async () => [await names(alice, 'home'), await names(alice, `home:${team}`), await names(mallory, 'home'), await names(bob, 'home')];

    it('refuses `..` whole (400), other users’ names and a group drive without read or write part by part, in parallel; nothing written', async () => {
      const before = await state();
      const traversal = await Promise.all(
        [
          ['/home/../../' + alice.email + '/home/planted.txt'],
          ['/../' + alice.email + '/home/planted.txt'],
          ['/home/ok.txt', '/home/./../trash/planted.txt'],
          ['/home/%2e%2e/planted.txt', '/home/ok.txt', '/home/..'],
        ].map((paths) => bulk(mallory, paths)),
      );
      for (const answer of traversal) expect(answer.status, answer.text).toBe(400);
      const elsewhere = await Promise.all([
        bulk(mallory, [`/files/${alice.email}/home/planted.txt`, `/${alice.email}/home/planted.txt`, `/remote.php/dav/files/${alice.email}/home/planted.txt`]),
        bulk(mallory, ['/groups/Vault/home/planted.txt', '/groups/Vault/home/team.txt']),
        bulk(bob, ['/groups/Vault/home/planted.txt', '/groups/Vault/home/team.txt']),
        bulk(foreign, ['/groups/Vault/home/planted.txt', `/${secret}`]),
      ]);
      // Each part is refused in its own entry (a 4xx as its message's code); bob reads the group's drive, without write.
      const entries = elsewhere.map((answer) => {
        expect(answer.status, answer.text).toBe(200);
        return JSON.parse(answer.text) as Record<string, { error: boolean; message: string }>;
      });
      for (const entry of entries.flatMap((e) => Object.entries(e))) {
        expect(entry[1].error, entry[0]).toBe(true);
        expect(entry[1].message, entry[0]).toMatch(/^4\d\d: /);
        // The store's words or the bridge's, never its plumbing (an operation name, an upstream status).
        expect(entry[1].message, entry[0]).not.toMatch(/failed:|HTTP \d{3}|\w+\.\w+ /);
      }
      expect(Object.values(entries[2]!).map((e) => e.message)).toEqual(['403: the write permission is needed here', '403: the write permission is needed here']);
      expect(await state()).toEqual(before);
      expect((await davAs(alice, 'GET', '/groups/Vault/home/team.txt')).text).toBe('team only');
    });
  });

  describe('push', () => {
    const sockets: PushClient[] = [];
    const open = async (username: string, password: string): Promise<PushClient> => {
      const socket = await connectPush(pushUrl(f.davUrl), username, password);
      sockets.push(socket);
      return socket;
    };
    const preAuth = (auth: string) => davRequest(f.davUrl, 'POST', '/index.php/apps/notify_push/pre_auth', { auth });
    afterAll(() => {
      for (const socket of sockets) socket.close();
    });

    it('a token authenticates only as its user, once however many sockets race for it; no name authenticates with another’s password', async () => {
      const token = (await preAuth(alice.auth)).text;
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      // Alice's token with Mallory's name, or Mallory's password with Alice's name: refused.
      expect((await open(mallory.email, token)).answer).toBe('err: Invalid credentials');
      const mallorysApp = dataOf<{ password: string }>(await apiCall(f.client, mallory.session, 'POST', '/api/user/app_passwords', { name: 'push', password: mallory.password }));
      expect((await open(alice.email, mallorysApp.password)).answer).toBe('err: Invalid credentials');
      expect((await open(mallory.email, mallorysApp.password)).answer).toBe('authenticated');
      const fresh = (await preAuth(alice.auth)).text;
      const raced = await Promise.all(Array.from({ length: 5 }, () => open('', fresh)));
      expect(raced.map((s) => s.answer).sort()).toEqual(['authenticated', 'err: Invalid credentials', 'err: Invalid credentials', 'err: Invalid credentials', 'err: Invalid credentials']);
      const asAlice = raced.find((s) => s.answer === 'authenticated')!;
      // The socket is Alice's: it hears her change, not Mallory's.
      const mallorys = await open('', (await preAuth(mallory.auth)).text);
      expect(mallorys.answer).toBe('authenticated');
      const [fromAlice, fromMallory] = [asAlice.messages.length, mallorys.messages.length];
      expect((await davAs(mallory, 'PUT', '/home/mallory.txt', {}, 'm')).status).toBe(201);
      expect(await mallorys.next((m) => m.startsWith('notify_file'), 5000, fromMallory)).toBe('notify_file');
      await expect(asAlice.next((m) => m.startsWith('notify_file'), 1200, fromAlice)).rejects.toThrow(/no matching push message/);
      expect((await davAs(alice, 'PUT', '/home/alice.txt', {}, 'a')).status).toBe(201);
      expect(await asAlice.next((m) => m.startsWith('notify_file'), 5000, fromAlice)).toBe('notify_file');
    });

    it('sends a listener ids only of its own drives: none of another user’s, none of a group it may not read', async () => {
      const aliceIds = new Set<number>();
      for (const path of ['/home/', '/groups/Vault/home/']) {
        const listed = multistatusOf(await davAs(alice, 'PROPFIND', path, { depth: '1', 'content-type': 'application/xml' }, FILEID_PROPFIND));
        for (const r of listed) aliceIds.add(Number(r.props.get(`{${OC}}fileid`)?.text));
      }
      const listening = await Promise.all([open(mallory.email, mallory.password), open(foreign.email, foreign.password)]);
      for (const socket of listening) {
        expect(socket.answer).toBe('authenticated');
        socket.listen();
      }
      const from = listening.map((s) => s.messages.length);
      await Promise.all([
        davAs(alice, 'PUT', '/home/push-secret.txt', {}, 'x'),
        davAs(alice, 'PUT', '/groups/Vault/home/push-team.txt', {}, 'y'),
        davAs(alice, 'MKCOL', '/groups/Vault/home/Sub/'),
      ]);
      // Mallory's own change, so a message does come: it must carry none of alice's ids.
      expect((await davAs(mallory, 'PUT', '/home/mine.txt', {}, 'z')).status).toBe(201);
      await listening[0]!.next((m) => m.startsWith('notify_file'), 5000, from[0]);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      listening.forEach((socket, i) => {
        for (const message of socket.messages.slice(from[i])) {
          if (!message.startsWith('notify_file_id ')) continue;
          const ids = JSON.parse(message.slice('notify_file_id '.length)) as number[];
          for (const id of ids) expect(aliceIds.has(id), `${message} to socket ${i}`).toBe(false);
        }
      });
    });
  });
});
