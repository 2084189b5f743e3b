/**
 * macOS side files (issue 22, item 4; common/side-files.ts): Finder (WebDAVFS) writes `._<name>`
 * and `.DS_Store` and reads them back; they count toward the quota; every other client never
 * meets them: a plain DAV client (PROPFIND and GET as curl, and the real curl), real rclone, the REST dirlist,
 * another user through a private share (REST and the bridge, Finder included) and a public
 * link's listing. A file's MOVE (rename, into another folder) and DELETE take its `._` twin
 * along. With `store.hideMacSideFiles` and `bridge.hideMacSideFiles` off they are ordinary
 * files, shown to everyone and left where they are. Runs on both transports (integration and
 * integration-http).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type NodeEntry } from '../../../src/store-client/index.js';
import { MAC_SIDE_FILES_HEADER } from '../../../src/common/side-files.js';
import { davRequest, multistatusOf, type DavAnswer, type DavHeaders } from '../../helpers/dav-requests.js';
import { requireBinary } from '../../helpers/require-binary.js';
import { createFolder, readDiskUsed, uploadFile } from '../../helpers/seed.js';
import { fetchRaw } from '../../helpers/sharing.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';
import { rcloneRemote } from '../../clients/rclone-remote.js';
import { describeRun, runProgram } from '../../clients/run-program.js';

const FINDER_UA = 'WebDAVFS/3.0.0 (03008000) Darwin/24.4.0 (arm64)';
const CURL_UA = 'curl/7.88.1';
const rclone = requireBinary('rclone');
const curlProgram = requireBinary('curl');

const appleDouble = Buffer.alloc(4096, 7);
const dsStore = Buffer.from('Bud1 the folder view of Finder');

function request(f: BridgeFixture, who: DavUser, agent: string, method: string, path: string, headers: DavHeaders = {}, body?: Buffer | string): Promise<DavAnswer> {
  return davRequest(f.davUrl, method, path, { clientHeaders: { 'user-agent': agent }, auth: who.auth, headers, body });
}

/** The names a Depth 1 PROPFIND lists below `path` (the collection itself left out). */
async function listedNames(f: BridgeFixture, who: DavUser, agent: string, path: string): Promise<string[]> {
  const answer = await request(f, who, agent, 'PROPFIND', path, { depth: '1' });
  return multistatusOf(answer)
    .map((r) => decodeURIComponent(r.href))
    .filter((href) => href !== path)
    .map((href) => href.slice(path.length).replace(/\/$/, ''))
    .sort();
}

/** The REST dirlist of `folder` as `who`, with or without driveway's side-file header. */
async function restNames(f: BridgeFixture, who: DavUser, folder: string, sideFiles = false): Promise<string[]> {
  const headers: Record<string, string> = sideFiles ? { [MAC_SIDE_FILES_HEADER]: '1' } : {};
  const res = await f.client.http.requestRaw({ method: 'GET', path: `/api/nodes/${folder}/dirlist`, token: who.session.token, headers });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return ((res.body as { data: Array<{ name: string }> }).data).map((e) => e.name).sort();
}

