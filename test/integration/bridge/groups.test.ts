/**
 * Group drives through the bridge (issue 7): `/groups/` lists the caller's groups (unique,
 * path-safe names), `/groups/<name>/` their top-level folders, and a member's node permissions
 * become DAV statuses: 403 for PUT, MKCOL, MOVE or COPY into, PROPPATCH and LOCK without `write`,
 * DELETE without `delete`, GET without `download`; reported as RFC 3744
 * current-user-privilege-set and Windows' read-only attribute. Locks on group files hold for
 * every member; quota is the group's; a group WebDrive endpoint serves the group's home to the
 * members allowed to see it. Non-members see no trace. Stored state is checked through the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, EXCLUSIVE_LOCKINFO, multistatusOf } from '../../helpers/dav-requests.js';
import { call, dataOf, groupAdmin, readGroupUsage, type GroupAdmin } from '../../helpers/groups.js';
import { davProp, responseFor } from '../../helpers/multistatus.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const TEAM = 'Design Team';
const TEAM_PATH = `/groups/${encodeURIComponent(TEAM)}`;
const ALL = ['read', 'write', 'delete', 'download'];
const PROPPATCH_BODY =
  '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:tag>x</Z:tag></D:prop></D:set></D:propertyupdate>';
const PRIVILEGES_BODY = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:current-user-privilege-set/></D:prop></D:propfind>';

describe('group drives through the bridge', () => {
  let f: BridgeFixture;
  let ga: GroupAdmin;
  let team: string;
  let writer: DavUser;
  let other: DavUser;
  let reader: DavUser;
  let noDownload: DavUser;
  let noDelete: DavUser;
  let outsider: DavUser;
  const { davAs, storeEntries } = bridgeRequests(() => f);
  const dav = (as: DavUser, method: string, path: string, headers: Record<string, string> = {}, body?: string) => davAs(as, method, path, headers, body);

  /** The privileges current-user-privilege-set reports for `as` on `path`. */
  async function privileges(as: DavUser, path: string): Promise<string[]> {
    const [response] = multistatusOf(await dav(as, 'PROPFIND', path, { depth: '0' }, PRIVILEGES_BODY));
    if (!response) throw new Error('no response');
    return davProp(response, 'current-user-privilege-set').node.children.map((p) => p.children[0]?.local ?? '').sort();
  }

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 200 } });
    ga = groupAdmin(f.client, f.admin);
    team = await ga.group(TEAM, { quotaBytes: 1_000_000 });
    [writer, other, reader, noDownload, noDelete, outsider] = await Promise.all([
      f.newDavUser(),
      f.newDavUser(),
      f.newDavUser(),
      f.newDavUser(),
      f.newDavUser(),
      f.newDavUser(),
    ]);
    await ga.member(team, writer.uuid, { node_permissions: ALL });
    await ga.member(team, other.uuid, { node_permissions: ALL });
    await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
    await ga.member(team, noDownload.uuid, { node_permissions: ['read', 'write', 'delete'] });
    await ga.member(team, noDelete.uuid, { node_permissions: ['read', 'write', 'download'] });
    expect((await dav(writer, 'PUT', `${TEAM_PATH}/home/plan.txt`, {}, 'the plan')).status).toBe(201);
    expect((await dav(writer, 'MKCOL', `${TEAM_PATH}/home/docs/`)).status).toBe(201);
  });
  afterAll(async () => {
    await f.close();
  });

  it('shows ownCloud permission letters: M in a group drive, only what the member may do, and no R without a share permission', async () => {
    const body = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:oc="http://owncloud.org/ns"><D:prop><oc:permissions/></D:prop></D:propfind>';
    const letters = async (as: DavUser, path: string) => /<oc:permissions>([A-Z]*)<\/oc:permissions>/.exec((await dav(as, 'PROPFIND', path, { depth: '0' }, body)).text)?.[1];
    expect(await letters(writer, `${TEAM_PATH}/home/plan.txt`)).toBe('MDNVW');
    expect(await letters(writer, `${TEAM_PATH}/home/docs/`)).toBe('MDNVCK');
    expect(await letters(reader, `${TEAM_PATH}/home/plan.txt`)).toBe('M');
    expect(await letters(noDelete, `${TEAM_PATH}/home/plan.txt`)).toBe('MNVW');
  });

  it('lets a person added to a group write into its drive at once, though their root and /groups/ were listed just before', async () => {
    const joiner = await f.newDavUser();
    const late = await ga.group('Late Group');
    expect((await dav(joiner, 'PROPFIND', '/', { depth: '1' })).status).toBe(207);
    expect((await dav(joiner, 'PROPFIND', '/groups/', { depth: '1' })).status).toBe(207);
    await ga.member(late, joiner.uuid, { node_permissions: ALL });
    expect((await dav(joiner, 'PUT', '/groups/Late%20Group/home/first.txt', {}, 'at once')).status).toBe(201);
    expect((await storeEntries(`home:${late}`, joiner)).map((e) => e.name)).toEqual(['first.txt']);
    // A name that is no group: 404, and another miss within the second costs no listing.
    expect((await dav(joiner, 'PROPFIND', '/groups/No%20Such%20Group/', { depth: '0' })).status).toBe(404);
  });

  it('lists the caller’s groups at /groups/ and the group’s top-level folders below it', async () => {
    const groups = multistatusOf(await dav(reader, 'PROPFIND', '/groups/', { depth: '1' }));
    expect(groups.map((r) => r.href)).toEqual(['/groups/', `${TEAM_PATH}/`]);
    const tops = multistatusOf(await dav(reader, 'PROPFIND', `${TEAM_PATH}/`, { depth: '1' }));
    expect(tops.map((r) => r.href).sort()).toEqual(
      [`${TEAM_PATH}/`, ...['home', 'incoming', 'trash', 'public_shares', 'private_shares', 'favorites', 'shared_with_you'].map((t) => `${TEAM_PATH}/${t}/`)].sort(),
    );
    const home = multistatusOf(await dav(reader, 'PROPFIND', `${TEAM_PATH}/home/`, { depth: '1' }));
    expect(home.map((r) => r.href).sort()).toEqual([`${TEAM_PATH}/home/`, `${TEAM_PATH}/home/docs/`, `${TEAM_PATH}/home/plan.txt`].sort());
  });

  it('stores what a member writes as the group’s, counted against the group’s quota, which PROPFIND reports', async () => {
    const before = await readGroupUsage(f.store, team);
    expect((await dav(other, 'PUT', `${TEAM_PATH}/home/docs/notes.txt`, {}, '12345')).status).toBe(201);
    expect((await readGroupUsage(f.store, team))?.disk_used).toBe((before?.disk_used ?? 0) + 5);
    expect((await f.client.currentUser(other.session)).diskUsedBytes).toBe(0);
    const [root] = multistatusOf(
      await dav(reader, 'PROPFIND', `${TEAM_PATH}/home/`, { depth: '0' }, '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:quota-used-bytes/><D:quota-available-bytes/></D:prop></D:propfind>'),
    );
    const used = (await readGroupUsage(f.store, team))?.disk_used ?? 0;
    expect(davProp(root!, 'quota-used-bytes').text).toBe(String(used));
    expect(davProp(root!, 'quota-available-bytes').text).toBe(String(1_000_000 - used));
  });

  it('answers 403 to every write of a member without write, and keeps the group’s files as they were', async () => {
    const refused: Array<[string, string, Record<string, string>, string?]> = [
      ['PUT', `${TEAM_PATH}/home/new.txt`, {}, 'x'],
      ['PUT', `${TEAM_PATH}/home/plan.txt`, {}, 'overwrite'],
      ['MKCOL', `${TEAM_PATH}/home/newdir/`, {}],
      ['PROPPATCH', `${TEAM_PATH}/home/plan.txt`, { 'content-type': 'application/xml' }, PROPPATCH_BODY],
      ['LOCK', `${TEAM_PATH}/home/plan.txt`, { 'content-type': 'application/xml' }, EXCLUSIVE_LOCKINFO],
      ['LOCK', `${TEAM_PATH}/home/unmapped.txt`, { 'content-type': 'application/xml' }, EXCLUSIVE_LOCKINFO],
      ['MOVE', `${TEAM_PATH}/home/plan.txt`, { destination: `${TEAM_PATH}/home/docs/plan.txt` }],
      ['COPY', `${TEAM_PATH}/home/plan.txt`, { destination: `${TEAM_PATH}/home/docs/copy.txt` }],
      ['COPY', '/home/', { destination: `${TEAM_PATH}/home/mine/` }],
      ['DELETE', `${TEAM_PATH}/home/plan.txt`, {}],
    ];
    expect((await dav(reader, 'PUT', '/home/mine.txt', {}, 'mine')).status).toBe(201);
    for (const [method, path, headers, body] of refused) {
      const res = await dav(reader, method, path, headers, body);
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    expect((await dav(reader, 'GET', `${TEAM_PATH}/home/plan.txt`)).text).toBe('the plan');
    const names = (await f.client.listFolder(writer.session, `home:${team}` as never)).map((e) => e.name).sort();
    expect(names).toEqual(['docs', 'plan.txt']);
  });

  it('lets a reader copy out of the group into their own home', async () => {
    expect((await dav(reader, 'COPY', `${TEAM_PATH}/home/plan.txt`, { destination: '/home/plan copy.txt' })).status).toBe(201);
    expect((await dav(reader, 'GET', '/home/plan copy.txt')).text).toBe('the plan');
  });

  it('answers 403 to GET and HEAD without download, while PROPFIND still lists', async () => {
    expect((await dav(noDownload, 'GET', `${TEAM_PATH}/home/plan.txt`)).status).toBe(403);
    expect((await dav(noDownload, 'HEAD', `${TEAM_PATH}/home/plan.txt`)).status).toBe(403);
    expect((await dav(noDownload, 'PROPFIND', `${TEAM_PATH}/home/plan.txt`, { depth: '0' })).status).toBe(207);
  });

  it('answers 403 to DELETE without delete, also when a MOVE would take the file out of the group', async () => {
    expect((await dav(noDelete, 'DELETE', `${TEAM_PATH}/home/plan.txt`)).status).toBe(403);
    expect((await dav(noDelete, 'MOVE', `${TEAM_PATH}/home/plan.txt`, { destination: '/home/taken.txt' })).status).toBe(403);
    expect((await dav(noDelete, 'PUT', `${TEAM_PATH}/home/docs/by-no-delete.txt`, {}, 'ok')).status).toBe(201);
  });

  it('reports each member’s privileges (RFC 3744) and marks a reader’s files read-only for Windows', async () => {
    expect(await privileges(writer, `${TEAM_PATH}/home/plan.txt`)).toEqual(['all', 'bind', 'read', 'read-current-user-privilege-set', 'unbind', 'write', 'write-content', 'write-properties']);
    expect(await privileges(reader, `${TEAM_PATH}/home/plan.txt`)).toEqual(['read', 'read-current-user-privilege-set']);
    expect(await privileges(noDelete, `${TEAM_PATH}/home/`)).toEqual(['bind', 'read', 'read-current-user-privilege-set', 'write-content', 'write-properties']);
    const listing = multistatusOf(await dav(reader, 'PROPFIND', `${TEAM_PATH}/home/`, { depth: '1' }));
    const attributes = (href: string) => responseFor(listing, href).props.get('{urn:schemas-microsoft-com:}Win32FileAttributes')?.text;
    expect(attributes(`${TEAM_PATH}/home/plan.txt`)).toBe('00000021');
    expect(attributes(`${TEAM_PATH}/home/docs/`)).toBe('00000011');
    const writers = multistatusOf(await dav(writer, 'PROPFIND', `${TEAM_PATH}/home/`, { depth: '1' }));
    expect(responseFor(writers, `${TEAM_PATH}/home/plan.txt`).props.has('{urn:schemas-microsoft-com:}Win32FileAttributes')).toBe(false);
  });

  it('shares locks between members: one writer’s exclusive lock makes the other’s PUT answer 423', async () => {
    const locked = await dav(writer, 'LOCK', `${TEAM_PATH}/home/plan.txt`, { 'content-type': 'application/xml', timeout: 'Second-60' }, EXCLUSIVE_LOCKINFO);
    expect(locked.status).toBe(200);
    const token = String(locked.headers['lock-token']);
    expect((await dav(other, 'PUT', `${TEAM_PATH}/home/plan.txt`, {}, 'other')).status).toBe(423);
    // A token counts only for the member who took the lock.
    expect((await dav(other, 'PUT', `${TEAM_PATH}/home/plan.txt`, { if: `(${token})` }, 'other')).status).toBe(423);
    expect((await dav(writer, 'PUT', `${TEAM_PATH}/home/plan.txt`, { if: `(${token})` }, 'the plan v2')).status).toBe(204);
    expect((await dav(writer, 'UNLOCK', `${TEAM_PATH}/home/plan.txt`, { 'lock-token': token })).status).toBe(204);
    expect((await dav(other, 'GET', `${TEAM_PATH}/home/plan.txt`)).text).toBe('the plan v2');
  });

  it('moves a member’s file from their home into the group, and the usage moves with it', async () => {
    expect((await dav(other, 'PUT', '/home/moving.txt', {}, 'abcdefghij')).status).toBe(201);
    const before = (await readGroupUsage(f.store, team))?.disk_used ?? 0;
    expect((await dav(other, 'MOVE', '/home/moving.txt', { destination: `${TEAM_PATH}/home/moving.txt` })).status).toBe(201);
    expect((await readGroupUsage(f.store, team))?.disk_used).toBe(before + 10);
    expect((await f.client.currentUser(other.session)).diskUsedBytes).toBe(0);
  });

  it('shows a non-member no trace of the group', async () => {
    const groups = multistatusOf(await dav(outsider, 'PROPFIND', '/groups/', { depth: '1' }));
    expect(groups.map((r) => r.href)).toEqual(['/groups/']);
    for (const path of [`${TEAM_PATH}/`, `${TEAM_PATH}/home/`, `${TEAM_PATH}/home/plan.txt`, `/groups/${team}/home/`, `/home:${team}/plan.txt`]) {
      const res = await dav(outsider, 'PROPFIND', path, { depth: '0' });
      expect(res.status, path).toBe(404);
      expect(res.text).not.toContain(TEAM);
    }
    expect((await dav(outsider, 'PUT', `${TEAM_PATH}/home/evil.txt`, {}, 'evil')).status).toBe(409);
    expect((await f.client.listFolder(writer.session, `home:${team}` as never)).map((e) => e.name)).not.toContain('evil.txt');
  });

  it('gives groups whose names collide as paths distinct, stable, path-safe names', async () => {
    const slash = await ga.group('R&D / Paris');
    const under = await ga.group('R&D _ Paris');
    await ga.member(slash, writer.uuid, { node_permissions: ALL });
    await ga.member(under, writer.uuid, { node_permissions: ALL });
    await new Promise((resolve) => setTimeout(resolve, 250));
    const hrefs = multistatusOf(await dav(writer, 'PROPFIND', '/groups/', { depth: '1' })).map((r) => decodeURIComponent(r.href));
    // The group with the smaller UUID keeps the plain name; the other gets its UUID's first 8 characters.
    const later = [slash, under].sort()[1] as string;
    expect(hrefs).toContain('/groups/R&D _ Paris/');
    expect(hrefs).toContain(`/groups/R&D _ Paris (${later.replace(/-/g, '').slice(0, 8)})/`);
    for (const href of hrefs.filter((h) => h.includes('Paris'))) expect((await dav(writer, 'PUT', `${encodeURI(href)}home/x.txt`, {}, 'x')).status).toBe(201);
  });

  it('serves the group’s WebDrive endpoint to the members allowed to see it, and 404 to the others', async () => {
    await dataOf(call(f.client, f.admin, 'PUT', `/api/admin/groups/${team}/users/${writer.uuid}`, { is_admin: true, node_permissions: ALL }));
    const adminSession = await f.client.login(writer.email, writer.password);
    await dataOf(call(f.client, adminSession, 'POST', `/api/groups/${team}/webdrive`, { endpoint: 'design', show_url_to_group_members: true }));
    await new Promise((resolve) => setTimeout(resolve, 250));
    const listed = multistatusOf(await dav(reader, 'PROPFIND', '/webdrive/design/', { depth: '1' })).map((r) => r.href);
    expect(listed).toContain('/webdrive/design/plan.txt');
    expect((await dav(reader, 'PUT', '/webdrive/design/x.txt', {}, 'x')).status).toBe(403);
    expect((await dav(outsider, 'PROPFIND', '/webdrive/design/', { depth: '0' })).status).toBe(404);

    await dataOf(call(f.client, adminSession, 'POST', `/api/groups/${team}/webdrive`, { endpoint: 'design', show_url_to_group_members: false }));
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await dav(reader, 'PROPFIND', '/webdrive/design/', { depth: '0' })).status).toBe(404);
    expect((await dav(writer, 'PROPFIND', '/webdrive/design/', { depth: '0' })).status).toBe(207);
  });

  it('stops serving a member the administrator deactivates (401), as the store ends their sessions', async () => {
    expect((await dav(other, 'PROPFIND', `${TEAM_PATH}/home/`, { depth: '1' })).status).toBe(207);
    await f.client.updateUser(f.admin, other.uuid, { isActive: false });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await dav(other, 'PROPFIND', `${TEAM_PATH}/home/`, { depth: '1' })).status).toBe(401);
    expect((await dav(other, 'GET', `${TEAM_PATH}/home/plan.txt`)).status).toBe(401);
  });
});
