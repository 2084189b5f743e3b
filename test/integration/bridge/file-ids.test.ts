/**
 * Numeric file ids through the bridge (docs/extensions.md "Numeric file ids"): oc:fileid is the
 * store's number, oc:id Nextcloud's form of it, in the caller's own tree, a group drive and a
 * private share alike, the same after a MOVE; the made-up collections get numbers too; the root
 * carries oc:data-fingerprint; PUT answers OC-FileId in oc:id form; `versions/<fileid>` takes the
 * number. And a replay of the Nextcloud Android library's PROPFIND, its property list as it sends
 * it, parsed as the library parses the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { groupAdmin } from '../../helpers/groups.js';
import { createFolder, uploadFile } from '../../helpers/seed.js';
import type { DavResponse } from '../../helpers/multistatus.js';

const OC = 'http://owncloud.org/ns';
const NC = 'http://nextcloud.org/ns';

/**
 * WebdavUtils.getAllPropSet() of nextcloud/android-library at commit
 * 5a9da0c5f8e694459b5fec937b930dc795ae0d92
 * (library/src/main/java/com/owncloud/android/lib/common/network/WebdavUtils.java), in its
 * order, with the names of WebdavEntry.kt's constants: what the app asks of every folder it reads.
 */
const ANDROID_ALL_PROPS: ReadonlyArray<readonly [ns: string, local: string]> = [
  ['DAV:', 'displayname'],
  ['DAV:', 'getcontenttype'],
  ['DAV:', 'resourcetype'],
  ['DAV:', 'getcontentlength'],
  ['DAV:', 'getlastmodified'],
  ['DAV:', 'creationdate'],
  ['DAV:', 'getetag'],
  [OC, 'permissions'],
  [OC, 'fileid'],
  [OC, 'id'],
  [OC, 'size'],
  [OC, 'favorite'],
  [NC, 'is-encrypted'],
  [NC, 'mount-type'],
  [OC, 'owner-id'],
  [OC, 'owner-display-name'],
  [OC, 'comments-unread'],
  [NC, 'has-preview'],
  [NC, 'note'],
  [NC, 'sharees'],
  [NC, 'rich-workspace'],
  [NC, 'creation_time'],
  [NC, 'upload_time'],
  [NC, 'lock'],
  [NC, 'lock-owner-type'],
  [NC, 'lock-owner'],
  [NC, 'lock-owner-displayname'],
  [NC, 'lock-owner-editor'],
  [NC, 'lock-time'],
  [NC, 'lock-timeout'],
  [NC, 'lock-token'],
  [NC, 'system-tags'],
  [NC, 'color'],
  [NC, 'file-metadata-size'],
  [NC, 'file-metadata-gps'],
  [NC, 'metadata-photos-size'],
  [NC, 'metadata-photos-gps'],
  [NC, 'metadata-files-live-photo'],
  [NC, 'hidden'],
  [NC, 'share-download-limits'],
];

/** The body jackrabbit's PropFindMethod sends for that set (one prefix per namespace). */
const ANDROID_PROPFIND = `<?xml version="1.0" encoding="UTF-8"?><D:propfind xmlns:D="DAV:" xmlns:oc="${OC}" xmlns:nc="${NC}"><D:prop>${ANDROID_ALL_PROPS.map(
  ([ns, local]) => `<${ns === 'DAV:' ? 'D' : ns === OC ? 'oc' : 'nc'}:${local}/>`,
).join('')}</D:prop></D:propfind>`;

/** Kotlin's String.toLong(): an optional sign and decimal digits within a signed 64-bit integer, else NumberFormatException. */
function kotlinToLong(value: string): bigint {
  if (!/^[+-]?\d+$/.test(value)) throw new Error(`NumberFormatException: For input string: "${value}"`);
  const n = BigInt(value);
  if (n > 2n ** 63n - 1n || n < -(2n ** 63n)) throw new Error(`NumberFormatException: For input string: "${value}"`);
  return n;
}

interface AndroidEntry {
  isFolder: boolean;
  contentLength: bigint;
  eTag: string;
  permissions: string | undefined;
  remoteId: string | undefined;
  localId: bigint;
  size: bigint | undefined;
}

