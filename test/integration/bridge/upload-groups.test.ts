/**
 * Resumable uploads into group drives (issue 23), by each front door: Nextcloud chunking v1 (the
 * target named only by the final MOVE) and v2 (named by Destination from the MKCOL on), and tus
 * (named by the POST). A member with `write` lands a file, counted as one revision; a member
 * without it is refused when the upload starts where the protocol names the target there (v2
 * MKCOL, tus POST: 403, no session kept), else at the MOVE (v1: 403, the drive unchanged); an
 * upload over the group's quota is refused at its start (507), and what one member's upload
 * holds of it counts against the others' (issue 29); a group the caller is not in,
 * here one of another organization, is no place to upload to (the same answers as a PUT there:
 * nothing reveals it). Another user's upload folder is nextcloud-chunking.test.ts's and
 * tus.test.ts's. Runs on both transports and on PostgreSQL (integration-pg-bridge).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests } from '../../helpers/dav-requests.js';
import { groupAdmin, readGroupUsage } from '../../helpers/groups.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { patternBytes } from '../../helpers/stream-helpers.js';
import type { NodeId } from '../../../src/store-client/index.js';

const TEAM = 'Upload Crew';
const OTHER_TEAM = 'Elsewhere Crew';
const ALL = ['read', 'write', 'delete', 'download'];
const TUS = { 'tus-resumable': '1.0.0' };
const PATCH_TYPE = { 'content-type': 'application/offset+octet-stream' };
const GROUP_QUOTA = 1_000_000;

let f: BridgeFixture;
let team: string;
let writer: DavUser;
let second: DavUser;
let reader: DavUser;
const { dav } = bridgeRequests(() => f, () => writer);

beforeAll(async () => {
  f = await bridgeFixture();
  const ga = groupAdmin(f.client, f.admin);
  team = await ga.group(TEAM, { quotaBytes: GROUP_QUOTA });
  await ga.organization('elsewhere');
  await ga.group(OTHER_TEAM, { orgId: 'elsewhere' });
  [writer, second, reader] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
  await ga.member(team, writer.uuid, { node_permissions: ALL });
  await ga.member(team, second.uuid, { node_permissions: ALL });
  await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
});
afterAll(async () => {
  await f?.close();
});

const files = (who: DavUser): string => `/remote.php/dav/files/${encodeURIComponent(who.email)}`;
const uploads = (who: DavUser): string => `/remote.php/dav/uploads/${encodeURIComponent(who.email)}`;
const groupPath = (name: string): string => `/groups/${encodeURIComponent(name)}/home`;
const metadata = (name: string): string => `filename ${Buffer.from(name).toString('base64')}`;

async function groupFiles(): Promise<Array<[string, number]>> {
  return (await f.client.listFolder(writer.session, `home:${team}` as NodeId)).map((e) => [e.name, e.sizeBytes]);
}

async function revisionsOf(name: string): Promise<number> {
  const entry = (await f.client.listFolder(writer.session, `home:${team}` as NodeId)).find((e) => e.name === name);
  if (!entry) throw new Error(`${name} is not in the group drive`);
  return (await f.client.listRevisions(writer.session, entry.id)).length;
}

/** v1 chunks, as rclone names them (`%015d-%015d`, first and last byte). */
async function putV1(who: DavUser, id: string, content: Buffer, chunkBytes: number): Promise<void> {
  for (let start = 0; start < content.length; start += chunkBytes) {
    const chunk = content.subarray(start, start + chunkBytes);
    const name = `${String(start).padStart(15, '0')}-${String(start + chunk.length - 1).padStart(15, '0')}`;
    expect((await dav('PUT', `${uploads(who)}/${id}/${name}`, {}, chunk, who)).status).toBe(201);
  }
}

