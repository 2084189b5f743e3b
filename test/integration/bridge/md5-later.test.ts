/**
 * MD5 after the commit (issue 32, ops/md5-later.ts): a large PUT is answered once SHA-1 and the
 * content address are known; its MD5 is recorded just after, and until then `oc:checksums` and
 * the API's details list SHA-1 alone (never a wrong MD5). A client that sends an MD5 gets it
 * verified before the commit as before. An MD5 not recorded when the store stops is finished by
 * the checksum backfill after the restart. The threshold is lowered to 1 MiB here so 2 MiB bodies
 * take the path a 1 GiB one takes by default.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type NodeId } from '../../../src/store-client/index.js';
import { blobsWithoutChecksums } from '../../../src/store/ops/checksum-backfill.js';
import { bridgeRequests } from '../../helpers/dav-requests.js';
import { createSeeder } from '../../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { startTestStore } from '../../helpers/start-store.js';
import { MiB, patternBytes } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const PROPFIND_SUMS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:checksums/></d:prop></d:propfind>`;
const LATER_FLAGS = { 'store.checksumMd5LaterBytes': MiB, 'store.checksumBackfillPerSec': 0 };

const sums = (bytes: Buffer) => ({ sha1: createHash('sha1').update(bytes).digest('hex'), md5: createHash('md5').update(bytes).digest('hex') });
/** The one oc:checksum value of a Depth 0 PROPFIND answer. */
const listed = (text: string) => /<oc:checksum[^>]*>([^<]*)<\/oc:checksum>/.exec(text)?.[1];

function davSetup(fixture: () => BridgeFixture, user: () => DavUser) {
  const { dav, entryIn } = bridgeRequests(fixture, user);
  const checksumsProp = async (name: string) => {
    const answer = await dav('PROPFIND', `/home/${name}`, { depth: '0', 'content-type': 'application/xml' }, PROPFIND_SUMS);
    expect(answer.status).toBe(207);
    return listed(answer.text);
  };
  const details = async (name: string) => fixture().client.details(user().session, (await entryIn('home', name))?.id as NodeId);
  return { dav, entryIn, checksumsProp, details };
}

describe('MD5 after the commit, in the background', () => {
  let f: BridgeFixture;
  let user: DavUser;
  beforeAll(async () => {
    // The recorded MD5 is no change of the tree: the bridge shows it once its listing cache (2 s by
    // default) asks the store again; here it always asks.
    f = await bridgeFixture({ flags: LATER_FLAGS, bridgeFlags: { cacheTtlMs: 0 } });
    user = await f.newDavUser();
  });
  afterAll(() => f.close());
  const { dav, checksumsProp, details } = davSetup(() => f, () => user);

  it('records the MD5 of a large PUT just after answering it: oc:checksums and the details list both, equal to the bytes', async () => {
    const bytes = patternBytes(1, 2 * MiB);
    expect((await dav('PUT', '/home/big.bin', {}, bytes)).status).toBe(201);
    await f.store.ctx.md5Later?.settled();
    const { sha1, md5 } = sums(bytes);
    expect(await checksumsProp('big.bin')).toBe(`SHA1:${sha1} MD5:${md5}`);
    expect((await details('big.bin')).checksums).toEqual({ sha1, md5 });
    expect(await blobsWithoutChecksums(f.store.ctx.storage.sql)).toBe(0);
  });
});

describe('MD5 after the commit, left to the backfill', () => {
  const own = makeTmpDir('driveway-md5-later-');
  let f: BridgeFixture;
  let user: DavUser;
  beforeAll(async () => {
    // No background MD5 at all: every large upload's MD5 is the backfill's (off until the restart).
    f = await bridgeFixture({ dataDir: own.dir, flags: { ...LATER_FLAGS, 'store.checksumMd5LaterMax': 0 } });
    user = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
    own.remove();
  });
  const { dav, entryIn, checksumsProp, details } = davSetup(() => f, () => user);
  const bytes = patternBytes(2, 2 * MiB);
  const { sha1, md5 } = sums(bytes);

  it('lists SHA-1 alone while the MD5 is not known, in oc:checksums and in the details', async () => {
    expect((await dav('PUT', '/home/pending.bin', {}, bytes)).status).toBe(201);
    expect(await checksumsProp('pending.bin')).toBe(`SHA1:${sha1}`);
    expect((await details('pending.bin')).checksums).toEqual({ sha1 });
    expect((await dav('GET', '/home/pending.bin')).headers['oc-checksum']).toBe(`SHA1:${sha1}`);
  });

  it('refuses a large PUT whose claimed MD5 contradicts its bytes with 400, writing nothing', async () => {
    const before = await blobsWithoutChecksums(f.store.ctx.storage.sql);
    const answer = await dav('PUT', '/home/claimed.bin', { 'oc-checksum': `MD5:${'0'.repeat(32)}` }, bytes.subarray(0, MiB + 7));
    expect(answer.status).toBe(400);
    expect(await entryIn('home', 'claimed.bin')).toBeUndefined();
    expect(await blobsWithoutChecksums(f.store.ctx.storage.sql)).toBe(before);
  });

  it('computes a claimed MD5 before the commit: listed at once with SHA-1', async () => {
    const body = patternBytes(3, 2 * MiB);
    const expected = sums(body);
    expect((await dav('PUT', '/home/claimed.bin', { 'oc-checksum': `MD5:${expected.md5}` }, body)).status).toBe(201);
    expect(await checksumsProp('claimed.bin')).toBe(`SHA1:${expected.sha1} MD5:${expected.md5}`);
  });

  it('gets the missing MD5 from the checksum backfill after a restart; the details publish it as before', async () => {
    const id = (await entryIn('home', 'pending.bin'))?.id as NodeId;
    await f.close();
    const store = await startTestStore({ dataDir: own.dir, flags: { ...LATER_FLAGS, 'store.checksumBackfillPerSec': 50 } });
    try {
      for (let i = 0; i < 100 && (await blobsWithoutChecksums(store.ctx.storage.sql)) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await blobsWithoutChecksums(store.ctx.storage.sql)).toBe(0);
      const { client } = await createSeeder(store);
      const session = await client.login(user.email, user.password);
      expect((await client.details(session, id)).checksums).toEqual({ sha1, md5 });
      expect((await client.listFolder(session, nodeId('home'))).find((e) => e.name === 'pending.bin')?.checksums).toEqual({ sha1, md5 });
    } finally {
      await store.close();
      // afterAll closes the fixture again: harmless once closed.
      f = { ...f, close: async () => undefined };
    }
  });
});
