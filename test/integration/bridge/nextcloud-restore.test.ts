/**
 * Issue 23, items 3 and 4: Nextcloud's restore endpoints as Cyberduck and Mountain Duck use them
 * (nextcloud-restore.ts): PROPFIND `/remote.php/dav/versions/<user>/versions/<fileid>` lists the
 * file's revisions, GET serves one, MOVE to `.../versions/<user>/restore/target` makes it the
 * newest (201); `/remote.php/dav/trashbin/<user>/trash/` lists the trash with the nc:trashbin-*
 * properties, MOVE of an entry to `.../trashbin/<user>/restore/<name>` puts it back (201),
 * DELETE there deletes for good. Another user's space, or a file id of theirs, is 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import type { NodeId } from '../../../src/store-client/index.js';

const NC = 'http://nextcloud.org/ns';
let f: BridgeFixture;
let alice: DavUser;
let bob: DavUser;
const { dav, put, storeEntries } = bridgeRequests(() => f, () => alice);

beforeAll(async () => {
  f = await bridgeFixture();
  alice = await f.newDavUser();
  bob = await f.newDavUser();
  expect((await dav('MKCOL', '/home/docs/')).status).toBe(201);
  await put('/home/docs/plan.txt', 'plan one');
  await put('/home/docs/plan.txt', 'plan two');
});
afterAll(async () => {
  await f?.close();
});

async function planId(): Promise<NodeId> {
  const docs = (await storeEntries('home')).find((e) => e.name === 'docs');
  const plan = (await storeEntries(docs!.id)).find((e) => e.name === 'plan.txt');
  return plan!.id;
}

describe('Nextcloud endpoints', () => {
  it('versions: PROPFIND lists revisions, GET serves one, MOVE to restore/target makes it the newest', async () => {
    const base = `/remote.php/dav/versions/${encodeURIComponent(alice.email)}`;
    const id = await planId();
    const responses = multistatusOf(await dav('PROPFIND', `${base}/versions/${id}`, { depth: '1' }));
    expect(responses[0]?.href).toBe(`${base}/versions/${id}/`);
    const children = responses.slice(1);
    expect(children).toHaveLength(2);
    for (const child of children) expect(child.href.startsWith(`${base}/versions/${id}/`)).toBe(true);
    const first = children[0]!.href;
    const got = await dav('GET', first);
    expect(got.status).toBe(200);
    expect(got.text).toBe('plan one');
    const moved = await dav('MOVE', first, { destination: `${f.davUrl}${base}/restore/target` });
    expect(moved.status, moved.text).toBe(201);
    expect((await dav('GET', '/home/docs/plan.txt')).text).toBe('plan one');
    expect((await f.client.listRevisions(alice.session, id)).map((r) => r.revision)).toEqual([1, 2, 3]);
    // Anything but a restore is refused; writes 405.
    expect((await dav('MOVE', first, { destination: `${f.davUrl}/home/docs/x.txt` })).status).toBe(403);
    expect((await dav('PUT', `${base}/versions/${id}/new`, {}, 'x')).status).toBe(405);
    // OPTIONS answers as for the drive (a client's probe before anything else).
    const probe = await dav('OPTIONS', `${base}/versions/${id}`);
    expect(probe.status).toBe(200);
    expect(String(probe.headers.dav)).toMatch(/\b1\b/);
  });

  it("versions: another user's space or file is 404", async () => {
    const id = await planId();
    expect((await dav('PROPFIND', `/remote.php/dav/versions/${encodeURIComponent(alice.email)}/versions/${id}`, { depth: '1' }, undefined, bob)).status).toBe(404);
    expect((await dav('PROPFIND', `/remote.php/dav/versions/${encodeURIComponent(bob.email)}/versions/${id}`, { depth: '1' }, undefined, bob)).status).toBe(404);
    expect((await dav('PROPFIND', `/remote.php/dav/versions/${encodeURIComponent(alice.email)}/versions/not-a-file`, { depth: '0' })).status).toBe(404);
  });

  it('trashbin: lists the trash with nc:trashbin-*, MOVE to restore/<name> puts an entry back, DELETE deletes for good', async () => {
    const base = `/remote.php/dav/trashbin/${encodeURIComponent(alice.email)}`;
    await put('/home/docs/gone.txt', 'gone');
    await put('/home/docs/purge.txt', 'purge');
    expect((await dav('DELETE', '/home/docs/gone.txt')).status).toBe(204);
    expect((await dav('DELETE', '/home/docs/purge.txt')).status).toBe(204);
    const responses = multistatusOf(await dav('PROPFIND', `${base}/trash/`, { depth: '1' }));
    const gone = responses.find((r) => r.href === `${base}/trash/gone.txt`);
    expect(gone?.props.get(`{${NC}}trashbin-original-location`)?.text).toBe('home/docs/gone.txt');
    expect(gone?.props.get(`{${NC}}trashbin-filename`)?.text).toBe('gone.txt');
    expect(Number(gone?.props.get(`{${NC}}trashbin-deletion-time`)?.text)).toBeGreaterThan(1_700_000_000);
    const restored = await dav('MOVE', `${base}/trash/gone.txt`, { destination: `${f.davUrl}${base}/restore/gone.txt` });
    expect(restored.status, restored.text).toBe(201);
    expect((await dav('GET', '/home/docs/gone.txt')).text).toBe('gone');
    expect((await dav('DELETE', `${base}/trash/purge.txt`)).status).toBe(204);
    expect((await storeEntries('trash')).map((e) => e.name)).toEqual([]);
    // Bob cannot reach alice's trash bin.
    expect((await dav('PROPFIND', `${base}/trash/`, { depth: '1' }, undefined, bob)).status).toBe(404);
  });
});
