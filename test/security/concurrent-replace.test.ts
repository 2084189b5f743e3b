/**
 * Review of issue 14 (a refusal changes nothing; parallel requests): the store's DELETE of a
 * node already in trash deletes it for good, and the bridge acted on what it had stated before a
 * parallel request ran. Three DELETEs of one file at once erased it from the trash; four MOVEs
 * (or COPYs) with Overwrite onto one destination at once erased the old destination from the
 * trash, answered 409/404, and left a source's content under a hidden staging name. Now a
 * removal that finds the node in trash already is a 404, and transfers onto one name queue up.
 * Since issue 22 (item 3) a file MOVEd or COPYed onto a file becomes its next revision: four at
 * once make four revisions of the one node, the first content still revision 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type NodeEntry, type NodeId } from '../../src/store-client/index.js';
import { STAGING_PREFIX } from '../../src/bridge/store-tree.js';
import { bridgeRequests } from '../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';

describe('parallel DELETE, MOVE and COPY never erase what they replace', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  const { davAs } = bridgeRequests(() => f);
  const entries = (folder: string): Promise<NodeEntry[]> => f.client.listFolder(alice.session, nodeId(folder));
  const names = async (folder: string): Promise<string[]> => (await entries(folder)).map((e) => e.name).sort();

  async function put(path: string, body: string): Promise<void> {
    expect([201, 204]).toContain((await davAs(alice, 'PUT', path, {}, body)).status);
  }
  const trashed = async (name: RegExp): Promise<string[]> => (await names('trash')).filter((n) => name.test(n));

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 200 } });
    alice = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  it('three DELETEs of one file at once: one 204, the others 404, and the file waits in the trash', async () => {
    await put('/home/x.txt', 'keep me recoverable');
    expect((await davAs(alice, 'PROPFIND', '/home/', { depth: '1' })).status).toBe(207);
    const statuses = (await Promise.all([1, 2, 3].map(() => davAs(alice, 'DELETE', '/home/x.txt')))).map((r) => r.status).sort();
    expect(statuses).toEqual([204, 404, 404]);
    expect(await trashed(/^x/)).toEqual(['x.txt']);
  });

  for (const verb of ['MOVE', 'COPY'] as const) {
    it(`four ${verb}s with Overwrite onto one file at once: each adds a revision of the same node, every earlier content stays one, nothing is hidden`, async () => {
      const tag = verb.toLowerCase();
      await put(`/home/${tag}-dest.txt`, 'ORIGINAL');
      const dest = (await entries('home')).find((e) => e.name === `${tag}-dest.txt`);
      for (const n of ['a', 'b', 'c', 'd']) await put(`/home/${tag}-src-${n}.txt`, `content ${n}`);
      const answers = await Promise.all(
        ['a', 'b', 'c', 'd'].map((n) => davAs(alice, verb, `/home/${tag}-src-${n}.txt`, { destination: `${f.davUrl}/home/${tag}-dest.txt`, overwrite: 'T' })),
      );
      expect(answers.map((r) => r.status)).toEqual([204, 204, 204, 204]);
      const home = await names('home');
      expect(home.filter((n) => n.startsWith(STAGING_PREFIX))).toEqual([]);
      const now = (await entries('home')).find((e) => e.name === `${tag}-dest.txt`);
      expect(now?.id).toBe(dest?.id);
      expect(now?.revision).toBe(5);
      expect(await trashed(new RegExp(`^${tag}-`))).toEqual([]);
      expect(home.filter((n) => n.startsWith(`${tag}-src-`))).toEqual(verb === 'MOVE' ? [] : ['a', 'b', 'c', 'd'].map((n) => `${tag}-src-${n}.txt`));
      const contents = await Promise.all(
        [1, 2, 3, 4, 5].map(async (version) => Buffer.concat(await (await f.client.download(alice.session, now?.id as NodeId, `${tag}-dest.txt`, { version })).body.toArray()).toString()),
      );
      expect(contents[0]).toBe('ORIGINAL');
      expect(contents.slice(1).sort()).toEqual(['content a', 'content b', 'content c', 'content d']);
    });
  }
});
