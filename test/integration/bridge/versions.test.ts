/**
 * Issue 23, item 3: `/versions/`, a read-only view of every kept revision mirroring the drive
 * (docs/bridge-design.md "Versions and trash"). PROPFIND lists each file's revisions as files
 * named by their time with size, time and checksums; GET serves a revision's bytes; COPY of one
 * onto its file restores it as a new revision (earlier ones kept), COPY to a free name makes a
 * new file; every other write is refused (403) and changes nothing. Another user's files are
 * unknown there (404), a group's are shown to its members and restored only with `write`. The
 * root lists `/versions/` to Finder and Explorer only, so a sync tool's copy of `/` never
 * reaches it. Runs on the run's transport (in-process, HTTP, PostgreSQL + S3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/index.js';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { davProp } from '../../helpers/multistatus.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { checksumsOf } from '../../helpers/seed.js';
import { createLocalClient } from '../../../src/store/local-client.js';

const FINDER_UA = 'WebDAVFS/3.0.0 (03008000) Darwin/22.1.0 (arm64)';
const WINDOWS_UA = 'Microsoft-WebDAV-MiniRedir/10.0.19045';
const RCLONE_UA = 'rclone/v1.69.1';
const TIME_NAME = /^\d{4}-\d\d-\d\dT\d\d\.\d\d\.\d\d(\.\d{3})?Z( r\d+)? report\.odt$/;

let f: BridgeFixture;
let alice: DavUser;
let reader: DavUser;
const { dav, davAs, copy, put, storeEntries } = bridgeRequests(() => f, () => alice);

beforeAll(async () => {
  f = await bridgeFixture();
  alice = await f.newDavUser();
  // The group first: the bridge caches who is in which group for its TTL.
  const ga = groupAdmin(f.client, f.admin);
  const team = await ga.group('Versions Crew');
  await ga.member(team, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
  reader = await f.newDavUser();
  await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
  expect((await dav('MKCOL', '/home/docs/')).status).toBe(201);
  await put('/home/docs/report.odt', 'first version');
  await put('/home/docs/report.odt', 'second version, longer');
});
afterAll(async () => {
  await f?.close();
});

/** The names a Depth 1 PROPFIND lists below `path`, itself left out. */
async function listed(path: string, headers: Record<string, string> = {}, as: DavUser = alice): Promise<string[]> {
  const responses = multistatusOf(await dav('PROPFIND', path, { depth: '1', ...headers }, undefined, as));
  return responses.slice(1).map((r) => decodeURIComponent(r.href.replace(/\/$/, '').split('/').pop() ?? ''));
}

async function fileId(folder: string, name: string, as: DavUser = alice): Promise<NodeId> {
  const entry = (await storeEntries(folder, as)).find((e) => e.name === name);
  if (!entry) throw new Error(`no ${name}`);
  return entry.id;
}

async function docsId(): Promise<NodeId> {
  return fileId('home', 'docs');
}

