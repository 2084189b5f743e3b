/**
 * Sharing through the bridge (issue 8): an accepted share copy appears in the recipient's
 * `/incoming/` with the same bytes; a private share appears in `/shared_with_you/`, and what it
 * grants becomes DAV statuses: read-only means 403 to PUT, MKCOL, DELETE, MOVE, PROPPATCH and
 * LOCK (the last two never reach the store: the bridge asks myaccess of the shared node),
 * writable means writes go into the sharer's folder; the shared node itself cannot be deleted
 * by the recipient. The sharer's `/public_shares/` and `/private_shares/` list what they shared.
 * Shares are made through the store's API as users would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { bridgeRequests, EXCLUSIVE_LOCKINFO, multistatusOf } from '../../helpers/dav-requests.js';
import { davProp } from '../../helpers/multistatus.js';
import { createFolder, uploadFile } from '../../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const PROPPATCH_BODY =
  '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:tag>x</Z:tag></D:prop></D:set></D:propertyupdate>';

describe('shares through the bridge', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  let reports: string;
  let drafts: string;
  const { davAs } = bridgeRequests(() => f);
  const dav = (as: DavUser, method: string, path: string, headers: Record<string, string> = {}, body?: string) => davAs(as, method, path, headers, body);

  async function api(as: DavUser, method: 'GET' | 'POST' | 'PUT', path: string, json?: unknown): Promise<Record<string, unknown>> {
    const res = await f.client.http.requestRaw({ method, path, token: as.session.token, ...(json === undefined ? {} : { json }) });
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    return res.body as Record<string, unknown>;
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    alice = await f.newDavUser();
    bob = await f.newDavUser();
    reports = await createFolder(f.client, alice.session, 'home', 'Reports');
    await uploadFile(f.client, alice.session, reports, 'q3.txt', 'third quarter');
    drafts = await createFolder(f.client, alice.session, 'home', 'Drafts');
    await uploadFile(f.client, alice.session, drafts, 'draft.txt', 'first draft');
    await api(alice, 'POST', `/api/nodes/${reports}/shares`, { type: 'private', recipients: [bob.uuid] });
    await api(alice, 'POST', `/api/nodes/${drafts}/shares`, { type: 'private', recipients: [bob.uuid], writable: true });
  });
  afterAll(async () => {
    await f.close();
  });

  it('puts an accepted share copy in the recipient’s /incoming/ with the same bytes', async () => {
    const file = await uploadFile(f.client, alice.session, 'home', 'gift.txt', 'a copy for you');
    await api(alice, 'POST', `/api/nodes/${file}`, { share_copy_with: [bob.uuid] });
    const pending = (await api(bob, 'GET', '/api/user/pending_incoming')).data as Array<{ uuid: string; name: string }>;
    const offer = pending.find((p) => p.name === 'gift.txt');
    expect(offer).toBeDefined();
    await api(bob, 'PUT', '/api/user/pending_incoming', { uuid: offer!.uuid, action: 'accept' });
    const listed = multistatusOf(await dav(bob, 'PROPFIND', '/incoming/', { depth: '1' })).map((r) => r.href);
    expect(listed).toContain('/incoming/gift.txt');
    expect((await dav(bob, 'GET', '/incoming/gift.txt')).text).toBe('a copy for you');
    // The copy is bob's own: he may change it, and alice's stays as it was.
    expect((await dav(bob, 'PUT', '/incoming/gift.txt', {}, 'mine now')).status).toBe(204);
    expect((await dav(alice, 'GET', '/home/gift.txt')).text).toBe('a copy for you');
  });

  it('shows ownCloud permission letters: S for what reached the caller through a share, never R', async () => {
    const body = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:oc="http://owncloud.org/ns"><D:prop><oc:permissions/></D:prop></D:propfind>';
    const letters = async (as: DavUser, path: string) => /<oc:permissions>([A-Z]*)<\/oc:permissions>/.exec((await dav(as, 'PROPFIND', path, { depth: '0' }, body)).text)?.[1];
    expect(await letters(bob, '/shared_with_you/Reports/q3.txt')).toBe('S');
    expect(await letters(bob, '/shared_with_you/Drafts/draft.txt')).toMatch(/^S[^R]*W$/);
    expect(await letters(alice, '/home/Reports/q3.txt')).toBe('RDNVW');
  });

  it('shows a private share in /shared_with_you/ and serves its files', async () => {
    const listed = multistatusOf(await dav(bob, 'PROPFIND', '/shared_with_you/', { depth: '1' })).map((r) => r.href).sort();
    expect(listed).toEqual(['/shared_with_you/', '/shared_with_you/Drafts/', '/shared_with_you/Reports/']);
    const inside = multistatusOf(await dav(bob, 'PROPFIND', '/shared_with_you/Reports/', { depth: '1' })).map((r) => r.href);
    expect(inside).toEqual(['/shared_with_you/Reports/', '/shared_with_you/Reports/q3.txt']);
    expect((await dav(bob, 'GET', '/shared_with_you/Reports/q3.txt')).text).toBe('third quarter');
  });

  it('answers 403 to every write into a read-only share, the bridge-local ones included, and changes nothing', async () => {
    const refused: Array<[string, string, Record<string, string>, string?]> = [
      ['PUT', '/shared_with_you/Reports/new.txt', {}, 'x'],
      ['PUT', '/shared_with_you/Reports/q3.txt', {}, 'overwrite'],
      ['MKCOL', '/shared_with_you/Reports/sub/', {}],
      ['DELETE', '/shared_with_you/Reports/q3.txt', {}],
      ['MOVE', '/shared_with_you/Reports/q3.txt', { destination: '/home/taken.txt' }],
      ['PROPPATCH', '/shared_with_you/Reports/q3.txt', { 'content-type': 'application/xml' }, PROPPATCH_BODY],
      ['LOCK', '/shared_with_you/Reports/q3.txt', { 'content-type': 'application/xml' }, EXCLUSIVE_LOCKINFO],
    ];
    for (const [method, path, headers, body] of refused) expect((await dav(bob, method, path, headers, body)).status, `${method} ${path}`).toBe(403);
    expect((await dav(alice, 'GET', '/home/Reports/q3.txt')).text).toBe('third quarter');
    expect((await f.client.listFolder(alice.session, nodeId(reports))).map((e) => e.name)).toEqual(['q3.txt']);
    const [props] = multistatusOf(
      await dav(bob, 'PROPFIND', '/shared_with_you/Reports/q3.txt', { depth: '0' }, '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:current-user-privilege-set/></D:prop></D:propfind>'),
    );
    expect(davProp(props!, 'current-user-privilege-set').node.children.map((p) => p.children[0]?.local).sort()).toEqual(['read', 'read-current-user-privilege-set']);
  });

  it('lets the recipient of a writable share add, change and delete inside it, into the sharer’s folder, but not delete the shared folder', async () => {
    expect((await dav(bob, 'PUT', '/shared_with_you/Drafts/bob.txt', {}, 'from bob')).status).toBe(201);
    expect((await dav(bob, 'PUT', '/shared_with_you/Drafts/draft.txt', {}, 'second draft')).status).toBe(204);
    expect((await dav(alice, 'GET', '/home/Drafts/bob.txt')).text).toBe('from bob');
    expect((await dav(alice, 'GET', '/home/Drafts/draft.txt')).text).toBe('second draft');
    expect((await dav(bob, 'DELETE', '/shared_with_you/Drafts/bob.txt')).status).toBe(204);
    expect((await dav(bob, 'DELETE', '/shared_with_you/Drafts/')).status).toBe(403);
    expect((await f.client.listFolder(alice.session, nodeId(drafts))).map((e) => e.name)).toEqual(['draft.txt']);
  });

  it('lists what the sharer shared in /public_shares/ and /private_shares/', async () => {
    const file = await uploadFile(f.client, alice.session, 'home', 'flyer.pdf', 'for everyone');
    await api(alice, 'POST', `/api/nodes/${file}/shares`, { type: 'public' });
    expect(multistatusOf(await dav(alice, 'PROPFIND', '/public_shares/', { depth: '1' })).map((r) => r.href)).toEqual(['/public_shares/', '/public_shares/flyer.pdf']);
    expect(multistatusOf(await dav(alice, 'PROPFIND', '/private_shares/', { depth: '1' })).map((r) => r.href).sort()).toEqual([
      '/private_shares/',
      '/private_shares/Drafts/',
      '/private_shares/Reports/',
    ]);
    expect((await dav(alice, 'GET', '/public_shares/flyer.pdf')).text).toBe('for everyone');
  });

  it('shows nobody else any of it', async () => {
    const carol = await f.newDavUser();
    for (const top of ['/shared_with_you/', '/incoming/', '/public_shares/', '/private_shares/']) {
      expect(multistatusOf(await dav(carol, 'PROPFIND', top, { depth: '1' })).map((r) => r.href)).toEqual([top]);
    }
    expect((await dav(carol, 'GET', '/shared_with_you/Reports/q3.txt')).status).toBe(404);
  });
});
