/**
 * User A cannot list, read, write, lock or unlock anything of user B through the bridge, whatever
 * path, Destination, If or Lock-Token A sends: every path resolves inside A's own tree (each
 * user's `/home` is their own), B's node UUIDs and `home:<B>` forms are plain names there, and
 * B's lock tokens neither satisfy nor remove B's locks. B's data is checked through the store
 * client as B afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type NodeEntry } from '../../../src/store-client/index.js';
import { bridgeRequests, davRequest, type DavAnswer } from '../../helpers/dav-requests.js';
import { basicAuth, bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { createFolder, uploadFile } from '../../helpers/seed.js';

const LOCK_BODY =
  '<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>' +
  '<D:locktype><D:write/></D:locktype><D:owner>A</D:owner></D:lockinfo>';
const PROPPATCH_BODY =
  '<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:x="urn:x"><D:set><D:prop><x:owned>A</x:owned></D:prop></D:set></D:propertyupdate>';
const SECRET = "B's secret content";

describe('isolation between users', () => {
  let f: BridgeFixture;
  let a: DavUser;
  let b: DavUser;
  let bSecretId: string;
  let bDirId: string;
  let bInnerId: string;
  let bFileToken: string;
  let bDirToken: string;
  let bHomeBefore: NodeEntry[];
  let bDirBefore: NodeEntry[];
  /** Every way A might name something of B's. */
  let foreignPaths: string[];

  const { davAs: dav } = bridgeRequests(() => f);

  function tokenOf(answer: DavAnswer): string {
    const match = /^<([^>]+)>$/.exec(String(answer.headers['lock-token'] ?? ''));
    if (!match) throw new Error(`LOCK answered ${answer.status} without a token`);
    return match[1] as string;
  }

  async function download(user: DavUser, id: string, name: string): Promise<string> {
    const file = await f.client.download(user.session, nodeId(id), name);
    const chunks: Buffer[] = [];
    for await (const chunk of file.body) chunks.push(Buffer.from(chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  }

  function mentionsB(body: string): boolean {
    return [b.uuid, bSecretId, bDirId, bInnerId, bFileToken, bDirToken, 'secret.txt', 'bdir', SECRET].some((s) => body.includes(s));
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    a = await f.newDavUser();
    b = await f.newDavUser();
    bSecretId = await uploadFile(f.client, b.session, 'home', 'secret.txt', SECRET);
    bDirId = await createFolder(f.client, b.session, 'home', 'bdir');
    bInnerId = await uploadFile(f.client, b.session, bDirId, 'inner.txt', 'inner of B');
    await f.client.setStarred(b.session, nodeId(bSecretId), true);
    await uploadFile(f.client, a.session, 'home', 'mine.txt', 'A owns this');
    await createFolder(f.client, a.session, 'home', 'adir');

    const fileLock = await dav(b, 'LOCK', '/home/secret.txt', { depth: '0' }, LOCK_BODY);
    const dirLock = await dav(b, 'LOCK', '/home/bdir/', {}, LOCK_BODY);
    expect([fileLock.status, dirLock.status]).toEqual([200, 200]);
    bFileToken = tokenOf(fileLock);
    bDirToken = tokenOf(dirLock);
    bHomeBefore = await f.client.listFolder(b.session, nodeId('home'));
    bDirBefore = await f.client.listFolder(b.session, nodeId(bDirId));

    foreignPaths = [
      `/home:${b.uuid}/secret.txt`,
      `/home:${b.uuid}/`,
      `/home/home:${b.uuid}/secret.txt`,
      `/favorites:${b.uuid}/secret.txt`,
      `/home/${bSecretId}`,
      `/${bSecretId}`,
      `/${bDirId}/inner.txt`,
      `/home/${bDirId}/inner.txt`,
      `/home/${bDirId}/`,
      `/trash:${b.uuid}/`,
      `/favorites/${bSecretId}`,
      `/home/secret.txt`,
      `/home/bdir/inner.txt`,
      `/favorites/secret.txt`,
    ];
  });

  afterAll(async () => {
    await f.close();
  });

  it("cannot list B's folders: listings under every top-level folder show only A's own entries", async () => {
    for (const folder of ['/', '/home/', '/favorites/', '/trash/', '/incoming/', '/shared_with_you/', '/public_shares/', '/private_shares/']) {
      const answer = await dav(a, 'PROPFIND', folder, { depth: '1' });
      expect(answer.status, folder).toBe(207);
      expect(mentionsB(answer.text), folder).toBe(false);
    }
    const home = await dav(a, 'PROPFIND', '/home/', { depth: '1' });
    expect(home.text).toContain('/home/mine.txt</D:href>');
    for (const path of foreignPaths) {
      const answer = await dav(a, 'PROPFIND', path, { depth: '1' });
      expect(answer.status, path).toBe(404);
      expect(mentionsB(answer.text), path).toBe(false);
    }
  });

  it("cannot read B's files by path, UUID or qualified top-level form (GET and HEAD answer 404)", async () => {
    for (const path of foreignPaths) {
      const get = await dav(a, 'GET', path);
      expect(get.status, path).toBe(404);
      expect(get.text).not.toContain(SECRET);
      expect((await dav(a, 'HEAD', path)).status, path).toBe(404);
    }
  });

  it("cannot write, create, change properties of or delete anything of B's", async () => {
    // `/home/<B's uuid>` (with or without a slash) and `/home/secret.txt` are free names in A's
    // own home: a PUT there rightly creates A's file (the lock case below shows it), so skip them.
    const plainNamesInA = new Set([`/home/${bSecretId}`, `/home/${bDirId}/`, '/home/secret.txt']);
    for (const path of foreignPaths) {
      if (!plainNamesInA.has(path)) {
        const put = await dav(a, 'PUT', path, {}, 'overwritten by A');
        expect([403, 409], `PUT ${path}`).toContain(put.status);
      }
      const mkcol = await dav(a, 'MKCOL', `${path.replace(/\/$/, '')}/newdir`);
      expect([403, 409], `MKCOL ${path}`).toContain(mkcol.status);
      const proppatch = await dav(a, 'PROPPATCH', path, { 'content-type': 'application/xml' }, PROPPATCH_BODY);
      expect(proppatch.status, `PROPPATCH ${path}`).toBe(404);
      const del = await dav(a, 'DELETE', path);
      expect(del.status, `DELETE ${path}`).toBe(404);
    }
  });

  it("cannot move or copy B's nodes, nor move or copy into B's folders through a Destination", async () => {
    for (const path of foreignPaths) {
      for (const method of ['MOVE', 'COPY']) {
        const out = await dav(a, method, path, { destination: `${f.davUrl}/home/stolen.txt` });
        expect(out.status, `${method} ${path}`).toBe(404);
      }
    }
    const destinations = [
      `/home:${b.uuid}/planted.txt`,
      `${f.davUrl}/home:${b.uuid}/planted.txt`,
      `/home/${bDirId}/planted.txt`,
      `/${bDirId}/planted.txt`,
      `/home/bdir/planted.txt`,
      `/favorites/planted.txt`,
    ];
    for (const destination of destinations) {
      for (const method of ['COPY', 'MOVE']) {
        const answer = await dav(a, method, '/home/mine.txt', { destination });
        expect([403, 409], `${method} -> ${destination}`).toContain(answer.status);
      }
    }
    const aHome = await f.client.listFolder(a.session, nodeId('home'));
    expect(aHome.map((e) => e.name).sort()).toEqual(['adir', 'mine.txt']);
    expect(await download(a, aHome.find((e) => e.name === 'mine.txt')?.id ?? '', 'mine.txt')).toBe('A owns this');
  });

  it("cannot lock B's nodes, and B's locks do not hold on A's same-named files", async () => {
    for (const path of [`/home:${b.uuid}/secret.txt`, `/home/${bDirId}/inner.txt`, `/${bDirId}/inner.txt`, `/trash:${b.uuid}/x`]) {
      const answer = await dav(a, 'LOCK', path, {}, LOCK_BODY);
      expect([403, 409], path).toContain(answer.status);
    }
    // The same names in A's tree are A's own resources: B's locks do not cover them.
    expect((await dav(a, 'PUT', '/home/secret.txt', {}, 'A has a secret too')).status).toBe(201);
    expect((await dav(a, 'MKCOL', '/home/bdir')).status).toBe(201);
    expect((await dav(a, 'PUT', '/home/bdir/inner.txt', {}, 'inner of A')).status).toBe(201);
    const aLock = await dav(a, 'LOCK', '/home/secret.txt', { depth: '0' }, LOCK_BODY);
    expect(aLock.status).toBe(200);
    const aToken = tokenOf(aLock);
    expect((await dav(a, 'PUT', '/home/bdir/inner.txt', {}, 'A writes its own')).status).toBe(204);

    // A LOCK on a name that is B's UUID creates an empty file of that name in A's own home.
    const planted = await dav(a, 'LOCK', `/home/${bSecretId}`, {}, LOCK_BODY);
    expect(planted.status).toBe(201);
    const aHome = await f.client.listFolder(a.session, nodeId('home'));
    expect(aHome.find((e) => e.name === bSecretId)?.sizeBytes).toBe(0);
    expect((await dav(a, 'UNLOCK', `/home/${bSecretId}`, { 'lock-token': tokenOf(planted) })).status).toBe(204);
    expect((await dav(a, 'UNLOCK', '/home/secret.txt', { 'lock-token': `<${aToken}>` })).status).toBe(204);
  });

  it("cannot use B's lock tokens: they satisfy no If header, unlock nothing and refresh nothing", async () => {
    const ifForms = [
      `(<${bFileToken}>)`,
      `(<${bDirToken}>)`,
      `</home/secret.txt> (<${bFileToken}>)`,
      `<${f.davUrl}/home:${b.uuid}/secret.txt> (<${bFileToken}>)`,
      `</home/${bSecretId}> (<${bFileToken}>)`,
    ];
    for (const header of ifForms) {
      const put = await dav(a, 'PUT', '/home/mine.txt', { if: header }, 'A with B token');
      expect(put.status, header).toBe(412);
      const refresh = await dav(a, 'LOCK', '/home/mine.txt', { if: header });
      expect([400, 412], header).toContain(refresh.status);
    }
    for (const path of ['/home/mine.txt', '/home/secret.txt', '/home/bdir/', '/home/bdir/inner.txt', `/home:${b.uuid}/secret.txt`, `/home/${bSecretId}`, '/']) {
      for (const token of [bFileToken, bDirToken]) {
        for (const header of [`<${token}>`, token]) {
          const answer = await dav(a, 'UNLOCK', path, { 'lock-token': header });
          expect(answer.status, `UNLOCK ${path} ${header}`).toBe(409);
        }
      }
    }
  });

  it("refuses B's email with A's password", async () => {
    const res = await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth: basicAuth(b.email, a.password + 'x'), headers: { depth: '1' } });
    expect(res.status).toBe(401);
    expect(res.text).not.toContain('secret.txt');
  });

  it("leaves B's data and B's locks exactly as they were", async () => {
    const home = await f.client.listFolder(b.session, nodeId('home'));
    expect(home).toEqual(bHomeBefore);
    expect(await f.client.listFolder(b.session, nodeId(bDirId))).toEqual(bDirBefore);
    expect(await download(b, bSecretId, 'secret.txt')).toBe(SECRET);
    expect(await download(b, bInnerId, 'inner.txt')).toBe('inner of B');
    expect((await f.client.listFolder(b.session, nodeId('trash'))).length).toBe(0);
    expect((await f.client.listFolder(b.session, nodeId('favorites'))).map((e) => e.id)).toEqual([bSecretId]);

    // B's locks still hold against B without the token, and B's tokens still work for B.
    expect((await dav(b, 'PUT', '/home/secret.txt', {}, 'no token')).status).toBe(423);
    expect((await dav(b, 'PUT', '/home/bdir/inner.txt', {}, 'no token')).status).toBe(423);
    const discovery = await dav(b, 'PROPFIND', '/home/secret.txt', { depth: '0' },
      '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>');
    expect(discovery.text).toContain(bFileToken);
    expect((await dav(b, 'UNLOCK', '/home/secret.txt', { 'lock-token': `<${bFileToken}>` })).status).toBe(204);
    expect((await dav(b, 'UNLOCK', '/home/bdir/', { 'lock-token': bDirToken })).status).toBe(204);
  });
});
