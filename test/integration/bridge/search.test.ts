/**
 * SEARCH (RFC 5323) in Nextcloud's dialect (verbs/search.ts over the store's search extension):
 * the `webdav` npm client's own search() call, and the request bodies the Nextcloud mobile apps
 * build, replayed as their source writes them:
 * - android-library, library/src/main/java/com/owncloud/android/lib/resources/files/NcSearchMethod.java
 *   createQuery (lines 99-452): FILE_SEARCH (`d:like` on d:displayname, `%text%`, line 287),
 *   FAVORITE_SEARCH (`d:eq` on oc:favorite, "yes", line 103), PHOTO_SEARCH (`d:like` on
 *   d:getcontenttype, ordered by d:getlastmodified descending, lines 331-342), the root's
 *   `xmlns:oc="http://nextcloud.com/ns"` (line 345), scope `/files/<user>` depth infinity
 *   (lines 223-224), `d:limit/d:nresults` (lines 443-449); sent to the DAV root (SearchRemoteOperation.kt line 52).
 * - NextcloudKit, Sources/NextcloudKit/Models/NKDataFileXML.swift getRequestBodySearchFileName
 *   (line 131: `d:like` on d:displayname in a scope href and depth) and getRequestBodySearchMedia
 *   (line 187: image/% or video/% and a date window, two orders, nresults).
 * Results never hold another user's files, a group's the caller is not in, or trashed files.
 */
import { createClient, type FileStat } from 'webdav';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { nodeId } from '../../../src/store-client/contract.js';

const PROPS = '<d:prop><d:displayname/><d:getcontenttype/><d:getcontentlength/><d:getlastmodified/><d:resourcetype/><oc:fileid/><oc:size/></d:prop>';

