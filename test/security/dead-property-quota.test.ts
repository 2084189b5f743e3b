/**
 * Issue 14, finding 7: dead properties bypassed the quota. PROPPATCH stored up to 1 MiB per node
 * on any number of nodes; a user with a 1,000-byte quota grew bridge.sqlite by 21 MB (the
 * properties now live in the store's database under `npm start`). Now a node
 * carries at most `bridge.deadPropsMaxBytesPerNode` (64 KiB) and one owner's nodes together
 * `bridge.deadPropsMaxBytesPerOwner` (64 MiB; 1 MiB in this suite); past either, PROPPATCH
 * answers 207 with 507 Insufficient Storage for the properties set and stores nothing. Deleting
 * a node for good frees its bytes.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, multistatusOf } from '../helpers/dav-requests.js';
import { bridgeFixture, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';

const OWNER_CAP = 1024 * 1024;
const propertyUpdate = (value: string) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:blob>${value}</Z:blob></D:prop></D:set></D:propertyupdate>`;

describe('dead properties inside a budget (finding 7)', () => {
  let f: BridgeFixture;
  let user: DavUser;
  const { davAs } = bridgeRequests(() => f);
  const proppatch = (p: string, value: string, as = user) => davAs(as, 'PROPPATCH', p, { 'content-type': 'application/xml' }, propertyUpdate(value));
  /** The status each property got in a PROPPATCH answer. */
  const statusOf = (text: string) => /HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
  /**
   * Bytes of property XML where the bridge keeps them: the store's database for an in-process
   * bridge (SQLite or PostgreSQL, through its storage layer), its own bridge.sqlite over HTTP.
   */
  const storedBytes = async (): Promise<number> => {
    const query = 'SELECT coalesce(sum(octet_length(xml)), 0) AS n FROM dav_properties';
    if (TEST_TRANSPORT === 'local') return Number((await f.store.ctx.storage.sql.get<{ n: number }>(query))?.n);
    const db = new Database(path.join(f.store.config.dataDir, 'bridge.sqlite'), { readonly: true });
    try {
      return (db.prepare(query).get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { deadPropsMaxBytesPerOwner: OWNER_CAP } });
    user = await f.newDavUser({ quotaBytes: 1000 });
  });
  afterAll(async () => {
    await f.close();
  });

  it('refuses a property larger than the per-node limit with 507, storing nothing', async () => {
    expect((await davAs(user, 'PUT', '/home/one.txt', {}, '')).status).toBe(201);
    const res = await proppatch('/home/one.txt', 'x'.repeat(200 * 1024));
    const [response] = multistatusOf(res);
    expect(response).toBeDefined();
    expect(statusOf(res.text)).toBe('507');
    expect(await storedBytes()).toBe(0);
  });

  it('stops a user with a 1,000-byte quota at the per-owner limit over many nodes: 507, and the file stays bounded', async () => {
    const value = 'y'.repeat(60 * 1024);
    const statuses: string[] = [];
    for (let i = 0; i < 24; i++) {
      const name = `/home/n${i}.txt`;
      expect((await davAs(user, 'PUT', name, {}, '')).status).toBe(201);
      const res = await proppatch(name, value);
      expect(res.status).toBe(207);
      statuses.push(statusOf(res.text) ?? '?');
    }
    const granted = statuses.filter((s) => s === '200').length;
    expect(granted).toBe(Math.floor(OWNER_CAP / (60 * 1024 + 100)));
    expect(statuses.slice(granted).every((s) => s === '507')).toBe(true);
    expect(await storedBytes()).toBeLessThanOrEqual(OWNER_CAP);
    expect(await f.bridge.services.props.ownerBytes(user.uuid)).toBeLessThanOrEqual(OWNER_CAP);
    // Whatever is left of the budget is all any node gets: one byte more is refused.
    const left = OWNER_CAP - (await f.bridge.services.props.ownerBytes(user.uuid));
    expect(left).toBeLessThan(60 * 1024);
    expect(statusOf((await proppatch('/home/one.txt', 'w'.repeat(left + 1))).text)).toBe('507');
  });

  it('frees a node’s bytes when it is deleted for good, and the budget takes new properties again', async () => {
    const before = (await f.bridge.services.props.ownerBytes(user.uuid));
    expect((await davAs(user, 'DELETE', '/home/n0.txt')).status).toBe(204);
    // In the trash it still exists (a restore brings its properties back): still counted.
    expect(await f.bridge.services.props.ownerBytes(user.uuid)).toBe(before);
    expect((await davAs(user, 'PROPFIND', '/trash/', { depth: '1' })).status).toBe(207);
    expect((await davAs(user, 'DELETE', '/trash/n0.txt')).status).toBe(204);
    expect(await f.bridge.services.props.ownerBytes(user.uuid)).toBeLessThan(before - 60 * 1024);
    expect(statusOf((await proppatch('/home/n23.txt', 'z'.repeat(60 * 1024))).text)).toBe('200');
  });
});
