/**
 * Issue 21, item 7: the bridge never grants what it could not confirm. LOCK and PROPPATCH are
 * guarded by the bridge alone (the store never sees them), so a myaccess that answers 404 must not
 * read as "everything allowed":
 * - a store without myaccess at all (played by a proxy in front of the real store that answers
 *   the route 404, as a foreign server or edition 1.0 does) is detected once and remembered; the
 *   user's own tree is theirs, a group's tree allows what the caller's Group entry lists, a
 *   share confirms nothing: LOCK and PROPPATCH there are 403, while PUT still goes to the store,
 *   which decides;
 * - a store with myaccess that answers 404 for one node (a share ended after its listing was
 *   cached) grants nothing on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, EXCLUSIVE_LOCKINFO, multistatusOf } from '../../helpers/dav-requests.js';
import { ALL_NODE_PERMISSIONS, call, dataOf, groupAdmin } from '../../helpers/groups.js';
import { davProp } from '../../helpers/multistatus.js';
import { createFolder, uploadFile } from '../../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const TEAM = 'Ops Team';
const TEAM_PATH = `/groups/${encodeURIComponent(TEAM)}`;
const LOCK_HEADERS = { depth: '0', 'content-type': 'application/xml', timeout: 'Second-600' };
const PROPPATCH_BODY =
  '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:tag>x</Z:tag></D:prop></D:set></D:propertyupdate>';
const TAG_BODY = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><Z:tag/></D:prop></D:propfind>';
const PRIVILEGES_BODY = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:current-user-privilege-set/></D:prop></D:propfind>';
const MYACCESS = /\/myaccess(\?|$)/;

/** Two ways a server says it has no myaccess: a bare 404 (another server), and driveway's edition 1.0 answer. */
const MISSING_ROUTE = [
  { server: 'a server that answers a bare 404', body: { status: 'error', msg: 'Not Found' }, probesHome: true },
  { server: 'a server that names the missing route (not_implemented)', body: { status: 'error', msg: 'no such endpoint', code: 'not_implemented' }, probesHome: false },
];

describe.each(MISSING_ROUTE)('a store without myaccess ($server)', ({ body, probesHome }) => {
  let f: BridgeFixture;
  let alice: DavUser;
  let writer: DavUser;
  let reader: DavUser;
  const { davAs } = bridgeRequests(() => f);
  const dav = (as: DavUser, method: string, path: string, headers: Record<string, string> = {}, payload?: string) => davAs(as, method, path, headers, payload);

  async function privileges(as: DavUser, path: string): Promise<string[]> {
    const [response] = multistatusOf(await dav(as, 'PROPFIND', path, { depth: '0' }, PRIVILEGES_BODY));
    if (!response) throw new Error('no response');
    return davProp(response, 'current-user-privilege-set').node.children.map((p) => p.children[0]?.local ?? '').sort();
  }

  /** Whether the dead property Z:tag is stored on `path`, as `as` sees it. */
  async function hasTag(as: DavUser, path: string): Promise<boolean> {
    const [response] = multistatusOf(await dav(as, 'PROPFIND', path, { depth: '0' }, TAG_BODY));
    return response?.props.get('{urn:z}tag')?.status === 200;
  }

  beforeAll(async () => {
    f = await bridgeFixture({ viaProxy: true, bridgeFlags: { cacheTtlMs: 200 } });
    f.proxy?.answerInstead(MYACCESS, 404, body);
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group(TEAM);
    [alice, writer, reader] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
    await ga.member(team, writer.uuid, { node_permissions: ALL_NODE_PERMISSIONS });
    await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
    await uploadFile(f.client, writer.session, `home:${team}`, 'plan.txt', 'the plan');
    const drafts = await createFolder(f.client, alice.session, 'home', 'Drafts');
    await uploadFile(f.client, alice.session, drafts, 'draft.txt', 'first draft');
    const reports = await createFolder(f.client, alice.session, 'home', 'Reports');
    await dataOf(call(f.client, alice.session, 'POST', `/api/nodes/${drafts}/shares`, { type: 'private', recipients: [reader.uuid], writable: true }));
    await dataOf(call(f.client, alice.session, 'POST', `/api/nodes/${reports}/shares`, { type: 'private', recipients: [reader.uuid] }));
    f.proxy?.reset();
  });
  afterAll(async () => {
    await f?.close();
  });

  it('lets the owner lock and patch in their own tree: ownership needs no myaccess', async () => {
    expect((await dav(alice, 'LOCK', '/home/mine.txt', LOCK_HEADERS, EXCLUSIVE_LOCKINFO)).status).toBe(201);
    expect((await dav(alice, 'PROPPATCH', '/home/Drafts/', {}, PROPPATCH_BODY)).status).toBe(207);
    expect(await hasTag(alice, '/home/Drafts/')).toBe(true);
    expect(await privileges(alice, '/home/Drafts/')).toContain('all');
  });

  it('refuses LOCK and PROPPATCH in a group tree to a member whose Group entry lacks write, and changes nothing', async () => {
    expect((await dav(reader, 'LOCK', `${TEAM_PATH}/home/plan.txt`, LOCK_HEADERS, EXCLUSIVE_LOCKINFO)).status).toBe(403);
    expect((await dav(reader, 'LOCK', `${TEAM_PATH}/home/new.txt`, LOCK_HEADERS, EXCLUSIVE_LOCKINFO)).status).toBe(403);
    expect((await dav(reader, 'PROPPATCH', `${TEAM_PATH}/home/plan.txt`, {}, PROPPATCH_BODY)).status).toBe(403);
    // Nothing was locked, created or patched: the writer replaces the file without a token.
    expect((await dav(writer, 'PUT', `${TEAM_PATH}/home/plan.txt`, {}, 'the plan, second take')).status).toBe(204);
    expect((await dav(writer, 'GET', `${TEAM_PATH}/home/new.txt`)).status).toBe(404);
    expect(await hasTag(writer, `${TEAM_PATH}/home/plan.txt`)).toBe(false);
    expect(await privileges(reader, `${TEAM_PATH}/home/plan.txt`)).toEqual(['read', 'read-current-user-privilege-set']);
  });

  it('lets a member whose Group entry lists write lock and patch in the group tree', async () => {
    const locked = await dav(writer, 'LOCK', `${TEAM_PATH}/home/plan.txt`, LOCK_HEADERS, EXCLUSIVE_LOCKINFO);
    expect(locked.status).toBe(200);
    expect((await dav(writer, 'UNLOCK', `${TEAM_PATH}/home/plan.txt`, { 'lock-token': String(locked.headers['lock-token']) })).status).toBe(204);
    expect((await dav(writer, 'PROPPATCH', `${TEAM_PATH}/home/plan.txt`, {}, PROPPATCH_BODY)).status).toBe(207);
    expect(await privileges(writer, `${TEAM_PATH}/home/plan.txt`)).toContain('all');
  });

  it('confirms nothing below shared_with_you: LOCK and PROPPATCH 403, while the store still decides PUT', async () => {
    expect((await dav(reader, 'LOCK', '/shared_with_you/Drafts/draft.txt', LOCK_HEADERS, EXCLUSIVE_LOCKINFO)).status).toBe(403);
    expect((await dav(reader, 'PROPPATCH', '/shared_with_you/Drafts/draft.txt', {}, PROPPATCH_BODY)).status).toBe(403);
    expect(await hasTag(alice, '/home/Drafts/draft.txt')).toBe(false);
    expect(await privileges(reader, '/shared_with_you/Drafts/draft.txt')).toEqual([]);
    // The writable share takes a new file, the read-only one is refused by the store itself.
    expect((await dav(reader, 'PUT', '/shared_with_you/Drafts/notes.txt', {}, 'from the reader')).status).toBe(201);
    expect((await dav(alice, 'GET', '/home/Drafts/notes.txt')).text).toBe('from the reader');
    expect((await dav(reader, 'PUT', '/shared_with_you/Reports/notes.txt', {}, 'refused')).status).toBe(403);
    expect((await dav(alice, 'GET', '/home/Reports/notes.txt')).status).toBe(404);
  });

  it('learns once that the route is missing, and asks it no more', async () => {
    const asked = f.proxy!.matching('GET', MYACCESS);
    // The first question's 404, and (when the 404 does not say the route is missing) one of the caller's own home.
    expect(asked.length).toBe(probesHome ? 2 : 1);
    expect(f.proxy!.matching('GET', /\/api\/nodes\/home\/myaccess$/).length).toBe(probesHome ? 1 : 0);
  });
});

