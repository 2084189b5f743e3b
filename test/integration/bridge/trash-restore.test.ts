/**
 * Issue 23, item 4, through the bridge: `/trash` entries carry Nextcloud's trash properties
 * (nc:trashbin-filename, nc:trashbin-original-location, nc:trashbin-deletion-time; allprop and
 * by name); a MOVE of an entry to `/restore/<name>` puts it back where it was (Nextcloud's
 * restore target), a plain MOVE out of trash puts it where the client says; a folder whose
 * driveway skip-trash property is set (PROPPATCH, `delete` needed) sends DELETEs below it past
 * the trash. Group drives likewise. Runs on the run's transport (in-process, HTTP, PostgreSQL + S3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import type { DavResponse } from '../../helpers/multistatus.js';

const NC = 'http://nextcloud.org/ns';
const NAMED = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:nc="${NC}"><d:prop><nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/><d:getcontentlength/></d:prop></d:propfind>`;
const skipTrash = (value: string): string =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><dw:skip-trash xmlns:dw="urn:driveway:">${value}</dw:skip-trash></D:prop></D:set></D:propertyupdate>`;

let f: BridgeFixture;
let alice: DavUser;
let reader: DavUser;
const { dav, move, put, storeEntries } = bridgeRequests(() => f, () => alice);

beforeAll(async () => {
  f = await bridgeFixture();
  alice = await f.newDavUser();
  const ga = groupAdmin(f.client, f.admin);
  const team = await ga.group('Trash Crew');
  await ga.member(team, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
  reader = await f.newDavUser();
  await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
});
afterAll(async () => {
  await f?.close();
});

function nc(response: DavResponse | undefined, local: string): string | undefined {
  const prop = response?.props.get(`{${NC}}${local}`);
  return prop?.status === 200 ? prop.text : undefined;
}

async function trashEntry(trash: string, name: string, body?: string): Promise<DavResponse | undefined> {
  const responses = multistatusOf(await dav('PROPFIND', trash, { depth: '1', ...(body ? { 'content-type': 'application/xml' } : {}) }, body));
  return responses.find((r) => decodeURIComponent(r.href.replace(/\/$/, '').split('/').pop() ?? '') === name);
}

describe('/trash from a mount', () => {
  it('entries carry where they were, under which name and when, in allprop and by name', async () => {
    expect((await dav('MKCOL', '/home/docs/')).status).toBe(201);
    expect((await dav('MKCOL', '/home/docs/2026/')).status).toBe(201);
    await put('/home/docs/2026/report.odt', 'report');
    await put('/home/report.odt', 'other report');
    const before = Math.floor(Date.now() / 1000) - 2;
    expect((await dav('DELETE', '/home/docs/2026/report.odt')).status).toBe(204);
    expect((await dav('DELETE', '/home/report.odt')).status).toBe(204);
    for (const body of [undefined, NAMED]) {
      const first = await trashEntry('/trash/', 'report.odt', body);
      expect(nc(first, 'trashbin-filename')).toBe('report.odt');
      expect(nc(first, 'trashbin-original-location')).toBe('home/docs/2026/report.odt');
      expect(Number(nc(first, 'trashbin-deletion-time'))).toBeGreaterThanOrEqual(before);
      const second = await trashEntry('/trash/', 'report (2).odt', body);
      expect(nc(second, 'trashbin-filename')).toBe('report.odt');
      expect(nc(second, 'trashbin-original-location')).toBe('home/report.odt');
    }
    // Nothing outside the trash carries them.
    await put('/home/kept.txt', 'kept');
    const kept = multistatusOf(await dav('PROPFIND', '/home/kept.txt', { depth: '0', 'content-type': 'application/xml' }, NAMED))[0];
    expect(kept?.props.get(`{${NC}}trashbin-filename`)?.status).toBe(404);
  });

  it('MOVE to /restore/<name> puts an entry back where it was; a plain MOVE out of trash puts it where asked', async () => {
    const res = await move('/trash/report.odt', '/restore/report.odt');
    expect(res.status, res.text).toBe(201);
    expect(res.headers.location).toBe('/home/docs/2026/report.odt');
    expect((await dav('GET', '/home/docs/2026/report.odt')).text).toBe('report');
    expect(await trashEntry('/trash/', 'report.odt')).toBeUndefined();
    // Back under its old name, though it had another in trash.
    const second = await move('/trash/report%20(2).odt', '/restore/anything');
    expect(second.status).toBe(201);
    expect((await dav('GET', '/home/report.odt')).text).toBe('other report');
    // Not a trash entry: 403, nothing changes.
    expect((await move('/home/report.odt', '/restore/report.odt')).status).toBe(403);
    expect((await dav('GET', '/home/report.odt')).status).toBe(200);
    // A plain MOVE out of trash restores too, wherever the client says.
    expect((await dav('DELETE', '/home/kept.txt')).status).toBe(204);
    expect((await move('/trash/kept.txt', '/home/docs/kept-again.txt')).status).toBe(201);
    expect((await dav('GET', '/home/docs/kept-again.txt')).text).toBe('kept');
    // Another user's trash entry is not there for bob.
    const bob = await f.newDavUser();
    expect((await dav('DELETE', '/home/docs/kept-again.txt')).status).toBe(204);
    expect((await dav('MOVE', '/trash/kept-again.txt', { destination: `${f.davUrl}/restore/x` }, undefined, bob)).status).toBe(404);
    expect(await trashEntry('/trash/', 'kept-again.txt')).toBeDefined();
  });

  it('a folder marked skip-trash sends deletes below it past the trash; the mark needs delete', async () => {
    expect((await dav('MKCOL', '/home/backup/')).status).toBe(201);
    const marked = await dav('PROPPATCH', '/home/backup/', { 'content-type': 'application/xml' }, skipTrash('1'));
    expect(marked.status).toBe(207);
    expect(multistatusOf(marked)[0]?.props.get('{urn:driveway:}skip-trash')?.status).toBe(200);
    const home = (await storeEntries('home')).find((e) => e.name === 'backup');
    expect((await f.client.details(alice.session, home!.id)).skipTrash).toBe(true);
    await put('/home/backup/pack-1', 'p'.repeat(50));
    const tag = '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><t xmlns="urn:x">kept?</t></D:prop></D:set></D:propertyupdate>';
    expect((await dav('PROPPATCH', '/home/backup/pack-1', { 'content-type': 'application/xml' }, tag)).status).toBe(207);
    const backupId = (await storeEntries('home')).find((e) => e.name === 'backup')!.id;
    const packId = (await storeEntries(backupId)).find((e) => e.name === 'pack-1')!.id;
    expect(await f.bridge.services.props.list(packId)).toHaveLength(1);
    expect((await dav('DELETE', '/home/backup/pack-1')).status).toBe(204);
    // Gone for good, so its dead properties went with it (nothing left keyed by its UUID).
    expect(await f.bridge.services.props.list(packId)).toEqual([]);
    expect((await storeEntries('trash')).map((e) => e.name)).not.toContain('pack-1');
    expect((await dav('GET', '/home/backup/pack-1')).status).toBe(404);
    // A bad value is 409 and changes nothing; a file cannot carry it.
    const bad = await dav('PROPPATCH', '/home/backup/', { 'content-type': 'application/xml' }, skipTrash('maybe'));
    expect(multistatusOf(bad)[0]?.props.get('{urn:driveway:}skip-trash')?.status).toBe(409);
    expect((await f.client.details(alice.session, home!.id)).skipTrash).toBe(true);
    // Cleared: deletes go to the trash again.
    const cleared = await dav('PROPPATCH', '/home/backup/', { 'content-type': 'application/xml' }, skipTrash('0'));
    expect(multistatusOf(cleared)[0]?.props.get('{urn:driveway:}skip-trash')?.status).toBe(200);
    await put('/home/backup/pack-2', 'q');
    expect((await dav('DELETE', '/home/backup/pack-2')).status).toBe(204);
    expect((await storeEntries('trash')).map((e) => e.name)).toContain('pack-2');
    // A group drive: a reader may not mark it; a member with delete may.
    const drive = '/groups/Trash%20Crew/home/';
    expect((await dav('PROPPATCH', drive, { 'content-type': 'application/xml' }, skipTrash('1'), reader)).status).toBe(403);
    expect(multistatusOf(await dav('PROPPATCH', drive, { 'content-type': 'application/xml' }, skipTrash('1')))[0]?.props.get('{urn:driveway:}skip-trash')?.status).toBe(200);
    await put('/groups/Trash%20Crew/home/old.tar', 'old');
    expect((await dav('DELETE', '/groups/Trash%20Crew/home/old.tar')).status).toBe(204);
    expect(multistatusOf(await dav('PROPFIND', '/groups/Trash%20Crew/trash/', { depth: '1' })).length).toBe(1);
    expect((await dav('PROPPATCH', drive, { 'content-type': 'application/xml' }, skipTrash('0'))).status).toBe(207);
  });

  it("a group's trash entries name the group drive; a restore needs write there", async () => {
    const drive = '/groups/Trash%20Crew/home';
    expect((await dav('MKCOL', `${drive}/plans/`)).status).toBe(201);
    await put(`${drive}/plans/q1.txt`, 'q1');
    expect((await dav('DELETE', `${drive}/plans/q1.txt`)).status).toBe(204);
    const entry = await trashEntry('/groups/Trash%20Crew/trash/', 'q1.txt');
    expect(nc(entry, 'trashbin-original-location')).toBe('groups/Trash Crew/home/plans/q1.txt');
    expect((await dav('MOVE', '/groups/Trash%20Crew/trash/q1.txt', { destination: `${f.davUrl}/restore/q1.txt` }, undefined, reader)).status).toBe(403);
    const res = await move('/groups/Trash%20Crew/trash/q1.txt', '/restore/q1.txt');
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe('/groups/Trash%20Crew/home/plans/q1.txt');
    expect((await dav('GET', `${drive}/plans/q1.txt`)).text).toBe('q1');
  });
});

describe("a share's recipient and the owner's trash (issue 29, defect 2)", () => {
  let bob: DavUser;
  const share = '/shared_with_you/Shared%20Work';

  beforeAll(async () => {
    bob = await f.newDavUser();
    expect((await dav('MKCOL', '/home/Shared%20Work/')).status).toBe(201);
    expect((await dav('MKCOL', '/home/Shared%20Work/sub/')).status).toBe(201);
    const folder = (await storeEntries('home')).find((e) => e.name === 'Shared Work')!.id;
    const made = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${folder}/shares`, token: alice.session.token, json: { type: 'private', recipients: [bob.uuid], writable: true } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
  });

  it("refuses the recipient's PROPPATCH of skip-trash (403, nothing stored); his DELETE below it goes to the owner's trash", async () => {
    const sub = (await storeEntries((await storeEntries('home')).find((e) => e.name === 'Shared Work')!.id)).find((e) => e.name === 'sub')!;
    const refused = await dav('PROPPATCH', `${share}/sub/`, { 'content-type': 'application/xml' }, skipTrash('1'), bob);
    expect(refused.status).toBe(207);
    expect(multistatusOf(refused)[0]?.props.get('{urn:driveway:}skip-trash')?.status).toBe(403);
    expect((await f.client.details(alice.session, sub.id)).skipTrash).toBeUndefined();
    expect(await f.bridge.services.props.list(sub.id)).toEqual([]);

    // Marked by its owner, the folder still sends the recipient's deletes to her trash.
    expect(multistatusOf(await dav('PROPPATCH', '/home/Shared%20Work/sub/', { 'content-type': 'application/xml' }, skipTrash('1')))[0]?.props.get('{urn:driveway:}skip-trash')?.status).toBe(200);
    await put(`${share}/sub/contract.pdf`, 'signed contract', bob);
    expect((await dav('DELETE', `${share}/sub/contract.pdf`, {}, undefined, bob)).status).toBe(204);
    expect((await dav('GET', '/home/Shared%20Work/sub/contract.pdf')).status).toBe(404);
    expect((await storeEntries('trash')).map((e) => e.name)).toContain('contract.pdf');
    expect((await dav('GET', '/trash/contract.pdf')).text).toBe('signed contract');
    expect((await dav('PROPPATCH', '/home/Shared%20Work/sub/', { 'content-type': 'application/xml' }, skipTrash('0'))).status).toBe(207);
  });

  it('a folder the recipient marked and MOVEd into the share loses the mark: the owner deletes into her trash', async () => {
    expect((await dav('MKCOL', '/home/scratch/', {}, undefined, bob)).status).toBe(201);
    expect(multistatusOf(await dav('PROPPATCH', '/home/scratch/', { 'content-type': 'application/xml' }, skipTrash('1'), bob))[0]?.props.get('{urn:driveway:}skip-trash')?.status).toBe(200);
    await put('/home/scratch/notes.txt', 'bob notes', bob);
    expect((await dav('MOVE', '/home/scratch/', { destination: `${f.davUrl}${share}/scratch/` }, undefined, bob)).status).toBe(201);
    const scratch = (await storeEntries((await storeEntries('home')).find((e) => e.name === 'Shared Work')!.id)).find((e) => e.name === 'scratch')!;
    expect((await f.client.details(alice.session, scratch.id)).skipTrash).toBeUndefined();
    expect((await dav('DELETE', '/home/Shared%20Work/scratch/notes.txt')).status).toBe(204);
    expect((await dav('GET', '/trash/notes.txt')).text).toBe('bob notes');
  });
});