/** A Nextcloud-style body (what the webdav client's users write for Nextcloud: its README's form). */
function nextcloudBody(scope: string, where: string, extra = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
  <d:basicsearch>
    <d:select>${PROPS}</d:select>
    <d:from><d:scope><d:href>${scope}</d:href><d:depth>infinity</d:depth></d:scope></d:from>
    <d:where>${where}</d:where>
    ${extra}
  </d:basicsearch>
</d:searchrequest>`;
}

/** NcSearchMethod.createQuery's document for one search type (the select trimmed to what this test reads). */
function androidBody(user: string, type: 'FILE_SEARCH' | 'FAVORITE_SEARCH' | 'PHOTO_SEARCH', text: string, limit = 0): string {
  const where =
    type === 'FILE_SEARCH'
      ? `<d:like><d:prop><d:displayname/></d:prop><d:literal>%${text}%</d:literal></d:like>`
      : type === 'FAVORITE_SEARCH'
        ? '<d:eq><d:prop><oc:favorite/></d:prop><d:literal>yes</d:literal></d:eq>'
        : `<d:like><d:prop><d:getcontenttype/></d:prop><d:literal>${text}</d:literal></d:like>`;
  const order =
    type === 'PHOTO_SEARCH' ? '<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby>' : '<d:orderby/>';
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://nextcloud.com/ns"><d:basicsearch>' +
    '<d:select><d:prop><d:displayname/><d:getcontenttype/><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getetag/><oc:id/><oc:favorite/><oc:permissions/></d:prop></d:select>' +
    `<d:from><d:scope><d:href>/files/${user}</d:href><d:depth>infinity</d:depth></d:scope></d:from>` +
    `<d:where>${where}</d:where>${order}` +
    (limit > 0 ? `<d:limit><d:nresults>${limit}</d:nresults></d:limit>` : '') +
    '</d:basicsearch></d:searchrequest>'
  );
}

describe('SEARCH in Nextcloud’s dialect', () => {
  let f: BridgeFixture;
  let ada: DavUser;
  let bob: DavUser;
  const startedMs = Date.now() - 1000;
  const { davAs } = bridgeRequests(() => f);
  const filesOf = (u: DavUser): string => `/remote.php/dav/files/${encodeURIComponent(u.email)}`;
  const search = (as: DavUser, body: string, path = '/remote.php/dav/') => davAs(as, 'SEARCH', path, { 'content-type': 'text/xml' }, body);
  const hrefsOf = (answer: Awaited<ReturnType<typeof search>>): string[] =>
    multistatusOf(answer)
      .filter((r) => r.status === undefined)
      .map((r) => decodeURIComponent(r.href));
  const put = async (as: DavUser, path: string, body: string | Buffer): Promise<void> => {
    const res = await davAs(as, 'PUT', `${filesOf(as)}${path}`, {}, body);
    expect([201, 204]).toContain(res.status);
  };

  beforeAll(async () => {
    f = await bridgeFixture();
    [ada, bob] = await Promise.all([f.newDavUser(), f.newDavUser()]);
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group('Search Team');
    const other = await ga.group('Other Team');
    await ga.member(team, ada.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(other, bob.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    expect((await davAs(ada, 'MKCOL', `${filesOf(ada)}/home/reports/`)).status).toBe(201);
    expect((await davAs(ada, 'MKCOL', `${filesOf(ada)}/home/Photos/`)).status).toBe(201);
    await put(ada, '/home/reports/Quarterly-Report.pdf', Buffer.alloc(3000, 1));
    await put(ada, '/home/reports/notes.txt', 'notes');
    await put(ada, '/home/draft_report.txt', 'draft');
    await put(ada, '/home/Photos/holiday.png', Buffer.alloc(5000, 2));
    await put(ada, '/home/photo1.jpg', Buffer.alloc(4000, 3));
    await put(ada, '/home/old-report.txt', 'old');
    expect((await davAs(ada, 'DELETE', `${filesOf(ada)}/home/old-report.txt`)).status).toBe(204);
    await put(ada, '/groups/Search Team/home/team-report.txt', 'team');
    await put(bob, '/home/bob-report.txt', 'bob');
    await put(bob, '/groups/Other Team/home/other-report.txt', 'other');
    const photo = (await f.client.listFolder(ada.session, nodeId('home'))).find((e) => e.name === 'photo1.jpg');
    await f.client.setStarred(ada.session, photo!.id, true);
  });
  afterAll(async () => {
    await f?.close();
  });

  it('advertises SEARCH: OPTIONS on the DAV root and on a drive say DASL <DAV:basicsearch> and list SEARCH in Allow', async () => {
    for (const path of ['/remote.php/dav/', `${filesOf(ada)}/home/`]) {
      const res = await davAs(ada, 'OPTIONS', path);
      expect(res.status).toBe(200);
      expect(res.headers.dasl).toBe('<DAV:basicsearch>');
      expect(String(res.headers.allow)).toContain('SEARCH');
    }
  });

  it("answers the webdav client's search() at the DAV root with the caller's own and group drives' hits only, none trashed", async () => {
    const client = createClient(`${f.davUrl}/remote.php/dav`, { username: ada.email, password: ada.password });
    const result = (await client.search('/', { data: nextcloudBody(`/files/${ada.email}`, '<d:like><d:prop><d:displayname/></d:prop><d:literal>%REPORT%</d:literal></d:like>') })) as {
      truncated: boolean;
      results: FileStat[];
    };
    expect(result.truncated).toBe(false);
    const names = result.results.map((r) => r.filename).sort();
    const base = `/remote.php/dav/files/${ada.email}`;
    // The folder `reports` matches too; `old-report.txt` lies in the trash, bob's and Other Team's are not ada's.
    expect(names).toEqual([`${base}/groups/Search Team/home/team-report.txt`, `${base}/home/draft_report.txt`, `${base}/home/reports/`, `${base}/home/reports/Quarterly-Report.pdf`].sort());
    const pdf = result.results.find((r) => r.basename === 'Quarterly-Report.pdf');
    expect(pdf).toMatchObject({ type: 'file', size: 3000, mime: 'application/pdf' });
  });

  it("answers the webdav client's search() on a drive URL, scoped to a folder by its path there", async () => {
    const client = createClient(`${f.davUrl}${filesOf(ada)}`, { username: ada.email, password: ada.password });
    const result = (await client.search('/home', {
      data: nextcloudBody(`${filesOf(ada)}/home/reports`, '<d:like><d:prop><d:displayname/></d:prop><d:literal>%</d:literal></d:like>'),
    })) as { results: FileStat[] };
    expect(result.results.map((r) => r.basename).sort()).toEqual(['Quarterly-Report.pdf', 'notes.txt']);
  });

  it("replays the Android app's file search (NcSearchMethod FILE_SEARCH): a substring of the name, case-insensitive, with oc:id and oc:favorite", async () => {
    const answer = await search(ada, androidBody(ada.email, 'FILE_SEARCH', 'Photo'));
    expect(answer.status).toBe(207);
    const responses = multistatusOf(answer);
    expect(responses.map((r) => decodeURIComponent(r.href)).sort()).toEqual([`/remote.php/dav/files/${ada.email}/home/Photos/`, `/remote.php/dav/files/${ada.email}/home/photo1.jpg`]);
    const photo = responses.find((r) => r.href.endsWith('photo1.jpg'))!;
    expect(photo.props.get('{http://nextcloud.com/ns}favorite')?.status ?? photo.props.get('{http://owncloud.org/ns}favorite')?.status).toBeDefined();
    expect(photo.props.get('{DAV:}getcontenttype')?.text).toBe('image/jpeg');
  });

  it("replays the Android app's favorites search (FAVORITE_SEARCH, oc:favorite eq yes): the caller's starred nodes", async () => {
    const answer = await search(ada, androidBody(ada.email, 'FAVORITE_SEARCH', ''));
    expect(hrefsOf(answer)).toEqual([`/remote.php/dav/files/${ada.email}/home/photo1.jpg`]);
    expect(hrefsOf(await search(bob, androidBody(bob.email, 'FAVORITE_SEARCH', '')))).toEqual([]);
  });

  it("replays the Android app's photo search (PHOTO_SEARCH, getcontenttype like image/%, newest first) with its nresults", async () => {
    const answer = await search(ada, androidBody(ada.email, 'PHOTO_SEARCH', 'image/%', 10));
    expect(hrefsOf(answer).map((h) => h.split('/').pop())).toEqual(['photo1.jpg', 'holiday.png']);
  });

  // getcontenttype like/eq was a backtracking RegExp tried on ~1,000 types: twelve `%` froze the server for minutes.
  it('answers a getcontenttype like or eq of many % at once, matching as LIKE does', { timeout: 10_000 }, async () => {
    for (const op of ['like', 'eq']) {
      const where = (literal: string) => `<d:${op}><d:prop><d:getcontenttype/></d:prop><d:literal>${literal}</d:literal></d:${op}>`;
      const none = await search(ada, nextcloudBody(`/files/${ada.email}`, where('%%%%%%%%%%%%!')));
      expect(none.status).toBe(207);
      expect(hrefsOf(none)).toEqual([]);
      const pngs = await search(ada, nextcloudBody(`/files/${ada.email}`, where('%%%%%%%%%%%%/pn_')));
      expect(hrefsOf(pngs).map((h) => h.split('/').pop())).toEqual(['holiday.png']);
    }
  });

  it("replays NextcloudKit's name search in a folder (getRequestBodySearchFileName) and its media search with a date window (getRequestBodySearchMedia)", async () => {
    const byName = `<?xml version="1.0"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
<d:basicsearch>
    <d:select><d:prop><d:displayname/><d:getcontentlength/></d:prop></d:select>
    <d:from><d:scope><d:href>/files/${ada.email}/home/reports</d:href><d:depth>infinity</d:depth></d:scope></d:from>
    <d:where><d:like><d:prop><d:displayname/></d:prop><d:literal>%note%</d:literal></d:like></d:where>
</d:basicsearch>
</d:searchrequest>`;
    expect(hrefsOf(await search(ada, byName))).toEqual([`/remote.php/dav/files/${ada.email}/home/reports/notes.txt`]);
    const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
    const media = `<?xml version="1.0"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
<d:basicsearch>
<d:select><d:prop><d:displayname/><d:getlastmodified/></d:prop></d:select>
    <d:from><d:scope><d:href>/files/${ada.email}</d:href><d:depth>infinity</d:depth></d:scope></d:from>
    <d:orderby>
        <d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order>
        <d:order><d:prop><d:displayname/></d:prop><d:descending/></d:order>
    </d:orderby>
    <d:where>
        <d:and>
        <d:or>
            <d:like><d:prop><d:getcontenttype/></d:prop><d:literal>image/%</d:literal></d:like>
            <d:like><d:prop><d:getcontenttype/></d:prop><d:literal>video/%</d:literal></d:like>
        </d:or>
        <d:or>
            <d:and>
                <d:lt><d:prop><d:getlastmodified/></d:prop><d:literal>${iso(Date.now() + 60_000)}</d:literal></d:lt>
                <d:gt><d:prop><d:getlastmodified/></d:prop><d:literal>${iso(startedMs - 60_000)}</d:literal></d:gt>
            </d:and>
        </d:or>
        </d:and>
    </d:where>
    <d:limit><d:nresults>1</d:nresults></d:limit>
</d:basicsearch>
</d:searchrequest>`;
    const answer = await search(ada, media);
    expect(hrefsOf(answer).map((h) => h.split('/').pop())).toEqual(['photo1.jpg']);
    // nresults chosen by the client: no truncation marker.
    expect(multistatusOf(answer).some((r) => r.status === 507)).toBe(false);
  });

  it('filters by type, size and time, orders, limits and pages (firstresult), and marks a page it cut short with 507', async () => {
    const scope = `/files/${ada.email}/home`;
    const files = '<d:not><d:is-collection/></d:not>';
    const big = await search(ada, nextcloudBody(scope, `<d:and>${files}<d:gt><d:prop><oc:size/></d:prop><d:literal>3500</d:literal></d:gt></d:and>`, '<d:orderby><d:order><d:prop><oc:size/></d:prop><d:descending/></d:order></d:orderby>'));
    expect(hrefsOf(big).map((h) => h.split('/').pop())).toEqual(['holiday.png', 'photo1.jpg']);
    const folders = await search(ada, nextcloudBody(scope, '<d:is-collection/>'));
    expect(hrefsOf(folders).map((h) => h.split('/').slice(-2).join('/'))).toEqual(['Photos/', 'reports/'].sort());
    const future = await search(ada, nextcloudBody(scope, `<d:gt><d:prop><d:getlastmodified/></d:prop><d:literal>${Math.floor(Date.now() / 1000) + 3600}</d:literal></d:gt>`));
    expect(hrefsOf(future)).toEqual([]);
    const byName = '<d:orderby><d:order><d:prop><d:displayname/></d:prop></d:order></d:orderby>';
    const page2 = await search(ada, nextcloudBody(scope, files, `${byName}<d:limit><d:nresults>2</d:nresults><nc:firstresult>2</nc:firstresult></d:limit>`));
    expect(hrefsOf(page2).map((h) => h.split('/').pop())).toEqual(['holiday.png', 'notes.txt']);
    // No limit asked and more than the default page? Not here; a limit above the maximum is cut to it.
    const all = await search(ada, nextcloudBody(scope, files, `${byName}<d:limit><d:nresults>5000</d:nresults></d:limit>`));
    expect(hrefsOf(all)).toHaveLength(5);
    expect(multistatusOf(all).some((r) => r.status === 507)).toBe(false);
  });

  it('keeps users apart under parallel searches: each sees their own drive and their own groups only', async () => {
    const body = (u: DavUser) => nextcloudBody(`/files/${u.email}`, '<d:like><d:prop><d:displayname/></d:prop><d:literal>%report%</d:literal></d:like>');
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? search(ada, body(ada)) : search(bob, body(bob)))));
    answers.forEach((answer, i) => {
      const names = hrefsOf(answer).map((h) => h.replace(/\/$/, '').split('/').pop()).sort();
      expect(names).toEqual(i % 2 === 0 ? ['Quarterly-Report.pdf', 'draft_report.txt', 'reports', 'team-report.txt'] : ['bob-report.txt', 'other-report.txt']);
    });
    // Another user's scope is no scope of the caller's.
    expect((await search(ada, body(bob))).status).toBe(400);
  });

  it('follows renames, moves and deletes at once (the index is kept by the database)', async () => {
    const base = `${f.davUrl}${filesOf(ada)}`;
    const moved = await davAs(ada, 'MOVE', `${filesOf(ada)}/home/reports/notes.txt`, { destination: `${base}/home/Photos/minutes.txt` });
    expect(moved.status).toBe(201);
    const like = (text: string) => nextcloudBody(`/files/${ada.email}`, `<d:like><d:prop><d:displayname/></d:prop><d:literal>%${text}%</d:literal></d:like>`);
    expect(hrefsOf(await search(ada, like('notes')))).toEqual([]);
    expect(hrefsOf(await search(ada, like('minutes')))).toEqual([`/remote.php/dav/files/${ada.email}/home/Photos/minutes.txt`]);
    expect((await davAs(ada, 'DELETE', `${filesOf(ada)}/home/Photos/minutes.txt`)).status).toBe(204);
    expect(hrefsOf(await search(ada, like('minutes')))).toEqual([]);
  });

  it('refuses bodies it cannot read: malformed XML 400, another grammar 400, an unknown property 422, nothing changed', async () => {
    expect((await search(ada, '<d:searchrequest xmlns:d="DAV:"><d:basicsearch>')).status).toBe(400);
    expect((await search(ada, '<d:searchrequest xmlns:d="DAV:"><x:other xmlns:x="urn:x"/></d:searchrequest>')).status).toBe(400);
    const unknown = await search(ada, nextcloudBody(`/files/${ada.email}`, '<d:eq><d:prop><oc:owner-display-name/></d:prop><d:literal>x</d:literal></d:eq>'));
    expect(unknown.status).toBe(422);
    expect(unknown.text).toContain('search-grammar-supported');
    const badDate = await search(ada, nextcloudBody(`/files/${ada.email}`, '<d:gt><d:prop><d:getlastmodified/></d:prop><d:literal>yesterday-ish</d:literal></d:gt>'));
    expect(badDate.status).toBe(422);
    expect((await davAs(undefined, 'SEARCH', '/remote.php/dav/', { 'content-type': 'text/xml' }, androidBody(ada.email, 'FILE_SEARCH', 'x'))).status).toBe(401);
  });
});
