/**
 * Favorites from the apps (issue 32, item 6): `oc:favorite` is the store's star. PROPPATCH with
 * the Android library's body (ToggleFavoriteRemoteOperation: a set of `1`, a remove to take it
 * off) stars the node for the caller: the store's `favorites` listing (what the web app's
 * Favorites page reads) holds it, PROPFIND shows `1`. The favorites REPORT with the body the
 * Nextcloud web app sends (@nextcloud/files getFavoritesReport) and the developer manual's
 * bare one answers the starred nodes where the client's view shows them. A node that cannot be
 * starred answers 403 in its propstat, nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/index.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { parseMultistatus, responseFor } from '../../helpers/multistatus.js';
import { groupAdmin } from '../../helpers/groups.js';
import { createFolder, uploadFile } from '../../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const OC = 'http://owncloud.org/ns';

/** ToggleFavoriteRemoteOperation's PROPPATCH as jackrabbit writes it. */
const favoriteBody = (on: boolean): string =>
  on
    ? '<?xml version="1.0" encoding="UTF-8" standalone="no"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><oc:favorite xmlns:oc="http://owncloud.org/ns">1</oc:favorite></D:prop></D:set></D:propertyupdate>'
    : '<?xml version="1.0" encoding="UTF-8" standalone="no"?><D:propertyupdate xmlns:D="DAV:"><D:remove><D:prop><oc:favorite xmlns:oc="http://owncloud.org/ns"/></D:prop></D:remove></D:propertyupdate>';

/** @nextcloud/files getFavoritesReport() (the web app's Favorites view), with a few of its properties. */
const WEB_REPORT = `<?xml version="1.0"?>
<oc:filter-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
  <d:prop><d:getetag/><d:getlastmodified/><d:resourcetype/><oc:fileid/><oc:favorite/><oc:permissions/><d:getcontentlength/></d:prop>
  <oc:filter-rules><oc:favorite>1</oc:favorite></oc:filter-rules>
</oc:filter-files>`;

/** The Nextcloud developer manual's (client_apis/WebDAV/basic.rst "Listing favorites"): no d:prop. */
const MANUAL_REPORT =
  '<?xml version="1.0"?><oc:filter-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><oc:filter-rules><oc:favorite>1</oc:favorite></oc:filter-rules></oc:filter-files>';

const PROPFIND_FAVORITE = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:favorite/></d:prop></d:propfind>';