describe('/versions/', () => {
  it('mirrors the drive: folders as folders, each file as the folder of its revisions, named by time, with size, time and checksums', async () => {
    expect(await listed('/versions/')).toEqual(['home', 'incoming', 'groups']);
    expect(await listed('/versions/home/')).toEqual(['docs']);
    const responses = multistatusOf(await dav('PROPFIND', '/versions/home/docs/', { depth: '1' }));
    expect(davProp(responses[1] ?? responses[0]!, 'resourcetype').node.children.map((c) => c.local)).toEqual(['collection']);
    const revisions = multistatusOf(await dav('PROPFIND', '/versions/home/docs/report.odt/', { depth: '1' })).slice(1);
    const names = revisions.map((r) => decodeURIComponent(r.href.split('/').pop() ?? ''));
    expect(names).toHaveLength(2);
    for (const name of names) expect(name).toMatch(TIME_NAME);
    expect([...names].sort()).toEqual(names);
    expect(revisions.map((r) => davProp(r, 'getcontentlength').text)).toEqual(['13', '22']);
    expect(revisions[0]?.props.get('{http://owncloud.org/ns}checksums')?.text).toContain(`SHA1:${checksumsOf('first version').sha1}`);
    expect(Date.parse(davProp(revisions[0]!, 'getlastmodified').text)).toBeGreaterThan(Date.now() - 600_000);
  });

  it('GET of a revision serves its bytes; COPY onto its file restores it as the newest revision, earlier ones kept', async () => {
    const names = await listed('/versions/home/docs/report.odt/');
    const first = `/versions/home/docs/report.odt/${encodeURIComponent(names[0] as string)}`;
    const got = await dav('GET', first);
    expect(got.status).toBe(200);
    expect(got.text).toBe('first version');
    const part = await dav('GET', first, { range: 'bytes=6-12' });
    expect(part.status).toBe(206);
    expect(part.text).toBe('version');
    const restored = await copy(first, '/home/docs/report.odt');
    expect(restored.status, restored.text).toBe(204);
    expect((await dav('GET', '/home/docs/report.odt')).text).toBe('first version');
    const id = await fileId(await docsId(), 'report.odt');
    expect((await f.client.listRevisions(alice.session, id)).map((r) => r.revision)).toEqual([1, 2, 3]);
    expect(await listed('/versions/home/docs/report.odt/')).toHaveLength(3);
    // Overwrite: F (what rclone sends on every COPY) restores too: nothing is replaced, a revision is added.
    expect((await copy(first, '/home/docs/report.odt', { overwrite: 'F' })).status).toBe(204);
    expect((await f.client.listRevisions(alice.session, id)).map((r) => r.revision)).toEqual([1, 2, 3, 4]);
    // To a free name: a new file with the revision's bytes.
    expect((await copy(first, '/home/docs/recovered.odt')).status).toBe(201);
    expect((await dav('GET', '/home/docs/recovered.odt')).text).toBe('first version');
    // Onto another file: refused, that file untouched.
    expect((await copy(first, '/home/docs/recovered.odt')).status).toBe(403);
    expect((await f.client.listRevisions(alice.session, await fileId(await docsId(), 'recovered.odt'))).length).toBe(1);
  });

  it('is read-only: PUT, MKCOL, DELETE, MOVE, PROPPATCH and LOCK are refused and change nothing', async () => {
    const names = await listed('/versions/home/docs/report.odt/');
    const one = `/versions/home/docs/report.odt/${encodeURIComponent(names[0] as string)}`;
    expect((await dav('PUT', '/versions/home/docs/new.txt', {}, 'x')).status).toBe(403);
    expect((await dav('PUT', one, {}, 'x')).status).toBe(403);
    expect((await dav('MKCOL', '/versions/home/docs/dir/')).status).toBe(403);
    expect((await dav('DELETE', one)).status).toBe(403);
    expect((await dav('DELETE', '/versions/home/docs/report.odt/')).status).toBe(403);
    expect((await dav('MOVE', one, { destination: `${f.davUrl}/home/docs/moved.odt` })).status).toBe(403);
    expect((await copy('/home/docs/recovered.odt', '/versions/home/docs/x.odt')).status).toBe(403);
    const proppatch = '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1</x></D:prop></D:set></D:propertyupdate>';
    expect((await dav('PROPPATCH', one, { 'content-type': 'application/xml' }, proppatch)).status).toBe(403);
    const lock = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    expect((await dav('LOCK', one, { 'content-type': 'application/xml' }, lock)).status).toBe(403);
    expect(await listed('/versions/home/docs/report.odt/')).toEqual(names);
    expect((await storeEntries(await docsId())).map((e) => e.name).sort()).toEqual(['recovered.odt', 'report.odt']);
  });

  it('names revisions made within one second apart from each other', async () => {
    for (const text of ['a', 'b', 'c']) await put('/home/docs/quick.txt', text);
    const names = await listed('/versions/home/docs/quick.txt/');
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(/^\d{4}-\d\d-\d\dT\d\d\.\d\d\.\d\d(\.\d{3})?Z( r\d+)? quick\.txt$/);
    const bodies = await Promise.all(names.map(async (n) => (await dav('GET', `/versions/home/docs/quick.txt/${encodeURIComponent(n)}`)).text));
    expect([...bodies].sort()).toEqual(['a', 'b', 'c']);
  });

  it('is listed in the root for Finder and Explorer only; a sync tool meets it only by path', async () => {
    expect(await listed('/', { 'user-agent': RCLONE_UA })).not.toContain('versions');
    expect(await listed('/')).not.toContain('versions');
    expect(await listed('/', { 'user-agent': FINDER_UA })).toContain('versions');
    expect(await listed('/', { 'user-agent': WINDOWS_UA })).toContain('versions');
    expect(await listed('/versions/', { 'user-agent': RCLONE_UA })).toEqual(['home', 'incoming', 'groups']);
  });

  it("another user's files are not there (404); a group's are shown to members, restored only with write", async () => {
    const bob = await f.newDavUser();
    expect((await dav('PROPFIND', '/versions/home/docs/report.odt/', { depth: '1' }, undefined, bob)).status).toBe(404);
    const names = await listed('/versions/home/docs/report.odt/');
    expect((await dav('GET', `/versions/home/docs/report.odt/${encodeURIComponent(names[0] as string)}`, {}, undefined, bob)).status).toBe(404);
    // Bob's own id guesses go nowhere either: the store answers 404 for alice's file.
    const aliceFile = await fileId(await docsId(), 'report.odt');
    await expect(f.client.listRevisions(bob.session, aliceFile)).rejects.toMatchObject({ kind: 'not-found' });

    await put('/groups/Versions%20Crew/home/plan.txt', 'plan one');
    await put('/groups/Versions%20Crew/home/plan.txt', 'plan two');
    expect(await listed('/versions/groups/', {}, reader)).toEqual(['Versions Crew']);
    const planRevisions = await listed('/versions/groups/Versions%20Crew/home/plan.txt/', {}, reader);
    expect(planRevisions).toHaveLength(2);
    const old = `/versions/groups/Versions%20Crew/home/plan.txt/${encodeURIComponent(planRevisions[0] as string)}`;
    expect((await dav('GET', old, {}, undefined, reader)).text).toBe('plan one');
    expect((await dav('COPY', old, { destination: `${f.davUrl}/groups/Versions%20Crew/home/plan.txt` }, undefined, reader)).status).toBe(403);
    expect((await dav('GET', '/groups/Versions%20Crew/home/plan.txt')).text).toBe('plan two');
    expect((await dav('PROPFIND', '/versions/groups/Versions%20Crew/home/plan.txt/', { depth: '1' }, undefined, bob)).status).toBe(404);
    expect((await dav('COPY', old, { destination: `${f.davUrl}/groups/Versions%20Crew/home/plan.txt` })).status).toBe(204);
    expect((await dav('GET', '/groups/Versions%20Crew/home/plan.txt')).text).toBe('plan one');
  });
});