async function publicLink(f: BridgeFixture, who: DavUser, node: string): Promise<string> {
  const res = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${node}/shares`, token: who.session.token, json: { type: 'public' } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return (res.body as { data: { url: string } }).data.url;
}

describe('macOS side files, hidden from all but Finder', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  let dir: string;
  let sub: string;
  let tmp: ReturnType<typeof makeTmpDir>;
  const finder = (method: string, path: string, headers: DavHeaders = {}, body?: Buffer | string) => request(f, alice, FINDER_UA, method, path, headers, body);
  const curl = (method: string, path: string, headers: DavHeaders = {}, body?: Buffer | string) => request(f, alice, CURL_UA, method, path, headers, body);
  const entriesWithSideFiles = (folder: string): Promise<NodeEntry[]> => f.client.listFolder(alice.session, nodeId(folder), undefined, { macSideFiles: true });

  beforeAll(async () => {
    f = await bridgeFixture();
    alice = await f.newDavUser();
    bob = await f.newDavUser();
    dir = await createFolder(f.client, alice.session, 'home', 'dir');
    sub = await createFolder(f.client, alice.session, dir, 'sub');
    await uploadFile(f.client, alice.session, dir, 'x.txt', 'the file itself');
    const share = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${dir}/shares`, token: alice.session.token, json: { type: 'private', recipients: [bob.uuid] } });
    expect(share.status, JSON.stringify(share.body)).toBeLessThan(300);
    tmp = makeTmpDir('driveway-side-files-');
  });
  afterAll(async () => {
    await f?.close();
    tmp?.remove();
  });

  it('keeps what Finder writes (._x.txt, .DS_Store), reads it back to Finder and counts it in the quota', async () => {
    const before = await readDiskUsed(f.store, alice.uuid);
    expect([201, 204]).toContain((await finder('PUT', '/home/dir/._x.txt', { 'content-type': 'application/octet-stream' }, appleDouble)).status);
    expect([201, 204]).toContain((await finder('PUT', '/home/dir/.DS_Store', { 'content-type': 'application/octet-stream' }, dsStore)).status);
    expect(await readDiskUsed(f.store, alice.uuid)).toBe(before + appleDouble.length + dsStore.length);
    const back = await finder('GET', '/home/dir/._x.txt');
    expect(back.status).toBe(200);
    expect(back.body.equals(appleDouble)).toBe(true);
    expect((await finder('GET', '/home/dir/.DS_Store')).body.equals(dsStore)).toBe(true);
    const stat = multistatusOf(await finder('PROPFIND', '/home/dir/._x.txt', { depth: '0' }));
    expect(stat.map((r) => r.href)).toEqual(['/home/dir/._x.txt']);
  });

  it('lists them to Finder', async () => {
    expect(await listedNames(f, alice, FINDER_UA, '/home/dir/')).toEqual(['.DS_Store', '._x.txt', 'sub', 'x.txt']);
  });

  it('hides them from a plain DAV client: not listed, and 404 by name', async () => {
    expect(await listedNames(f, alice, CURL_UA, '/home/dir/')).toEqual(['sub', 'x.txt']);
    expect((await curl('PROPFIND', '/home/dir/._x.txt', { depth: '0' })).status).toBe(404);
    expect((await curl('GET', '/home/dir/._x.txt')).status).toBe(404);
    expect((await curl('GET', '/home/dir/.DS_Store')).status).toBe(404);
    expect((await curl('GET', '/home/dir/x.txt')).text).toBe('the file itself');
  });

  it('takes a plain client\'s PUT of a hidden one as a new revision of it, still hidden', async () => {
    const replaced = Buffer.alloc(4096, 9);
    expect([201, 204]).toContain((await curl('PUT', '/home/dir/._x.txt', {}, replaced)).status);
    const twins = (await entriesWithSideFiles(dir)).filter((e) => e.name === '._x.txt');
    expect(twins.map((e) => e.revision)).toEqual([2]);
    expect(await listedNames(f, alice, CURL_UA, '/home/dir/')).toEqual(['sub', 'x.txt']);
    // Finder's bytes back, as a revision 3 (what the MOVE below carries along).
    expect([201, 204]).toContain((await finder('PUT', '/home/dir/._x.txt', {}, appleDouble)).status);
  });

    it('hides them from real rclone (lsf over the bridge)', async () => {
    const remote = await rcloneRemote({ rclonePath: rclone.path, name: 'SIDE', url: `${f.davUrl}/home/`, username: alice.email, password: alice.password, tmpDir: tmp.dir, timeoutMs: 60_000 });
    const run = await remote.run(['lsf', '-R', `${remote.prefix}dir`]);
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout.split('\n').filter(Boolean).sort()).toEqual(['sub/', 'x.txt']);
  });

  it('hides them from the real curl (PROPFIND Depth 1, and 404 for GET by name)', async () => {
    const curlRun = (args: string[]) => runProgram(curlProgram.path, ['-sS', '-u', `${alice.email}:${alice.password}`, ...args], { timeoutMs: 30_000 });
    const listing = await curlRun(['-X', 'PROPFIND', '-H', 'Depth: 1', `${f.davUrl}/home/dir/`]);
    expect(listing.code, describeRun(listing)).toBe(0);
    const hrefs = [...listing.stdout.matchAll(/<D:href>([^<]*)<\/D:href>/gi)].map((m) => decodeURIComponent(m[1] as string)).sort();
    expect(hrefs).toEqual(['/home/dir/', '/home/dir/sub/', '/home/dir/x.txt']);
    for (const name of ['._x.txt', '.DS_Store']) {
      const get = await curlRun(['-o', '/dev/null', '-w', '%{http_code}', `${f.davUrl}/home/dir/${name}`]);
      expect(get.stdout, describeRun(get)).toBe('404');
    }
  });

  it('leaves them out of the REST dirlist unless the owner asks (X-Driveway-Mac-Side-Files: 1)', async () => {
    expect(await restNames(f, alice, dir)).toEqual(['sub', 'x.txt']);
    expect(await restNames(f, alice, dir, true)).toEqual(['.DS_Store', '._x.txt', 'sub', 'x.txt']);
  });

  it('never shows them to another user through a share: REST (even when asked), the bridge, Finder included', async () => {
    expect(await restNames(f, bob, dir)).toEqual(['sub', 'x.txt']);
    expect(await restNames(f, bob, dir, true)).toEqual(['sub', 'x.txt']);
    expect(await listedNames(f, bob, CURL_UA, '/shared_with_you/dir/')).toEqual(['sub', 'x.txt']);
    expect(await listedNames(f, bob, FINDER_UA, '/shared_with_you/dir/')).toEqual(['sub', 'x.txt']);
  });

  it('never shows them through a public link to the folder', async () => {
    const url = await publicLink(f, alice, dir);
    const listing = await fetchRaw(f.store, url);
    expect(listing.status).toBe(200);
    const names = (listing.json() as { data: { entries: Array<{ name: string }> } }).data.entries.map((e) => e.name).sort();
    expect(names).toEqual(['sub', 'x.txt']);
    expect((await fetchRaw(f.store, `${url}/._x.txt`)).status).toBe(404);
    expect((await fetchRaw(f.store, `${url}/x.txt`)).status).toBe(200);
  });

  it('takes the ._ twin along when a plain client renames the file (MOVE)', async () => {
    const moved = await curl('MOVE', '/home/dir/x.txt', { destination: `${f.davUrl}/home/dir/y.txt` });
    expect(moved.status).toBe(201);
    const names = (await entriesWithSideFiles(dir)).map((e) => e.name).sort();
    expect(names).toEqual(['.DS_Store', '._y.txt', 'sub', 'y.txt']);
    expect((await finder('GET', '/home/dir/._y.txt')).body.equals(appleDouble)).toBe(true);
  });

  it('takes the ._ twin along when the file moves into another folder, replacing the twin there', async () => {
    await uploadFile(f.client, alice.session, sub, '._y.txt', 'a stale twin');
    const moved = await finder('MOVE', '/home/dir/y.txt', { destination: `${f.davUrl}/home/dir/sub/y.txt` });
    expect(moved.status).toBe(201);
    expect((await entriesWithSideFiles(dir)).map((e) => e.name).sort()).toEqual(['.DS_Store', 'sub']);
    expect((await entriesWithSideFiles(sub)).map((e) => e.name).sort()).toEqual(['._y.txt', 'y.txt']);
    expect((await finder('GET', '/home/dir/sub/._y.txt')).body.equals(appleDouble)).toBe(true);
  });

  it('deletes the ._ twin with the file (both go to the trash)', async () => {
    const before = await readDiskUsed(f.store, alice.uuid);
    expect((await curl('DELETE', '/home/dir/sub/y.txt')).status).toBe(204);
    expect((await entriesWithSideFiles(sub)).map((e) => e.name)).toEqual([]);
    const trashed = (await entriesWithSideFiles('trash')).map((e) => e.name);
    expect(trashed).toEqual(expect.arrayContaining(['y.txt', '._y.txt']));
    // Still counted: trash counts toward the quota.
    expect(await readDiskUsed(f.store, alice.uuid)).toBe(before);
    // The trash's REST listing hides the twin as every listing does.
    expect(await restNames(f, alice, 'trash')).not.toContain('._y.txt');
  });
});

