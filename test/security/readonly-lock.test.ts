/**
 * Issue 14, finding 4: a read-only group member locked the whole group drive. LOCK of
 * `/groups/<name>/` with Depth infinity and `Timeout: Infinite` was granted for a week and
 * blocked every writer; PROPPATCH on it succeeded too. Now LOCK needs `write` on what it names
 * (`bind`, write on the parent, for an unmapped URL), PROPPATCH needs write-properties (write on
 * the node), the root, the virtual collections and the derived views are never locked or
 * patched, and every granted timeout is capped by `bridge.lockMaxTimeoutSec` (3600 s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, EXCLUSIVE_LOCKINFO } from '../helpers/dav-requests.js';
import { groupAdmin } from '../helpers/groups.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';

const TEAM = 'Ops';
const TEAM_PATH = `/groups/${TEAM}`;
const PROPPATCH_BODY =
  '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:tag>mine</Z:tag></D:prop></D:set></D:propertyupdate>';
const LOCK_HEADERS = { 'content-type': 'application/xml', depth: 'infinity', timeout: 'Infinite' };

describe('locks and properties need the right to write (finding 4)', () => {
  let f: BridgeFixture;
  let writer: DavUser;
  let reader: DavUser;
  const { davAs } = bridgeRequests(() => f);

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 200 } });
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group(TEAM, { quotaBytes: 1_000_000 });
    [writer, reader] = await Promise.all([f.newDavUser(), f.newDavUser()]);
    await ga.member(team, writer.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
    expect((await davAs(writer, 'MKCOL', `${TEAM_PATH}/home/docs/`)).status).toBe(201);
    expect((await davAs(writer, 'PUT', `${TEAM_PATH}/home/docs/plan.txt`, {}, 'v1')).status).toBe(201);
  });
  afterAll(async () => {
    await f.close();
  });

  it('refuses a read-only member’s Depth infinity, Timeout Infinite LOCK of the group root and of its home, and the writer still writes', async () => {
    for (const path of [`${TEAM_PATH}/`, `${TEAM_PATH}/home/`, `${TEAM_PATH}/home/docs/`, `${TEAM_PATH}/home/docs/plan.txt`]) {
      const res = await davAs(reader, 'LOCK', path, LOCK_HEADERS, EXCLUSIVE_LOCKINFO);
      expect(res.status, path).toBe(403);
    }
    expect(await f.bridge.services.locks.count()).toBe(0);
    expect((await davAs(writer, 'PUT', `${TEAM_PATH}/home/docs/plan.txt`, {}, 'v2')).status).toBe(204);
    expect((await davAs(writer, 'PUT', `${TEAM_PATH}/home/new.txt`, {}, 'new')).status).toBe(201);
    expect((await davAs(reader, 'GET', `${TEAM_PATH}/home/docs/plan.txt`)).text).toBe('v2');
  });

  it('refuses a read-only member’s PROPPATCH on the group root, its home and its files, storing nothing', async () => {
    for (const path of [`${TEAM_PATH}/`, `${TEAM_PATH}/home/`, `${TEAM_PATH}/home/docs/plan.txt`]) {
      const res = await davAs(reader, 'PROPPATCH', path, { 'content-type': 'application/xml' }, PROPPATCH_BODY);
      expect(res.status, path).toBe(403);
    }
    const { props } = f.bridge.services;
    expect(await props.list(`group:${await groupIdOf()}`)).toEqual([]);
  });

  it('refuses a lock-null LOCK (an unmapped URL) under a read-only folder and creates nothing', async () => {
    const res = await davAs(reader, 'LOCK', `${TEAM_PATH}/home/docs/new.txt`, { 'content-type': 'application/xml', depth: '0' }, EXCLUSIVE_LOCKINFO);
    expect(res.status).toBe(403);
    expect((await davAs(writer, 'PROPFIND', `${TEAM_PATH}/home/docs/new.txt`, { depth: '0' })).status).toBe(404);
  });

  it('never locks or patches the root, the virtual collections or the derived views, whoever asks', async () => {
    const paths = ['/', '/groups/', `${TEAM_PATH}/`, '/webdrive/', '/favorites/', '/shared_with_you/', '/public_shares/', '/private_shares/', `${TEAM_PATH}/shared_with_you/`];
    for (const path of paths) {
      expect((await davAs(writer, 'LOCK', path, LOCK_HEADERS, EXCLUSIVE_LOCKINFO)).status, `LOCK ${path}`).toBe(403);
      expect((await davAs(writer, 'PROPPATCH', path, { 'content-type': 'application/xml' }, PROPPATCH_BODY)).status, `PROPPATCH ${path}`).toBe(403);
    }
    expect(await f.bridge.services.locks.count()).toBe(0);
  });

  it('grants a writer’s Timeout Infinite lock for the capped hour at most, and a refresh keeps it capped', async () => {
    const max = f.bridge.services.locks.maxTimeoutSec;
    expect(max).toBe(3600);
    const res = await davAs(writer, 'LOCK', `${TEAM_PATH}/home/docs/plan.txt`, { ...LOCK_HEADERS, depth: '0' }, EXCLUSIVE_LOCKINFO);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<D:timeout>Second-3600</D:timeout>');
    const token = String(res.headers['lock-token']).replace(/[<>]/g, '');
    const refreshed = await davAs(writer, 'LOCK', `${TEAM_PATH}/home/docs/plan.txt`, { if: `(<${token}>)`, timeout: 'Second-999999' });
    expect(refreshed.status).toBe(200);
    expect(refreshed.text).toContain('<D:timeout>Second-3600</D:timeout>');
    // A reader cannot refresh (nor hold) a lock: the token is the writer's anyway, and write is needed.
    expect((await davAs(reader, 'LOCK', `${TEAM_PATH}/home/docs/plan.txt`, { if: `(<${token}>)` })).status).toBe(403);
    expect((await davAs(writer, 'UNLOCK', `${TEAM_PATH}/home/docs/plan.txt`, { 'lock-token': `<${token}>` })).status).toBe(204);
  });

  async function groupIdOf(): Promise<string> {
    const groups = await f.client.listGroups(writer.session);
    return groups.find((g) => g.name === TEAM)?.id ?? '';
  }
});
