/**
 * The client's view of the drive (issue 30, item 5; tree/client-view.ts): `/remote.php/dav/files/<user>/`
 * and `/remote.php/webdav/` list `home/`, `incoming/` and `groups/<name>/{home,incoming}/` only,
 * under today's paths; no trash, versions, derived views or WebDrive mounts, which stay on `/`.
 * A new item at a fixed level of the view is refused with 403 and Sabre's body, and nothing is
 * stored; oc:permissions are exact per node (the view's levels above the drives carry none, so
 * no C or K), nc:is-mount-root marks each drive's root.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { responseFor, type DavResponse } from '../../helpers/multistatus.js';
import { uploadFile } from '../../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const TEAM = 'Field Team';
const ALL = ['read', 'write', 'delete', 'download'];
const PERMISSIONS_BODY =
  '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><D:prop><oc:permissions/><nc:is-mount-root/><D:getetag/></D:prop></D:propfind>';
const SABRE_REFUSAL =
  '<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns"><s:exception>403</s:exception><s:message>Only drives live here: put files in home/</s:message></d:error>';

describe("the client's view of the drive under /remote.php/", () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let writer: DavUser;
  let reader: DavUser;
  let sharer: DavUser;
  const { davAs } = bridgeRequests(() => f);
  const dav = (as: DavUser, method: string, path: string, headers: Record<string, string> = {}, body?: string) => davAs(as, method, path, headers, body);
  const files = (who: DavUser): string => `/remote.php/dav/files/${encodeURIComponent(who.email)}`;
  const team = `groups/${encodeURIComponent(TEAM)}`;

  async function listed(as: DavUser, path: string, body?: string): Promise<DavResponse[]> {
    const answer = await dav(as, 'PROPFIND', path, { depth: '1' }, body);
    expect(answer.status, path).toBe(207);
    return multistatusOf(answer);
  }

  const OC = '{http://owncloud.org/ns}';
  const NC = '{http://nextcloud.org/ns}';

  /** oc:permissions as found (200), undefined when answered 404. */
  function permissionOf(response: DavResponse): string | undefined {
    const prop = response.props.get(`${OC}permissions`);
    return prop?.status === 200 ? prop.text : undefined;
  }

  function mountRoot(response: DavResponse): string | undefined {
    const prop = response.props.get(`${NC}is-mount-root`);
    return prop?.status === 200 ? prop.text : undefined;
  }

  async function letters(as: DavUser, path: string): Promise<string | undefined> {
    const [response] = multistatusOf(await dav(as, 'PROPFIND', path, { depth: '0' }, PERMISSIONS_BODY));
    return response ? permissionOf(response) : undefined;
  }

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 200 } });
    const ga = groupAdmin(f.client, f.admin);
    const group = await ga.group(TEAM, { quotaBytes: 1_000_000 });
    [alice, writer, reader, sharer] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser(), f.newDavUser()]);
    await ga.member(group, alice.uuid, { node_permissions: ALL });
    await ga.member(group, writer.uuid, { node_permissions: ALL });
    await ga.member(group, reader.uuid, { node_permissions: ['read', 'download'] });
    await ga.member(group, sharer.uuid, { node_permissions: ['read', 'download'], share_permissions: ['public_create'] });
    await uploadFile(f.client, alice.session, 'home', 'mine.txt', 'my own');
    expect((await dav(writer, 'PUT', `/${team}/home/plan.txt`, {}, 'the plan')).status).toBe(201);
    expect((await dav(writer, 'MKCOL', `/${team}/home/docs/`)).status).toBe(201);
    // Something in the trash, which the view must never show.
    await uploadFile(f.client, alice.session, 'home', 'gone.txt', 'deleted');
    expect((await dav(alice, 'DELETE', '/home/gone.txt')).status).toBe(204);
  });
  afterAll(async () => {
    await f.close();
  });

  for (const form of ['files/<user>', 'webdav'] as const) {
    describe(`through /remote.php/${form}/`, () => {
      const base = (who: DavUser): string => (form === 'webdav' ? '/remote.php/webdav' : files(who));

      it('lists exactly home/, incoming/ and groups/ at the root, and each group with its home/ and incoming/ only', async () => {
        const root = await listed(alice, `${base(alice)}/`);
        expect(root.map((r) => r.href).sort()).toEqual([`${base(alice)}/`, `${base(alice)}/groups/`, `${base(alice)}/home/`, `${base(alice)}/incoming/`]);
        const groups = await listed(alice, `${base(alice)}/groups/`);
        expect(groups.map((r) => r.href)).toEqual([`${base(alice)}/groups/`, `${base(alice)}/${team}/`]);
        const drives = await listed(alice, `${base(alice)}/${team}/`);
        expect(drives.map((r) => r.href).sort()).toEqual([`${base(alice)}/${team}/`, `${base(alice)}/${team}/home/`, `${base(alice)}/${team}/incoming/`]);
        const home = await listed(alice, `${base(alice)}/${team}/home/`);
        expect(home.map((r) => r.href).sort()).toEqual([`${base(alice)}/${team}/home/`, `${base(alice)}/${team}/home/docs/`, `${base(alice)}/${team}/home/plan.txt`]);
      });

      it('reaches nothing outside the view: trash, versions, derived views, WebDrive mounts, a group’s trash', async () => {
        for (const hidden of ['trash/', 'trash/gone.txt', 'versions/', 'favorites/', 'public_shares/', 'private_shares/', 'shared_with_you/', 'webdrive/', `${team}/trash/`, `${team}/favorites/`]) {
          expect((await dav(alice, 'PROPFIND', `${base(alice)}/${hidden}`, { depth: '0' })).status, hidden).toBe(404);
        }
        expect((await dav(alice, 'GET', `${base(alice)}/trash/gone.txt`)).status).toBe(404);
        // The bridge's own paths keep the whole tree.
        const plain = await listed(alice, '/');
        expect(plain.map((r) => r.href)).toEqual(expect.arrayContaining(['/trash/', '/favorites/', '/shared_with_you/']));
        expect((await dav(alice, 'PROPFIND', '/trash/', { depth: '1' })).text).toContain('gone.txt');
      });

      it('serves a drive under today’s paths: a file written through the view is the one on /', async () => {
        expect((await dav(alice, 'PUT', `${base(alice)}/home/through-${form.length}.txt`, {}, 'via the view')).status).toBe(201);
        expect((await dav(alice, 'GET', `/home/through-${form.length}.txt`)).text).toBe('via the view');
      });

      it('refuses a new file or folder at the root, in groups/ or beside a group’s drives with 403 and Sabre’s message, storing nothing', async () => {
        const refused: Array<[string, string, Record<string, string>, string?]> = [
          ['PUT', 'top.txt', {}, 'x'],
          ['MKCOL', 'newdir/', {}],
          ['PUT', 'trash', {}, 'x'],
          ['PUT', 'groups/loose.txt', {}, 'x'],
          ['MKCOL', `${team}/extra/`, {}],
          ['MOVE', 'home/mine.txt', { destination: `${f.davUrl}${base(alice)}/moved.txt` }],
          ['COPY', 'home/mine.txt', { destination: `${f.davUrl}${base(alice)}/copied.txt` }],
        ];
        for (const [method, path, headers, body] of refused) {
          const answer = await dav(alice, method, `${base(alice)}/${path}`, headers, body);
          expect(answer.status, `${method} ${path}`).toBe(403);
          expect(answer.text, `${method} ${path}`).toBe(SABRE_REFUSAL);
        }
        const root = await listed(alice, '/');
        expect(root.map((r) => r.href)).not.toEqual(expect.arrayContaining(['/top.txt']));
        expect((await f.client.listFolder(alice.session, 'home' as never)).map((e) => e.name)).toContain('mine.txt');
        expect((await dav(alice, 'PROPFIND', '/newdir/', { depth: '0' })).status).toBe(404);
      });

      it('shows exact permission letters: none at the fixed levels, M and nc:is-mount-root on each drive, R only where the caller may share', async () => {
        const root = await listed(alice, `${base(alice)}/`, PERMISSIONS_BODY);
        expect(permissionOf(responseFor(root, `${base(alice)}/`))).toBe('');
        expect(mountRoot(responseFor(root, `${base(alice)}/`))).toBeUndefined();
        expect(permissionOf(responseFor(root, `${base(alice)}/home/`))).toBe('MCK');
        expect(permissionOf(responseFor(root, `${base(alice)}/incoming/`))).toBe('MCK');
        expect(permissionOf(responseFor(root, `${base(alice)}/groups/`))).toBe('');
        expect(mountRoot(responseFor(root, `${base(alice)}/home/`))).toBe('true');
        expect(mountRoot(responseFor(root, `${base(alice)}/incoming/`))).toBe('true');
        const own = await listed(alice, `${base(alice)}/home/`, PERMISSIONS_BODY);
        expect(permissionOf(responseFor(own, `${base(alice)}/home/mine.txt`))).toBe('RDNVW');
        expect(mountRoot(responseFor(own, `${base(alice)}/home/mine.txt`))).toBeUndefined();
        // A group's drive: M throughout (not the caller's own storage); R only with a share permission.
        expect(await letters(writer, `${base(writer)}/${team}/home/`)).toBe('MCK');
        expect(await letters(writer, `${base(writer)}/${team}/home/plan.txt`)).toBe('MDNVW');
        expect(await letters(writer, `${base(writer)}/${team}/home/docs/`)).toBe('MDNVCK');
        expect(await letters(reader, `${base(reader)}/${team}/home/`)).toBe('M');
        expect(await letters(reader, `${base(reader)}/${team}/home/plan.txt`)).toBe('M');
        expect(await letters(reader, `${base(reader)}/${team}/home/docs/`)).toBe('M');
        expect(await letters(sharer, `${base(sharer)}/${team}/home/plan.txt`)).toBe('RM');
        expect(await letters(alice, `${base(alice)}/${team}/`)).toBe('');
      });
    });
  }

  it('gives each member their own R in a listing of the same group folder (the answer cache keeps them apart)', async () => {
    const folder = `/remote.php/webdav/${team}/home/`;
    for (const [who, expected] of [[reader, 'M'], [sharer, 'RM'], [reader, 'M'], [sharer, 'RM']] as const) {
      const listing = await listed(who, folder, PERMISSIONS_BODY);
      expect(permissionOf(responseFor(listing, `${folder}plan.txt`)), who.email).toBe(expected);
    }
  });

  it('answers /remote.php/webdav/ only with credentials, and for the caller alone', async () => {
    expect((await davAs(undefined, 'PROPFIND', '/remote.php/webdav/', { depth: '0' })).status).toBe(401);
    const mine = await listed(reader, '/remote.php/webdav/home/');
    expect(mine.map((r) => r.href)).not.toContain('/remote.php/webdav/home/mine.txt');
  });
});