describe('macOS side files with hideMacSideFiles off', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let dir: string;
  const curl = (method: string, path: string, headers: DavHeaders = {}, body?: Buffer | string) => request(f, alice, CURL_UA, method, path, headers, body);

  beforeAll(async () => {
    f = await bridgeFixture({ flags: { 'store.hideMacSideFiles': false, 'bridge.hideMacSideFiles': false } });
    alice = await f.newDavUser();
    dir = await createFolder(f.client, alice.session, 'home', 'dir');
    await uploadFile(f.client, alice.session, dir, 'a.txt', 'plain');
  });
  afterAll(async () => {
    await f?.close();
  });

  it('treats them as ordinary files: listed to every client and in every listing, left behind by a MOVE', async () => {
    expect([201, 204]).toContain((await curl('PUT', '/home/dir/._a.txt', {}, appleDouble)).status);
    expect([201, 204]).toContain((await curl('PUT', '/home/dir/.DS_Store', {}, dsStore)).status);
    expect(await listedNames(f, alice, CURL_UA, '/home/dir/')).toEqual(['.DS_Store', '._a.txt', 'a.txt']);
    expect((await curl('GET', '/home/dir/._a.txt')).body.equals(appleDouble)).toBe(true);
    expect(await restNames(f, alice, dir)).toEqual(['.DS_Store', '._a.txt', 'a.txt']);
    const url = await publicLink(f, alice, dir);
    const names = ((await fetchRaw(f.store, url)).json() as { data: { entries: Array<{ name: string }> } }).data.entries.map((e) => e.name).sort();
    expect(names).toEqual(['.DS_Store', '._a.txt', 'a.txt']);
    expect((await curl('MOVE', '/home/dir/a.txt', { destination: `${f.davUrl}/home/dir/b.txt` })).status).toBe(201);
    expect(await restNames(f, alice, dir)).toEqual(['.DS_Store', '._a.txt', 'b.txt']);
  });
});