describe('resumable uploads into a group drive', () => {
  it('a member with write lands a file by v1, v2 and tus, each one revision', async () => {
    const content = patternBytes(3, 70_000);
    // v1: the target comes with the MOVE.
    expect((await dav('MKCOL', `${uploads(writer)}/g-v1`)).status).toBe(201);
    await putV1(writer, 'g-v1', content, 30_000);
    expect((await dav('MOVE', `${uploads(writer)}/g-v1/.file`, { destination: `${f.davUrl}${files(writer)}${groupPath(TEAM)}/v1.bin` })).status).toBe(201);
    // v2: Destination and OC-Total-Length from the MKCOL on.
    const v2 = { destination: `${f.davUrl}${files(writer)}${groupPath(TEAM)}/v2.bin`, 'oc-total-length': String(content.length) };
    expect((await dav('MKCOL', `${uploads(writer)}/g-v2`, v2)).status).toBe(201);
    expect((await dav('PUT', `${uploads(writer)}/g-v2/2`, v2, content.subarray(40_000))).status).toBe(201);
    expect((await dav('PUT', `${uploads(writer)}/g-v2/1`, v2, content.subarray(0, 40_000))).status).toBe(201);
    expect((await dav('MOVE', `${uploads(writer)}/g-v2/.file`, v2)).status).toBe(201);
    // tus: POST to the group's folder, then PATCHes.
    const created = await dav('POST', `${groupPath(TEAM)}/`, { ...TUS, 'upload-length': String(content.length), 'upload-metadata': metadata('tus.bin') });
    expect(created.status).toBe(201);
    const location = String(created.headers.location);
    expect((await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '0' }, content.subarray(0, 50_000))).status).toBe(204);
    expect((await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '50000' }, content.subarray(50_000))).status).toBe(204);
    for (const name of ['v1.bin', 'v2.bin', 'tus.bin']) {
      expect((await dav('GET', `${groupPath(TEAM)}/${name}`, {}, undefined, reader)).body.equals(content), name).toBe(true);
      expect(await revisionsOf(name)).toBe(1);
    }
    expect(await f.bridge.services.uploads.list(writer.uuid)).toEqual([]);
  });

  it('a member without write is refused when the upload starts (v2, tus: 403, no session), or at the MOVE (v1)', async () => {
    const before = await groupFiles();
    const v2 = { destination: `${f.davUrl}${files(reader)}${groupPath(TEAM)}/nope.bin`, 'oc-total-length': '10' };
    expect((await dav('MKCOL', `${uploads(reader)}/r-v2`, v2, undefined, reader)).status).toBe(403);
    expect((await dav('PUT', `${uploads(reader)}/r-v2/1`, v2, '0123456789', reader)).status).toBe(404);
    // Over a file that is there too: the write permission is the file's.
    const over = { ...v2, destination: `${f.davUrl}${files(reader)}${groupPath(TEAM)}/v1.bin` };
    expect((await dav('MKCOL', `${uploads(reader)}/r-v2-over`, over, undefined, reader)).status).toBe(403);
    const tus = await dav('POST', `${groupPath(TEAM)}/`, { ...TUS, 'upload-length': '10', 'upload-metadata': metadata('nope.bin') }, undefined, reader);
    expect(tus.status).toBe(403);
    expect(tus.headers.location).toBeUndefined();
    expect(await f.bridge.services.uploads.list(reader.uuid)).toEqual([]);
    // v1 names no target before the MOVE: that is where it is refused, the drive unchanged.
    expect((await dav('MKCOL', `${uploads(reader)}/r-v1`, {}, undefined, reader)).status).toBe(201);
    await putV1(reader, 'r-v1', Buffer.from('0123456789'), 10);
    expect((await dav('MOVE', `${uploads(reader)}/r-v1/.file`, { destination: `${f.davUrl}${files(reader)}${groupPath(TEAM)}/nope.bin` }, undefined, reader)).status).toBe(403);
    expect((await dav('DELETE', `${uploads(reader)}/r-v1`, {}, undefined, reader)).status).toBe(204);
    expect(await groupFiles()).toEqual(before);
  });

  it("an upload over the group's quota is refused at its start (507), no session kept", async () => {
    const size = String(GROUP_QUOTA + 1);
    const v2 = { destination: `${f.davUrl}${files(writer)}${groupPath(TEAM)}/huge.bin`, 'oc-total-length': size };
    expect((await dav('MKCOL', `${uploads(writer)}/g-huge`, v2)).status).toBe(507);
    expect((await dav('POST', `${groupPath(TEAM)}/`, { ...TUS, 'upload-length': size, 'upload-metadata': metadata('huge.bin') })).status).toBe(507);
    expect(await f.bridge.services.uploads.list(writer.uuid)).toEqual([]);
  });

  it("the group's quota is its members' together: what one member's upload holds another's cannot take; their own drives are apart", async () => {
    // The quota as the bridge knows it is cached for a few seconds: read what it said after the last write.
    const usage = await readGroupUsage(f.store, team);
    const left = GROUP_QUOTA - Number(usage?.disk_used ?? 0);
    const held = await dav('POST', `${groupPath(TEAM)}/`, { ...TUS, 'upload-length': String(left - 1000), 'upload-metadata': metadata('held.bin') });
    expect(held.status).toBe(201);
    const v2 = { destination: `${f.davUrl}${files(second)}${groupPath(TEAM)}/second.bin`, 'oc-total-length': '2000' };
    const refused = await dav('MKCOL', `${uploads(second)}/g-second`, v2, undefined, second);
    expect(refused.status).toBe(507);
    expect(refused.text).toContain(`other uploads under way hold ${left - 1000}`);
    const own = { destination: `${f.davUrl}${files(second)}/home/second.bin`, 'oc-total-length': '2000' };
    expect((await dav('MKCOL', `${uploads(second)}/own-second`, own, undefined, second)).status).toBe(201);
    expect((await dav('DELETE', String(held.headers.location), TUS)).status).toBe(204);
    expect((await dav('MKCOL', `${uploads(second)}/g-second`, v2, undefined, second)).status).toBe(201);
    for (const id of ['g-second', 'own-second']) expect((await dav('DELETE', `${uploads(second)}/${id}`, {}, undefined, second)).status).toBe(204);
  });

  it("a group the caller is not in (another organization's) is no place to upload to, as for a PUT", async () => {
    const elsewhere = groupPath(OTHER_TEAM);
    expect((await dav('PUT', `${elsewhere}/mine.txt`, {}, 'mine')).status).toBe(409);
    const v2 = { destination: `${f.davUrl}${files(writer)}${elsewhere}/mine.bin`, 'oc-total-length': '10' };
    expect((await dav('MKCOL', `${uploads(writer)}/o-v2`, v2)).status).toBe(409);
    expect((await dav('POST', `${elsewhere}/`, { ...TUS, 'upload-length': '10', 'upload-metadata': metadata('mine.bin') })).status).toBe(404);
    expect(await f.bridge.services.uploads.list(writer.uuid)).toEqual([]);
    expect((await dav('MKCOL', `${uploads(writer)}/o-v1`)).status).toBe(201);
    await putV1(writer, 'o-v1', Buffer.from('0123456789'), 10);
    expect((await dav('MOVE', `${uploads(writer)}/o-v1/.file`, { destination: `${f.davUrl}${files(writer)}${elsewhere}/mine.bin` })).status).toBe(409);
    expect((await dav('DELETE', `${uploads(writer)}/o-v1`)).status).toBe(204);
    expect(await f.bridge.services.uploads.list(writer.uuid)).toEqual([]);
  });
});