describe('a store whose myaccess answers 404 for one node', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  let shareUuid: string;
  const { davAs } = bridgeRequests(() => f);
  const dav = (as: DavUser, method: string, path: string, headers: Record<string, string> = {}, payload?: string) => davAs(as, method, path, headers, payload);

  beforeAll(async () => {
    // Listings kept a minute: bob still sees the shared folder after the share ended.
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 60_000 } });
    [alice, bob] = await Promise.all([f.newDavUser(), f.newDavUser()]);
    const secret = await createFolder(f.client, alice.session, 'home', 'Secret');
    await uploadFile(f.client, alice.session, secret, 'keys.txt', 'the keys');
    const made = await dataOf<{ share_uuid: string }>(call(f.client, alice.session, 'POST', `/api/nodes/${secret}/shares`, { type: 'private', recipients: [bob.uuid], writable: true }));
    shareUuid = made.share_uuid;
  });
  afterAll(async () => {
    await f?.close();
  });

  it('grants nothing on a node the store no longer shows the user, though a cached listing still does', async () => {
    // A listing without privileges: nothing about Secret's permissions is remembered yet.
    const listed = multistatusOf(await dav(bob, 'PROPFIND', '/shared_with_you/', { depth: '1' }, '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:displayname/></D:prop></D:propfind>'));
    expect(listed.map((r) => r.href)).toContain('/shared_with_you/Secret/');
    await dataOf(call(f.client, alice.session, 'DELETE', `/api/shares/${shareUuid}`));

    expect((await dav(bob, 'LOCK', '/shared_with_you/Secret/', LOCK_HEADERS, EXCLUSIVE_LOCKINFO)).status).toBe(403);
    expect((await dav(bob, 'PROPPATCH', '/shared_with_you/Secret/', {}, PROPPATCH_BODY)).status).toBe(403);
    // Alice's folder is not locked: she writes into it without a token.
    expect((await dav(alice, 'PUT', '/home/Secret/more.txt', {}, 'still hers')).status).toBe(201);
    const [mine] = multistatusOf(await dav(alice, 'PROPFIND', '/home/Secret/', { depth: '0' }, TAG_BODY));
    expect(mine?.props.get('{urn:z}tag')?.status).toBe(404);
  });
});
