import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { nodeId } from '../../../src/store-client/index.js';
import { bridgeRequests, type DavAnswer, type DavHeaders } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { createFolder, entryNamed, uploadFile } from '../../helpers/seed.js';

const FINDER_OWNER = '<D:owner><D:href>http://www.apple.com/webdav_fs/</D:href></D:owner>';

function lockInfo(scope: 'exclusive' | 'shared', owner = FINDER_OWNER): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?>\n' +
    `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype>${owner}</D:lockinfo>`
  );
}

function tokenOf(answer: DavAnswer): string {
  const header = String(answer.headers['lock-token'] ?? '');
  const match = /^<(opaquelocktoken:[^>]+)>$/.exec(header);
  if (!match) throw new Error(`no Lock-Token header in ${answer.status} answer: ${header}`);
  return match[1] as string;
}

describe('LOCK and UNLOCK', () => {
  let f: BridgeFixture;
  const clock = new ManualClock();

  beforeAll(async () => {
    f = await bridgeFixture({ clock });
  });
  afterAll(async () => {
    await f.close();
  });

  const { davAs: dav } = bridgeRequests(() => f);

  function lockFile(user: DavUser, path: string, scope: 'exclusive' | 'shared', headers: DavHeaders = {}): Promise<DavAnswer> {
    return dav(user, 'LOCK', path, { 'content-type': 'application/xml', ...headers }, lockInfo(scope));
  }

  /** A user whose home holds `doc.txt` ("hello") and `dir/` with `inner.txt`. */
  async function userWithFiles(): Promise<DavUser & { docId: string; dirId: string }> {
    const user = await f.newDavUser();
    const docId = await uploadFile(f.client, user.session, 'home', 'doc.txt', 'hello');
    const dirId = await createFolder(f.client, user.session, 'home', 'dir');
    await uploadFile(f.client, user.session, dirId, 'inner.txt', 'inside');
    return { ...user, docId, dirId };
  }

  it('grants an exclusive lock with a DAV: namespaced activelock, a bracketed Lock-Token and the lock root', async () => {
    const u = await userWithFiles();
    const answer = await lockFile(u, '/home/doc.txt', 'exclusive', { depth: '0', timeout: 'Second-600' });
    expect(answer.status).toBe(200);
    const token = tokenOf(answer);
    expect(answer.headers['content-type']).toMatch(/^application\/xml/);
    expect(answer.text).toContain('<D:prop xmlns:D="DAV:"><D:lockdiscovery><D:activelock>');
    expect(answer.text).toContain('<D:locktype><D:write/></D:locktype>');
    expect(answer.text).toContain('<D:lockscope><D:exclusive/></D:lockscope>');
    expect(answer.text).toContain('<D:depth>0</D:depth>');
    // Serialized self-contained: the owner carries the DAV: binding it uses.
    expect(answer.text).toContain('<D:owner xmlns:D="DAV:"><D:href>http://www.apple.com/webdav_fs/</D:href></D:owner>');
    expect(answer.text).toContain('<D:timeout>Second-600</D:timeout>');
    expect(answer.text).toContain(`<D:locktoken><D:href>${token}</D:href></D:locktoken>`);
    expect(answer.text).toContain('<D:lockroot><D:href>/home/doc.txt</D:href></D:lockroot>');
    expect((await dav(u, 'UNLOCK', '/home/doc.txt', { 'lock-token': `<${token}>` })).status).toBe(204);
  });

  it('keeps the owner element verbatim, namespaces included', async () => {
    const u = await userWithFiles();
    const owner = '<D:owner xmlns:x="urn:example:x"><x:person x:id="7">Ann &amp; Bob</x:person></D:owner>';
    const answer = await dav(u, 'LOCK', '/home/doc.txt', { depth: '0' }, lockInfo('exclusive', owner));
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('<D:owner xmlns:x="urn:example:x" xmlns:D="DAV:"><x:person x:id="7">Ann &amp; Bob</x:person></D:owner>');
  });

  it('defaults to Depth infinity and refuses Depth 1 with 400', async () => {
    const u = await userWithFiles();
    const refused = await lockFile(u, '/home/dir/', 'exclusive', { depth: '1' });
    expect(refused.status).toBe(400);
    const answer = await lockFile(u, '/home/dir', 'exclusive');
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('<D:depth>infinity</D:depth>');
    expect(answer.text).toContain('<D:lockroot><D:href>/home/dir/</D:href></D:lockroot>');
  });

  it('honours the Timeout header, Infinite capped to a finite grant, and defaults without one', async () => {
    const u = await userWithFiles();
    const a = await lockFile(u, '/home/doc.txt', 'shared', { timeout: 'Second-42' });
    expect(a.text).toContain('<D:timeout>Second-42</D:timeout>');
    const b = await lockFile(u, '/home/doc.txt', 'shared', { timeout: 'Infinite, Second-4100000000' });
    expect(b.text).toContain(`<D:timeout>Second-${f.bridge.services.locks.maxTimeoutSec}</D:timeout>`);
    const c = await lockFile(u, '/home/doc.txt', 'shared');
    expect(c.text).toContain(`<D:timeout>Second-${f.bridge.services.locks.defaultTimeoutSec}</D:timeout>`);
  });

  it('lets shared locks coexist and refuses an exclusive lock over a shared one with 423 no-conflicting-lock', async () => {
    const u = await userWithFiles();
    const first = await lockFile(u, '/home/doc.txt', 'shared');
    const second = await lockFile(u, '/home/doc.txt', 'shared');
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(tokenOf(first)).not.toBe(tokenOf(second));
    const exclusive = await lockFile(u, '/home/doc.txt', 'exclusive');
    expect(exclusive.status).toBe(423);
    expect(exclusive.text).toContain('<D:no-conflicting-lock><D:href>/home/doc.txt</D:href>');
    expect(exclusive.headers['lock-token']).toBeUndefined();
  });

  it('refuses a shared or a second exclusive lock over an exclusive one, even with its token submitted', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));
    expect((await lockFile(u, '/home/doc.txt', 'shared')).status).toBe(423);
    expect((await lockFile(u, '/home/doc.txt', 'exclusive', { if: `(<${token}>)` })).status).toBe(423);
  });

  it('refuses a lock on a member of a depth-infinity locked collection, and a depth-infinity lock over a locked member', async () => {
    const u = await userWithFiles();
    const dirToken = tokenOf(await lockFile(u, '/home/dir/', 'exclusive'));
    const member = await lockFile(u, '/home/dir/inner.txt', 'exclusive');
    expect(member.status).toBe(423);
    expect(member.text).toContain('<D:href>/home/dir/</D:href>');
    expect((await dav(u, 'UNLOCK', '/home/dir/', { 'lock-token': `<${dirToken}>` })).status).toBe(204);

    expect((await lockFile(u, '/home/dir/inner.txt', 'exclusive')).status).toBe(200);
    const over = await lockFile(u, '/home/dir/', 'exclusive');
    expect(over.status).toBe(423);
    expect(over.text).toContain('<D:href>/home/dir/inner.txt</D:href>');
    expect((await lockFile(u, '/home/dir/', 'exclusive', { depth: '0' })).status).toBe(200);
  });

  it('a depth-infinity collection lock blocks a PUT inside without the token (423) and allows it with the token', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/dir/', 'exclusive'));
    const blocked = await dav(u, 'PUT', '/home/dir/inner.txt', {}, 'changed');
    expect(blocked.status).toBe(423);
    expect(blocked.text).toContain('lock-token-submitted');
    const blockedNew = await dav(u, 'PUT', '/home/dir/new.txt', {}, 'new');
    expect(blockedNew.status).toBe(423);

    const allowed = await dav(u, 'PUT', '/home/dir/inner.txt', { if: `(<${token}>)` }, 'changed');
    expect(allowed.status).toBe(204);
    const tagged = await dav(u, 'PUT', '/home/dir/new.txt', { if: `<${f.davUrl}/home/dir/> (<${token}>)` }, 'new');
    expect(tagged.status).toBe(201);
    const files = await f.client.listFolder(u.session, nodeId(u.dirId));
    expect(files.map((e) => [e.name, e.sizeBytes]).sort()).toEqual([
      ['inner.txt', 7],
      ['new.txt', 3],
    ]);
  });

  it('refreshes with an If header and no body, extending the timeout', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive', { timeout: 'Second-100' }));
    clock.advance(60_000);
    const refreshed = await dav(u, 'LOCK', '/home/doc.txt', { if: `(<${token}>)`, timeout: 'Second-100' });
    expect(refreshed.status).toBe(200);
    expect(refreshed.text).toContain('<D:timeout>Second-100</D:timeout>');
    expect(refreshed.text).toContain(`<D:href>${token}</D:href>`);
    expect(refreshed.headers['lock-token']).toBeUndefined();
    clock.advance(60_000);
    // 120 s after the LOCK, past its first timeout: the refresh keeps it alive.
    expect((await lockFile(u, '/home/doc.txt', 'exclusive')).status).toBe(423);
    clock.advance(41_000);
    expect((await lockFile(u, '/home/doc.txt', 'exclusive')).status).toBe(200);
  });

  it('keeps the previous timeout when a refresh sends no Timeout header', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive', { timeout: 'Second-45' }));
    clock.advance(30_000);
    const refreshed = await dav(u, 'LOCK', '/home/doc.txt', { if: `(<${token}>)` });
    expect(refreshed.status).toBe(200);
    expect(refreshed.text).toContain('<D:timeout>Second-45</D:timeout>');
  });

  it('refreshes a collection lock through a member (indirect refresh)', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/dir/', 'exclusive', { timeout: 'Second-100' }));
    const refreshed = await dav(u, 'LOCK', '/home/dir/inner.txt', { if: `(<${token}>)`, timeout: 'Second-300' });
    expect(refreshed.status).toBe(200);
    expect(refreshed.text).toContain('<D:timeout>Second-300</D:timeout>');
    expect(refreshed.text).toContain('<D:lockroot><D:href>/home/dir/</D:href></D:lockroot>');
  });

  it('refuses a refresh without an If header (400) and with a token that is not on the resource (412)', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));
    expect((await dav(u, 'LOCK', '/home/doc.txt')).status).toBe(400);
    const elsewhere = await dav(u, 'LOCK', '/home/dir/inner.txt', { if: `<${f.davUrl}/home/doc.txt> (<${token}>)` });
    expect(elsewhere.status).toBe(412);
    const unknown = await dav(u, 'LOCK', '/home/doc.txt', { if: '(<opaquelocktoken:00000000-0000-0000-0000-000000000000>)' });
    expect(unknown.status).toBe(412);
  });

  it('expires locks after their timeout', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive', { timeout: 'Second-30' }));
    clock.advance(29_000);
    expect((await dav(u, 'PUT', '/home/doc.txt', {}, 'x')).status).toBe(423);
    clock.advance(2_000);
    expect((await dav(u, 'PUT', '/home/doc.txt', {}, 'expired')).status).toBe(204);
    const refresh = await dav(u, 'LOCK', '/home/doc.txt', { if: `(<${token}>)` });
    expect(refresh.status).toBe(412);
    expect((await dav(u, 'UNLOCK', '/home/doc.txt', { 'lock-token': `<${token}>` })).status).toBe(409);
  });

  it('creates an empty file for a LOCK on an unmapped URL (201), visible in PROPFIND and on the store', async () => {
    const u = await userWithFiles();
    const answer = await lockFile(u, '/home/dir/new.bin', 'exclusive', { depth: '0', timeout: 'Second-600' });
    expect(answer.status).toBe(201);
    const token = tokenOf(answer);
    expect(answer.text).toContain('<D:lockroot><D:href>/home/dir/new.bin</D:href></D:lockroot>');
    const stored = await entryNamed(f.client, u.session, u.dirId, 'new.bin');
    expect(stored.kind).toBe('file');
    expect(stored.sizeBytes).toBe(0);

    const listing = await dav(u, 'PROPFIND', '/home/dir/', { depth: '1' });
    expect(listing.status).toBe(207);
    expect(listing.text).toContain('/home/dir/new.bin</D:href>');
    const one = await dav(u, 'PROPFIND', '/home/dir/new.bin', { depth: '0' });
    expect(one.status).toBe(207);
    expect(one.text).toMatch(/<D:getcontentlength>0<\/D:getcontentlength>/);
    expect(one.text).toContain(token);

    expect((await dav(u, 'PUT', '/home/dir/new.bin', {}, 'no token')).status).toBe(423);
    expect((await dav(u, 'PUT', '/home/dir/new.bin', { if: `(<${token}>)` }, 'with token')).status).toBe(204);
  });

  it('answers 409 for a lock-null create below a missing parent and 403 directly below the root', async () => {
    const u = await userWithFiles();
    const missing = await lockFile(u, '/home/nowhere/new.txt', 'exclusive');
    expect(missing.status).toBe(409);
    const top = await lockFile(u, '/new.txt', 'exclusive');
    expect(top.status).toBe(403);
    const home = await f.client.listFolder(u.session, nodeId('home'));
    expect(home.map((e) => e.name).sort()).toEqual(['dir', 'doc.txt']);
  });

  it('honours If-None-Match: * on LOCK (davfs2): 412 when the file exists, 201 when it does not', async () => {
    const u = await userWithFiles();
    const exists = await lockFile(u, '/home/doc.txt', 'exclusive', { 'if-none-match': '*' });
    expect(exists.status).toBe(412);
    expect(exists.headers['lock-token']).toBeUndefined();
    const fresh = await lockFile(u, '/home/fresh.txt', 'exclusive', { 'if-none-match': '*' });
    expect(fresh.status).toBe(201);
    expect((await entryNamed(f.client, u.session, 'home', 'fresh.txt')).sizeBytes).toBe(0);
  });

  it('refuses a lock-null create inside a collection another lock holds, leaving no file', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/dir/', 'exclusive'));
    const refused = await lockFile(u, '/home/dir/blocked.txt', 'exclusive');
    expect(refused.status).toBe(423);
    const names = (await f.client.listFolder(u.session, nodeId(u.dirId))).map((e) => e.name);
    expect(names).toEqual(['inner.txt']);
    expect((await dav(u, 'UNLOCK', '/home/dir/', { 'lock-token': token })).status).toBe(204);
  });

  it('UNLOCK takes the token with angle brackets or bare (Windows), and 400 without a header', async () => {
    const u = await userWithFiles();
    const bracketed = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));
    expect((await dav(u, 'UNLOCK', '/home/doc.txt', { 'lock-token': `<${bracketed}>` })).status).toBe(204);
    const bare = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));
    expect((await dav(u, 'UNLOCK', '/home/doc.txt', { 'lock-token': bare })).status).toBe(204);
    expect((await lockFile(u, '/home/doc.txt', 'exclusive')).status).toBe(200);
    expect((await dav(u, 'UNLOCK', '/home/doc.txt')).status).toBe(400);
    expect((await dav(u, 'UNLOCK', '/home/doc.txt', { 'lock-token': '<>' })).status).toBe(400);
  });

  it('UNLOCK answers 409 lock-token-matches-request-uri for an unknown token or a resource outside the lock', async () => {
    const u = await userWithFiles();
    const unknown = await dav(u, 'UNLOCK', '/home/doc.txt', { 'lock-token': '<opaquelocktoken:4b5a0c34-0000-4000-8000-000000000000>' });
    expect(unknown.status).toBe(409);
    expect(unknown.text).toContain('<D:lock-token-matches-request-uri/>');
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));
    const elsewhere = await dav(u, 'UNLOCK', '/home/dir/inner.txt', { 'lock-token': `<${token}>` });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.text).toContain('lock-token-matches-request-uri');
    expect((await dav(u, 'UNLOCK', '/home/missing.txt', { 'lock-token': `<${token}>` })).status).toBe(409);
    // Still locked after the refused attempts.
    expect((await lockFile(u, '/home/doc.txt', 'exclusive')).status).toBe(423);
  });

  it('UNLOCK of a collection lock through a member removes it', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/dir/', 'exclusive'));
    expect((await dav(u, 'UNLOCK', '/home/dir/inner.txt', { 'lock-token': `<${token}>` })).status).toBe(204);
    expect((await lockFile(u, '/home/dir/inner.txt', 'exclusive')).status).toBe(200);
  });

  it('PUT with an untagged If (<token>) works (stock webdav-server crashed on it), a wrong token fails 412', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive', { depth: '0' }));
    const put = await dav(u, 'PUT', '/home/doc.txt', { if: `(<${token}>)` }, 'updated');
    expect(put.status).toBe(204);
    const wrong = await dav(u, 'PUT', '/home/doc.txt', { if: '(<opaquelocktoken:11111111-1111-4111-8111-111111111111>)' }, 'nope');
    expect(wrong.status).toBe(412);
    expect((await entryNamed(f.client, u.session, 'home', 'doc.txt')).sizeBytes).toBe(7);
    expect((await dav(u, 'OPTIONS', '/')).status).toBe(200);
  });

  it('PUT with a tagged If naming the resource by absolute URL or by path works', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));
    expect((await dav(u, 'PUT', '/home/doc.txt', { if: `<${f.davUrl}/home/doc.txt> (<${token}>)` }, 'by url')).status).toBe(204);
    expect((await dav(u, 'PUT', '/home/doc.txt', { if: `</home/doc.txt> (<${token}>)` }, 'by path')).status).toBe(204);
    const otherTag = await dav(u, 'PUT', '/home/doc.txt', { if: `</home/dir/inner.txt> (<${token}>)` }, 'wrong tag');
    expect(otherTag.status).toBe(412);
  });

  it('handles <DAV:no-lock>: (<DAV:no-lock>) alone fails, (Not <DAV:no-lock>) passes, and alternatives are ORed', async () => {
    const u = await userWithFiles();
    expect((await dav(u, 'PUT', '/home/doc.txt', { if: '(<DAV:no-lock>)' }, 'x')).status).toBe(412);
    expect((await dav(u, 'PUT', '/home/doc.txt', { if: '(Not <DAV:no-lock>)' }, 'unlocked')).status).toBe(204);
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));
    // Lists are alternatives: one true list is enough (litmus complex_cond_put / fail_complex_cond_put).
    expect((await dav(u, 'PUT', '/home/doc.txt', { if: `(<${token}>) (<DAV:no-lock>)` }, 'either')).status).toBe(204);
    expect((await dav(u, 'PUT', '/home/doc.txt', { if: `(<${token}x>) (<DAV:no-lock>)` }, 'neither')).status).toBe(412);
    // The token submitted in a list that is false still counts as submitted: (Not <token>) is false, the ETag list true.
    const etag = String((await dav(u, 'HEAD', '/home/doc.txt')).headers.etag);
    expect((await dav(u, 'PUT', '/home/doc.txt', { if: `(Not <${token}>) ([${etag}])` }, 'etag')).status).toBe(204);
  });

  it('accepts an If header of 256 KiB listing hundreds of tokens on PUT (davfs2)', async () => {
    const u = await userWithFiles();
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));
    const lists: string[] = [];
    let size = 0;
    for (let i = 0; size < 256 * 1024; i++) {
      const list = `<${f.davUrl}/home/dir/file-${i}.txt> (<opaquelocktoken:${String(i).padStart(8, '0')}-0000-4000-8000-000000000000>)`;
      lists.push(list);
      size += list.length + 1;
    }
    lists.push(`<${f.davUrl}/home/doc.txt> (<${token}>)`);
    const header = lists.join(' ');
    expect(header.length).toBeGreaterThanOrEqual(256 * 1024);
    const put = await dav(u, 'PUT', '/home/doc.txt', { if: header }, 'davfs2');
    expect(put.status).toBe(204);
    expect((await entryNamed(f.client, u.session, 'home', 'doc.txt')).sizeBytes).toBe(6);
  });

  it('shows the same lock through /home and through /favorites after starring the node', async () => {
    const u = await userWithFiles();
    await f.client.setStarred(u.session, nodeId(u.docId), true);
    const token = tokenOf(await lockFile(u, '/home/doc.txt', 'exclusive'));

    const viaFavorites = await lockFile(u, '/favorites/doc.txt', 'exclusive');
    expect(viaFavorites.status).toBe(423);
    expect(viaFavorites.text).toContain('<D:href>/home/doc.txt</D:href>');
    const discovery = await dav(u, 'PROPFIND', '/favorites/doc.txt', { depth: '0', 'content-type': 'application/xml' },
      '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>');
    expect(discovery.status).toBe(207);
    expect(discovery.text).toContain(token);

    const refreshed = await dav(u, 'LOCK', '/favorites/doc.txt', { if: `(<${token}>)`, timeout: 'Second-77' });
    expect(refreshed.status).toBe(200);
    expect(refreshed.text).toContain('<D:timeout>Second-77</D:timeout>');
    expect((await dav(u, 'UNLOCK', '/favorites/doc.txt', { 'lock-token': `<${token}>` })).status).toBe(204);
    expect((await lockFile(u, '/home/doc.txt', 'exclusive')).status).toBe(200);
  });

  it('refuses a body that is not a lockinfo (400) and an anonymous LOCK (401)', async () => {
    const u = await userWithFiles();
    expect((await dav(u, 'LOCK', '/home/doc.txt', {}, '<D:lockinfo xmlns:D="DAV:"><D:lockscope>')).status).toBe(400);
    expect((await dav(u, 'LOCK', '/home/doc.txt', {}, '<D:propfind xmlns:D="DAV:"/>')).status).toBe(400);
    const noScope = '<D:lockinfo xmlns:D="DAV:"><D:locktype><D:write/></D:locktype></D:lockinfo>';
    expect((await dav(u, 'LOCK', '/home/doc.txt', {}, noScope)).status).toBe(400);
    const anonymous = await dav(undefined, 'LOCK', '/home/doc.txt', {}, lockInfo('exclusive'));
    expect(anonymous.status).toBe(401);
    expect((await lockFile(u, '/home/doc.txt', 'exclusive')).status).toBe(200);
  });
});
