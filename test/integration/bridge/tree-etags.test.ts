/**
 * Issue 30, item 4, the bridge's side: a folder's getetag and oc:size move with any change below
 * it (docs/extensions.md "Tree versions and sizes"), at once, not after the listing cache's TTL:
 * for the bridge's own writes (PUT, MOVE between subtrees, DELETE), and, in-process, for a write
 * made through the store's REST API five folders down. The made-up `/` and `/groups/…` derive
 * theirs from their members'. Folders beside the change keep theirs.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { parseMultistatus } from '../../helpers/multistatus.js';
import { bridgeFixture, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const OC = 'http://owncloud.org/ns';
const PROPS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop><d:getetag/><oc:size/></d:prop></d:propfind>`;

let f: BridgeFixture;
let u: DavUser;

beforeAll(async () => {
  // A TTL far beyond the test: only invalidation can show a change.
  f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 600_000 } });
  u = await f.newDavUser();
  // Before the user's first request: the bridge learns a user's groups when it first lists them.
  const ga = groupAdmin(f.client, f.admin);
  const group = await ga.group('TreeTeam');
  await ga.member(group, u.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
});
afterAll(async () => {
  await f?.close();
});

interface Shown {
  etag: string;
  size: string | undefined;
}

/** getetag and oc:size of `path` (Depth 0). */
async function shown(path: string, user = u): Promise<Shown> {
  const res = await davRequest(f.davUrl, 'PROPFIND', path, { auth: user.auth, headers: { depth: '0', 'content-type': 'application/xml' }, body: PROPS });
  expect(res.status, `${path}: ${res.text}`).toBe(207);
  const [response] = parseMultistatus(res.text);
  const etag = response?.props.get('{DAV:}getetag');
  const size = response?.props.get(`{${OC}}size`);
  return { etag: etag?.text ?? '', size: size?.status === 200 ? size.text : undefined };
}

async function mkcols(...paths: string[]): Promise<void> {
  for (const path of paths) expect((await davRequest(f.davUrl, 'MKCOL', path, { auth: u.auth })).status, path).toBe(201);
}

/** `/home/<root>/a/b/c/d/e` and `/home/<root>/other`: the chain (`/` and `/home` first) and the folder beside. */
async function tree(root: string): Promise<{ chain: string[]; deepest: string; other: string }> {
  const chain = ['/', '/home/', `/home/${root}/`];
  for (const name of ['a', 'b', 'c', 'd', 'e']) chain.push(`${chain.at(-1) as string}${name}/`);
  await mkcols(...chain.slice(2), `/home/${root}/other/`);
  return { chain, deepest: chain.at(-1) as string, other: `/home/${root}/other/` };
}

/** Runs `change`; every path of `changed` shows a new getetag, every one of `kept` the same. */
async function expectEtags(changed: string[], kept: string[], change: () => Promise<unknown>, { listFirst = true } = {}): Promise<void> {
  const user = u;
  const before = new Map<string, string>();
  for (const path of [...changed, ...kept]) before.set(path, (await shown(path, user)).etag);
  // Listings of every level cached, as a sync client's last run leaves them (else only those the Depth 0 PROPFINDs walked).
  if (listFirst) for (const path of changed) await davRequest(f.davUrl, 'PROPFIND', path, { auth: user.auth, headers: { depth: '1' } });
  await change();
  for (const path of changed) expect((await shown(path, user)).etag, `${path} changed`).not.toBe(before.get(path));
  for (const path of kept) expect((await shown(path, user)).etag, `${path} kept`).toBe(before.get(path));
}

describe('folder ETags and oc:size that change when anything below changes', () => {
  it('a PUT five folders down changes getetag and oc:size of every folder up to / at once, not of the folder beside', async () => {
    const t = await tree('put');
    await expectEtags(t.chain, [t.other], async () => {
      expect((await davRequest(f.davUrl, 'PUT', `${t.deepest}f.txt`, { auth: u.auth, body: 'x'.repeat(1234) })).status).toBe(201);
    });
    expect((await shown(t.deepest)).size).toBe('1234');
    expect((await shown('/home/put/')).size).toBe('1234');
    expect((await shown('/home/put/other/')).size).toBe('0');
    // A new revision moves them again, by the difference.
    await expectEtags(t.chain, [t.other], async () => {
      expect((await davRequest(f.davUrl, 'PUT', `${t.deepest}f.txt`, { auth: u.auth, body: 'y'.repeat(34) })).status).toBe(204);
    });
    expect((await shown('/home/put/a/')).size).toBe('34');
  });

  it('a MOVE between subtrees changes both chains; a DELETE the chain it left', async () => {
    const t = await tree('mv');
    expect((await davRequest(f.davUrl, 'PUT', `${t.deepest}m.txt`, { auth: u.auth, body: 'z'.repeat(100) })).status).toBe(201);
    await expectEtags([...t.chain, t.other], ['/home/put/'], async () => {
      const moved = await davRequest(f.davUrl, 'MOVE', `${t.deepest}m.txt`, { auth: u.auth, headers: { destination: `${f.davUrl}${t.other}m.txt` } });
      expect(moved.status).toBe(201);
    });
    expect((await shown(t.other)).size).toBe('100');
    expect((await shown(t.deepest)).size).toBe('0');
    await expectEtags(['/', '/home/', '/home/mv/', t.other], [t.deepest], async () => {
      expect((await davRequest(f.davUrl, 'DELETE', `${t.other}m.txt`, { auth: u.auth })).status).toBe(204);
    });
    expect((await shown('/home/mv/')).size).toBe('0');
  });

  it.skipIf(TEST_TRANSPORT === 'http')('a write through the store’s REST API five folders down shows at once in / and /home (in-process)', async () => {
    const t = await tree('rest');
    const deepestId = (await f.client.listFolder(u.session, nodeId(await idOf('/home/rest/a/b/c/d/')))).find((e) => e.name === 'e')?.id as string;
    // The levels between were never listed by the bridge: the store names them.
    await expectEtags(['/', '/home/', '/home/rest/'], [t.other, '/home/put/'], () => f.client.upload(u.session, { folder: nodeId(deepestId), name: 'behind.bin' }, Readable.from([Buffer.alloc(777)]), 777), { listFirst: false });
    await expectEtags(t.chain, [t.other], () => f.client.upload(u.session, { folder: nodeId(deepestId), name: 'behind2.bin' }, Readable.from([Buffer.alloc(23)]), 23));
    expect((await shown('/home/rest/')).size).toBe('800');
  });

  it('/groups/ and /groups/<name>/ derive theirs from the group drive, and move with a write there', async () => {
    const base = '/groups/TreeTeam/home/';
    await mkcols(`${base}x/`, `${base}x/y/`);
    await expectEtags(['/', '/groups/', '/groups/TreeTeam/', base, `${base}x/`, `${base}x/y/`], ['/home/'], async () => {
      expect((await davRequest(f.davUrl, 'PUT', `${base}x/y/g.txt`, { auth: u.auth, body: 'g'.repeat(55) })).status).toBe(201);
    });
    expect((await shown(base)).size).toBe('55');
  });
});

/** The store id of a folder of the user's, by its path below /home. */
async function idOf(path: string): Promise<string> {
  let id = 'home';
  for (const name of path.split('/').filter((s) => s !== '').slice(1)) {
    const found = (await f.client.listFolder(u.session, nodeId(id))).find((e) => e.name === name);
    if (!found) throw new Error(`no ${name} in ${id}`);
    id = found.id;
  }
  return id;
}