describe("a share's recipient and old revisions (issue 29)", () => {
  it('meets none through either door: /versions/ mirrors no share, and the store gives him the current revision only on both transports', async () => {
    const bob = await f.newDavUser();
    expect((await dav('MKCOL', '/home/Team%20Notes/')).status).toBe(201);
    await put('/home/Team%20Notes/minutes.txt', 'with the private remark');
    await put('/home/Team%20Notes/minutes.txt', 'remark taken out');
    const folder = await fileId('home', 'Team Notes');
    const made = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${folder}/shares`, token: alice.session.token, json: { type: 'private', recipients: [bob.uuid], writable: true } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect((await dav('GET', '/shared_with_you/Team%20Notes/minutes.txt', {}, undefined, bob)).text).toBe('remark taken out');

    // The bridge: no share in /versions/, and the Nextcloud versions space finds nothing for it.
    expect(await listed('/versions/', {}, bob)).toEqual(['home', 'incoming']);
    expect((await dav('PROPFIND', '/versions/shared_with_you/Team%20Notes/minutes.txt/', { depth: '1' }, undefined, bob)).status).toBe(404);
    const file = await fileId(folder, 'minutes.txt');
    const ncVersions = (who: DavUser) => dav('PROPFIND', `/remote.php/dav/versions/${encodeURIComponent(who.email)}/versions/${file}`, { depth: '1' }, undefined, who);
    expect(multistatusOf(await ncVersions(alice))).toHaveLength(3);
    expect((await ncVersions(bob)).status).toBe(404);

    // The store, as either transport reaches it: the current revision only.
    for (const client of [f.client, createLocalClient(f.store.ctx)]) {
      expect((await client.listRevisions(bob.session, file)).map((r) => r.revision)).toEqual([2]);
      await expect(client.download(bob.session, file, 'minutes.txt', { version: 1 })).rejects.toMatchObject({ kind: 'forbidden' });
      await expect(client.restoreRevision(bob.session, file, 1)).rejects.toMatchObject({ kind: 'forbidden' });
      const current = await client.download(bob.session, file, 'minutes.txt', { version: 2 });
      expect(Buffer.concat(await current.body.toArray()).toString()).toBe('remark taken out');
    }
    expect((await f.client.listRevisions(alice.session, file)).map((r) => r.revision)).toEqual([1, 2]);
  });
});

describe('/versions/ over a store without the revision listing', () => {
  let g: BridgeFixture;
  let carol: DavUser;
  const foreign = bridgeRequests(() => g, () => carol);

  beforeAll(async () => {
    g = await bridgeFixture({ viaProxy: true });
    // A server of the interface only: the revision listing, the restore and the trash facts are unknown to it.
    g.proxy?.answerInstead(/^\/api\/nodes\/[^/]+\/(revisions|restore)$/, 404, { message: 'no such route', statusCode: 404 });
    carol = await g.newDavUser();
  });
  afterAll(async () => {
    await g?.close();
  });

  it('shows each file as an empty folder of revisions; the file itself is unaffected', async () => {
    await foreign.put('/home/a.txt', 'one');
    await foreign.put('/home/a.txt', 'two');
    const responses = multistatusOf(await foreign.dav('PROPFIND', '/versions/home/a.txt/', { depth: '1' }));
    expect(responses).toHaveLength(1);
    expect((await foreign.dav('GET', '/home/a.txt')).text).toBe('two');
  });
});