/**
 * WebdavEntry's constructor (WebdavEntry.kt at the commit above) on one response: the properties
 * of the first propstat's status (the second's when the first is 404), getcontentlength, oc:fileid
 * and oc:size through toLong(), oc:id and oc:permissions as strings, the ETag unquoted (parseEtag).
 */
function parseAsAndroid(response: DavResponse): AndroidEntry {
  const ok = (local: string, ns = 'DAV:') => {
    const prop = response.props.get(`{${ns}}${local}`);
    return prop && prop.status === 200 ? prop : undefined;
  };
  const length = ok('getcontentlength');
  const size = ok('size', OC);
  const fileid = ok('fileid', OC);
  const etag = ok('getetag')?.text ?? '';
  return {
    isFolder: (ok('resourcetype')?.node.children.length ?? 0) > 0,
    contentLength: length ? kotlinToLong(length.text) : 0n,
    eTag: etag.length >= 2 && etag.startsWith('"') && etag.endsWith('"') ? etag.slice(1, -1) : etag,
    permissions: ok('permissions', OC)?.text,
    remoteId: ok('id', OC)?.text,
    localId: fileid ? kotlinToLong(fileid.text) : -1n,
    size: size ? kotlinToLong(size.text) : undefined,
  };
}

describe('numeric file ids through the bridge', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  let team: string;
  const { dav, davAs, move, entryIn, put, storeEntries } = bridgeRequests(() => f, () => alice);
  const files = (who: DavUser) => `/remote.php/dav/files/${encodeURIComponent(who.email)}`;
  const android = (path: string, depth = '1', as: DavUser = alice) => davAs(as, 'PROPFIND', path, { depth, 'content-type': 'application/xml' }, ANDROID_PROPFIND);
  let instanceId: string;

  beforeAll(async () => {
    f = await bridgeFixture();
    alice = await f.newDavUser();
    bob = await f.newDavUser();
    const ga = groupAdmin(f.client, f.admin);
    team = await ga.group('Numbers Team');
    await ga.member(team, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    expect((await dav('MKCOL', '/home/docs/')).status).toBe(201);
    await put('/home/docs/plan.txt', 'plan one');
    await put('/home/docs/plan.txt', 'plan two');
    await put('/home/empty.txt', '');
    await put('/groups/Numbers%20Team/home/team.txt', 'team');
    const shared = await createFolder(f.client, bob.session, 'home', 'Shared');
    await uploadFile(f.client, bob.session, shared, 'q3.txt', 'third quarter');
    const res = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${shared}/shares`, token: bob.session.token, json: { type: 'private', recipients: [alice.uuid] } });
    expect(res.status).toBeLessThan(300);
  });
  afterAll(async () => {
    await f?.close();
  });

  it("answers the Android library's PROPFIND in a form it parses: numeric oc:fileid (the store's), oc:id, permissions, size, etag", async () => {
    const answer = await android(`${files(alice)}/home/docs/`);
    expect(answer.status).toBe(207);
    const responses = multistatusOf(answer);
    expect(responses.map((r) => r.href)).toEqual([`${files(alice)}/home/docs/`, `${files(alice)}/home/docs/plan.txt`]);
    const [folder, plan] = responses.map(parseAsAndroid) as [AndroidEntry, AndroidEntry];
    const stored = await entryIn((await entryIn('home', 'docs'))!.id, 'plan.txt');
    instanceId = plan.remoteId!.slice(-12);
    expect(instanceId).toMatch(/^oc[a-z0-9]{10}$/);
    expect(plan).toMatchObject({ isFolder: false, contentLength: 8n, localId: BigInt(stored!.fileId!), remoteId: `${String(stored!.fileId).padStart(8, '0')}${instanceId}` });
    expect(plan.permissions).toMatch(/^R?D?N?V?W$/);
    expect(plan.eTag).not.toBe('');
    expect(folder.isFolder).toBe(true);
    expect(folder.localId).toBe(BigInt((await entryIn('home', 'docs'))!.fileId!));
    expect(folder.remoteId).toBe(`${String(folder.localId).padStart(8, '0')}${instanceId}`);
    // The same over the bridge's own paths, and for a 0-byte file.
    const [empty] = multistatusOf(await android('/home/empty.txt', '0')).map(parseAsAndroid);
    expect(empty).toMatchObject({ contentLength: 0n, localId: BigInt((await entryIn('home', 'empty.txt'))!.fileId!) });
  });

  it('numbers the made-up collections too, all distinct, and puts oc:data-fingerprint on the root only', async () => {
    const root = multistatusOf(await android('/', '1'));
    const groups = multistatusOf(await android('/groups/', '1'));
    const parsed = [...root, ...groups.slice(1)].map((r) => ({ href: r.href, entry: parseAsAndroid(r) }));
    for (const { entry } of parsed) expect(entry.localId).toBeGreaterThan(0n);
    expect(new Set(parsed.map((p) => p.entry.localId)).size).toBe(parsed.length);
    const fingerprint = (r: DavResponse) => r.props.get(`{${OC}}data-fingerprint`);
    const asked = `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:oc="${OC}"><D:prop><oc:data-fingerprint/><oc:fileid/></D:prop></D:propfind>`;
    const [self, ...below] = multistatusOf(await dav('PROPFIND', '/', { depth: '1' }, asked));
    expect(fingerprint(self!)?.status).toBe(200);
    expect(fingerprint(self!)?.text).toMatch(/^[a-z0-9]{32}$/);
    for (const r of below) expect(fingerprint(r)?.status).toBe(404);
    // Asked again: the same numbers and the same fingerprint.
    const again = multistatusOf(await android('/', '1')).map((r) => parseAsAndroid(r).localId);
    expect(again).toEqual(root.map((r) => parseAsAndroid(r).localId));
    expect(fingerprint(multistatusOf(await dav('PROPFIND', '/', { depth: '0' }, asked))[0]!)?.text).toBe(fingerprint(self!)?.text);
  });

  it("shows the store's number in a group drive and through a private share", async () => {
    const [team1] = multistatusOf(await android('/groups/Numbers%20Team/home/team.txt', '0')).map(parseAsAndroid);
    const stored = (await storeEntries(`home:${team}`)).find((e) => e.name === 'team.txt');
    expect(team1?.localId).toBe(BigInt(stored!.fileId!));
    const [shared] = multistatusOf(await android('/shared_with_you/Shared/q3.txt', '0')).map(parseAsAndroid);
    const bobs = (await storeEntries((await entryIn('home', 'Shared', bob))!.id, bob)).find((e) => e.name === 'q3.txt');
    expect(shared?.localId).toBe(BigInt(bobs!.fileId!));
    expect(shared?.remoteId).toBe(`${String(bobs!.fileId).padStart(8, '0')}${instanceId}`);
  });

  it('keeps the number across a MOVE, and answers a PUT with OC-FileId in oc:id form', async () => {
    const created = await dav('PUT', '/home/moving.txt', {}, 'moving');
    expect(created.status).toBe(201);
    const [before] = multistatusOf(await android('/home/moving.txt', '0')).map(parseAsAndroid);
    expect(created.headers['oc-fileid']).toBe(before!.remoteId);
    expect((await move('/home/moving.txt', '/home/docs/moved.txt')).status).toBe(201);
    const [after] = multistatusOf(await android(`${files(alice)}/home/docs/moved.txt`, '0')).map(parseAsAndroid);
    expect(after).toMatchObject({ localId: before!.localId, remoteId: before!.remoteId });
    const replaced = await dav('PUT', '/home/docs/moved.txt', {}, 'moved again');
    expect(replaced.status).toBe(204);
    expect(replaced.headers['oc-fileid']).toBe(before!.remoteId);
  });

  it('serves versions/<fileid> by the number (and the oc:id, and the UUID as before); 404 for another user', async () => {
    const base = `/remote.php/dav/versions/${encodeURIComponent(alice.email)}/versions`;
    const plan = await entryIn((await entryIn('home', 'docs'))!.id, 'plan.txt');
    for (const id of [String(plan!.fileId), `${String(plan!.fileId).padStart(8, '0')}${instanceId}`, plan!.id]) {
      const listed = multistatusOf(await dav('PROPFIND', `${base}/${id}`, { depth: '1' }));
      expect(listed.slice(1)).toHaveLength(2);
    }
    const bobs = `/remote.php/dav/versions/${encodeURIComponent(bob.email)}/versions/${plan!.fileId}`;
    expect((await davAs(bob, 'PROPFIND', bobs, { depth: '1' })).status).toBe(404);
    expect((await dav('PROPFIND', `${base}/999999999`, { depth: '1' })).status).toBe(404);
  });
});