describe('favorites through the Nextcloud door', () => {
  let f: BridgeFixture;
  let ada: DavUser;
  let files: string;
  let reports: NodeId;

  const dav = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    davRequest(f.davUrl, method, path, { auth: ada.auth, headers: { 'content-type': 'application/xml; charset=utf-8', ...headers }, body });
  const starredNames = async (): Promise<string[]> => (await f.client.listFolder(ada.session, 'favorites' as NodeId)).map((e) => e.name).sort();
  const favoriteOf = (xml: string, href: string): string | undefined => responseFor(parseMultistatus(xml), href).props.get(`{${OC}}favorite`)?.text;

  beforeAll(async () => {
    f = await bridgeFixture();
    ada = await f.newDavUser();
    files = `/remote.php/dav/files/${encodeURIComponent(ada.email)}`;
    reports = await createFolder(f.client, ada.session, 'home', 'Reports');
    await uploadFile(f.client, ada.session, reports, 'q3.txt', 'third quarter');
    await uploadFile(f.client, ada.session, reports, 'q4.txt', 'fourth quarter');
  });
  afterAll(async () => {
    await f.close();
  });

  it('stars a file by PROPPATCH of oc:favorite: 200 in its propstat, starred in the store and in PROPFIND', async () => {
    const set = await dav('PROPPATCH', `${files}/home/Reports/q3.txt`, favoriteBody(true));
    expect(set.status).toBe(207);
    expect(responseFor(parseMultistatus(set.text), `${files}/home/Reports/q3.txt`).props.get(`{${OC}}favorite`)?.status).toBe(200);
    // What the web app's Favorites page lists (GET /api/nodes/favorites/dirlist), with is_starred.
    expect(await starredNames()).toEqual(['q3.txt']);
    const listed = await f.client.listFolder(ada.session, reports);
    expect(listed.map((e) => [e.name, e.isStarred])).toEqual([
      ['q3.txt', true],
      ['q4.txt', false],
    ]);
    const found = await dav('PROPFIND', `${files}/home/Reports/`, PROPFIND_FAVORITE, { depth: '1' });
    expect(found.status).toBe(207);
    expect(favoriteOf(found.text, `${files}/home/Reports/q3.txt`)).toBe('1');
    expect(favoriteOf(found.text, `${files}/home/Reports/q4.txt`)).toBe('0');
    // Never kept as a dead property: allprop does not show it.
    expect((await dav('PROPFIND', `${files}/home/Reports/q3.txt`, undefined, { depth: '0' })).text).not.toContain('favorite');
  });

  it('answers the favorites REPORT with the web app body and the manual one: the starred nodes in the client view', async () => {
    const folderStar = await dav('PROPPATCH', `${files}/home/Reports/`, favoriteBody(true));
    expect(folderStar.status).toBe(207);
    const web = await dav('REPORT', `${files}/`, WEB_REPORT, { depth: '0' });
    expect(web.status).toBe(207);
    const responses = parseMultistatus(web.text);
    expect(responses.map((r) => r.href).sort()).toEqual([`${files}/home/Reports/`, `${files}/home/Reports/q3.txt`]);
    const file = responseFor(responses, `${files}/home/Reports/q3.txt`);
    expect(file.props.get(`{${OC}}favorite`)?.text).toBe('1');
    expect(file.props.get('{DAV:}getcontentlength')?.text).toBe('13');
    expect(file.props.get(`{${OC}}fileid`)?.text).toMatch(/^\d+$/);
    expect(file.props.get(`{${OC}}permissions`)?.text).toContain('W');
    // Scoped to the folder asked: below home/Reports only the file.
    const scoped = await dav('REPORT', `${files}/home/Reports/`, MANUAL_REPORT);
    expect(scoped.status).toBe(207);
    expect(parseMultistatus(scoped.text).map((r) => r.href)).toEqual([`${files}/home/Reports/q3.txt`]);
    // Another report, or another rule, is not served.
    const tags = await dav('REPORT', `${files}/`, MANUAL_REPORT.replace('<oc:favorite>1</oc:favorite>', '<oc:systemtag>4</oc:systemtag>'));
    expect(tags.status).toBe(403);
    // No body, or a report of another kind (RFC 3253's version-tree): 403; anonymous: 401.
    expect((await dav('REPORT', `${files}/home/Reports/q3.txt`)).status).toBe(403);
    expect((await dav('REPORT', `${files}/`, '<?xml version="1.0"?><D:version-tree xmlns:D="DAV:"/>')).status).toBe(403);
    expect((await davRequest(f.davUrl, 'REPORT', `${files}/`, { body: MANUAL_REPORT })).status).toBe(401);
    expect((await dav('PROPPATCH', `${files}/home/Reports/`, favoriteBody(false))).status).toBe(207);
  });

  it("lists a star on a group drive's file in the REPORT under groups/<name>/home, read at once after the PROPPATCH", async () => {
    const ga = groupAdmin(f.client, f.admin);
    const name = `Crew ${Date.now()}`;
    const team = await ga.group(name, { quotaBytes: 1_000_000 });
    await ga.member(team, ada.uuid, { node_permissions: ['read', 'download'] });
    const writer = await f.newDavUser();
    await ga.member(team, writer.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await uploadFile(f.client, writer.session, `home:${team}`, 'roster.txt', 'names');
    const path = `${files}/groups/${encodeURIComponent(name)}/home/roster.txt`;
    // Read before: the REPORT's listings are cached, the star must show at once all the same.
    expect(parseMultistatus((await dav('REPORT', `${files}/`, MANUAL_REPORT)).text).map((r) => r.href)).not.toContain(path);
    // A read-only member may star: a star needs only read.
    const set = await dav('PROPPATCH', path, favoriteBody(true));
    expect(responseFor(parseMultistatus(set.text), path).props.get(`{${OC}}favorite`)?.status).toBe(200);
    expect(parseMultistatus((await dav('REPORT', `${files}/`, MANUAL_REPORT)).text).map((r) => r.href)).toContain(path);
    expect((await dav('PROPPATCH', path, favoriteBody(false))).status).toBe(207);
    expect(parseMultistatus((await dav('REPORT', `${files}/`, MANUAL_REPORT)).text).map((r) => r.href)).not.toContain(path);
  });

  it('takes the star off with the remove the Android library sends', async () => {
    const removed = await dav('PROPPATCH', `${files}/home/Reports/q3.txt`, favoriteBody(false));
    expect(removed.status).toBe(207);
    expect(responseFor(parseMultistatus(removed.text), `${files}/home/Reports/q3.txt`).props.get(`{${OC}}favorite`)?.status).toBe(200);
    expect(await starredNames()).toEqual([]);
    const report = await dav('REPORT', `${files}/`, MANUAL_REPORT);
    expect(parseMultistatus(report.text)).toEqual([]);
  });

  it('refuses a star on a drive itself with 403 in the propstat and 424 for the rest: nothing changed', async () => {
    const body =
      '<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:z="urn:z"><d:set><d:prop><oc:favorite>1</oc:favorite><z:note>x</z:note></d:prop></d:set></d:propertyupdate>';
    const refused = await dav('PROPPATCH', `${files}/home/`, body);
    expect(refused.status).toBe(207);
    const response = responseFor(parseMultistatus(refused.text), `${files}/home/`);
    expect(response.props.get(`{${OC}}favorite`)?.status).toBe(403);
    expect(response.props.get('{urn:z}note')?.status).toBe(424);
    expect(await starredNames()).toEqual([]);
    // A value that is no favorite state: 409, nothing starred.
    const odd = await dav('PROPPATCH', `${files}/home/Reports/q4.txt`, favoriteBody(true).replace('>1<', '>maybe<'));
    expect(responseFor(parseMultistatus(odd.text), `${files}/home/Reports/q4.txt`).props.get(`{${OC}}favorite`)?.status).toBe(409);
    expect(await starredNames()).toEqual([]);
  });
});
