/**
 * Issue 14, finding 1 (HIGH): a share or link gives at most what its creator holds on the node,
 * checked when it is made (403 naming the missing permission) and again at every use (a creator
 * who loses a permission, leaves the group, is deactivated or deleted narrows it at once).
 *
 * The exploits as reproduced: a read-only member of G1 with `private_create` makes a writable
 * private share of a G1 folder to G2 (which they also belong to) and writes to and deletes G1's
 * files through `/groups/<G2>/shared_with_you/`; a member without `download` but with
 * `public_create` makes a public link and anyone downloads through it. Tried through the REST
 * API and through the bridge (real PUT and DELETE), and against shares a database made by the
 * old code still holds (rows inserted as it stored them).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertShare, type LinkType } from '../../src/store/storage/shares.js';
import { hashLinkToken } from '../../src/store/ops/shares.js';
import { bridgeRequests } from '../helpers/dav-requests.js';
import { call, dataOf, groupAdmin, readCountRows, type GroupAdmin } from '../helpers/groups.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { expectError, fetchRaw, multipartFile } from '../helpers/sharing.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';

const VAULT = 'Vault';
const SIDE = 'Side Room';
const SIDE_SHARED = `/groups/${encodeURIComponent(SIDE)}/shared_with_you`;
const ALL = ['read', 'write', 'delete', 'download'];
const ALL_SHARE = ['public_create', 'public_delete', 'private_create', 'private_delete', 'upload_link_create', 'upload_link_delete'];

describe('a share gives at most what its creator holds', () => {
  let f: BridgeFixture;
  let ga: GroupAdmin;
  let vault: string;
  let side: string;
  let owner: DavUser;
  let mallory: DavUser;
  let accomplice: DavUser;
  let secrets: string;
  let plan: string;
  const { davAs } = bridgeRequests(() => f);
  const dav = (as: DavUser, method: string, path: string, body?: string) => davAs(as, method, path, {}, body);
  const api = (as: DavUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, json?: unknown) => call(f.client, as.session, method, path, json);
  const sharesOn = (node: string): Promise<number> => readCountRows(f.store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', node);
  const planContent = async (): Promise<string> => (await dav(owner, 'GET', `/groups/${VAULT}/home/Secrets/plan.txt`)).text;

  /** A share as a database written by the code before this fix holds it (that code let it be made). */
  async function legacyShare(type: LinkType, node: string, creator: string, options: { writable?: boolean; recipients?: Array<{ type: 'User' | 'Group'; uuid: string }> } = {}): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    (await insertShare(
      f.store.ctx.storage.sql,
      {
        uuid: randomUUID(),
        type,
        node_uuid: node,
        creator_uuid: creator,
        token_hash: type === 'private' ? null : hashLinkToken(token),
        password_hash: null,
        expires: null,
        writable: options.writable ? 1 : 0,
        created: Date.now(),
      },
      options.recipients ?? [],
    ));
    return token;
  }

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 0 } });
    ga = groupAdmin(f.client, f.admin);
    vault = await ga.group(VAULT);
    side = await ga.group(SIDE);
    [owner, mallory, accomplice] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
    await ga.member(vault, owner.uuid, { node_permissions: ALL, share_permissions: ALL_SHARE });
    // Read-only in the vault, yet allowed to make every kind of share.
    await ga.member(vault, mallory.uuid, { node_permissions: ['read', 'download'], share_permissions: ALL_SHARE });
    await ga.member(side, mallory.uuid, { node_permissions: ['read'] });
    await ga.member(side, accomplice.uuid, { node_permissions: ['read'] });
    secrets = await createFolder(f.client, owner.session, `home:${vault}`, 'Secrets');
    plan = await uploadFile(f.client, owner.session, secrets, 'plan.txt', 'the vault plan');
  });
  afterAll(async () => {
    await f.close();
  });

  describe('when it is made', () => {
    it('refuses a writable private share from a read-only member (403 naming write), to a group or a user', async () => {
      for (const recipients of [[side], [accomplice.uuid]]) {
        const res = await api(mallory, 'POST', `/api/nodes/${secrets}/shares`, { type: 'private', recipients, writable: true });
        expectError(res, 403, 'forbidden', /write permission required to make a writable private share/);
      }
      expect(await sharesOn(secrets)).toBe(0);
    });

    it('lets the read-only member share read-only, and nothing they lack comes through it, by REST or by the bridge', async () => {
      const made = await dataOf<{ share_uuid: string; writable: boolean }>(api(mallory, 'POST', `/api/nodes/${secrets}/shares`, { type: 'private', recipients: [side] }));
      expect(made.writable).toBe(false);
      expect((await dav(mallory, 'GET', `${SIDE_SHARED}/Secrets/plan.txt`)).text).toBe('the vault plan');
      expect((await dav(mallory, 'PUT', `${SIDE_SHARED}/Secrets/plan.txt`, 'overwritten')).status).toBe(403);
      expect((await dav(mallory, 'PUT', `${SIDE_SHARED}/Secrets/new.txt`, 'planted')).status).toBe(403);
      expect((await dav(mallory, 'DELETE', `${SIDE_SHARED}/Secrets/plan.txt`)).status).toBe(403);
      expectError(await api(mallory, 'DELETE', `/api/nodes/${plan}`), 403, 'forbidden');
      expect(await planContent()).toBe('the vault plan');
      expect(await dataOf(api(mallory, 'GET', `/api/nodes/${plan}/myaccess`))).toEqual(['read', 'download']);
      await dataOf(api(mallory, 'DELETE', `/api/shares/${made.share_uuid}`));
    });

    it('refuses a public link from a member without download, and an upload link from one without write', async () => {
      const peeker = await f.newDavUser();
      await ga.member(vault, peeker.uuid, { node_permissions: ['read'], share_permissions: ALL_SHARE });
      expectError(await api(peeker, 'POST', `/api/nodes/${plan}/shares`, { type: 'public' }), 403, 'forbidden', /download permission required to make a public link/);
      expectError(await api(peeker, 'POST', `/api/nodes/${secrets}/shares`, { type: 'private', recipients: [accomplice.uuid] }), 403, 'forbidden', /download permission required/);
      expectError(await api(mallory, 'POST', `/api/nodes/${secrets}/shares`, { type: 'upload' }), 403, 'forbidden', /write permission required to make an upload link/);
      expect((await sharesOn(plan)) + (await sharesOn(secrets))).toBe(0);
    });

    it('knows no node of a group the sharer is not in, nor a recipient of another organization', async () => {
      const other = await ga.group('Elsewhere');
      const theirs = await createFolder(f.client, f.admin, `home:${other}`, 'Theirs');
      expectError(await api(mallory, 'POST', `/api/nodes/${theirs}/shares`, { type: 'private', recipients: [side], writable: true }), 404, 'not_found');
      await ga.organization('other-org');
      const foreign = await ga.group('Foreign', { orgId: 'other-org' });
      expectError(await api(mallory, 'POST', `/api/nodes/${secrets}/shares`, { type: 'private', recipients: [foreign] }), 404, 'not_found');
      expect((await sharesOn(theirs)) + (await sharesOn(secrets))).toBe(0);
    });
  });

  describe('when it is used', () => {
    it('gives nothing beyond its creator’s access through a writable share the old code let a read-only member make', async () => {
      await legacyShare('private', secrets, mallory.uuid, { writable: true, recipients: [{ type: 'Group', uuid: side }] });
      // Through the bridge, as the member of the recipient group: reads only.
      expect((await dav(mallory, 'GET', `${SIDE_SHARED}/Secrets/plan.txt`)).text).toBe('the vault plan');
      expect((await dav(mallory, 'PUT', `${SIDE_SHARED}/Secrets/plan.txt`, 'overwritten')).status).toBe(403);
      expect((await dav(mallory, 'DELETE', `${SIDE_SHARED}/Secrets/plan.txt`)).status).toBe(403);
      expect((await dav(accomplice, 'PUT', `${SIDE_SHARED}/Secrets/planted.txt`, 'planted')).status).toBe(403);
      expect((await dav(accomplice, 'DELETE', `${SIDE_SHARED}/Secrets/plan.txt`)).status).toBe(403);
      // Through the REST API.
      expectError(await api(accomplice, 'DELETE', `/api/nodes/${plan}`), 403, 'forbidden');
      expectError(await api(accomplice, 'POST', `/api/nodes/${secrets}`, { new_dir: 'planted' }), 403, 'forbidden');
      expect(await dataOf(api(accomplice, 'GET', `/api/nodes/${plan}/myaccess`))).toEqual(['read', 'download']);
      expect(await planContent()).toBe('the vault plan');
      expect((await dataOf<Array<{ name: string }>>(api(owner, 'GET', `/api/nodes/${secrets}/dirlist`))).map((e) => e.name)).toEqual(['plan.txt']);
    });

    it('serves no public link the old code let a member without download make, nor an upload link from one without write', async () => {
      const peeker = await f.newDavUser();
      await ga.member(vault, peeker.uuid, { node_permissions: ['read'], share_permissions: ALL_SHARE });
      const publicToken = await legacyShare('public', plan, peeker.uuid);
      const folderToken = await legacyShare('public', secrets, peeker.uuid);
      const uploadToken = await legacyShare('upload', secrets, mallory.uuid);
      for (const path of [`/public/${publicToken}`, `/public/${folderToken}`, `/public/${folderToken}/plan.txt`]) {
        const res = await fetchRaw(f.store, path);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expect(res.body.toString()).not.toContain('the vault plan');
      }
      const { headers, body } = multipartFile('dropped.txt', 'dropped');
      expect((await fetchRaw(f.store, `/public/${uploadToken}/upload`, { method: 'POST', headers, body })).status).toBe(404);
      expect((await dataOf<Array<{ name: string }>>(api(owner, 'GET', `/api/nodes/${secrets}/dirlist`))).map((e) => e.name)).toEqual(['plan.txt']);
    });

    it('narrows at once when the creator loses a permission, and ends when they leave the group', async () => {
      const writer = await f.newDavUser();
      await ga.member(vault, writer.uuid, { node_permissions: ALL, share_permissions: ALL_SHARE });
      const shared = await createFolder(f.client, writer.session, `home:${vault}`, 'Shared Out');
      await uploadFile(f.client, writer.session, shared, 'notes.txt', 'notes v1');
      await dataOf(api(writer, 'POST', `/api/nodes/${shared}/shares`, { type: 'private', recipients: [accomplice.uuid], writable: true }));
      const { url } = await dataOf<{ url: string }>(api(writer, 'POST', `/api/nodes/${shared}/shares`, { type: 'public' }));
      const { url: uploadUrl } = await dataOf<{ url: string }>(api(writer, 'POST', `/api/nodes/${shared}/shares`, { type: 'upload' }));
      expect((await fetchRaw(f.store, `${url}/notes.txt`)).body.toString()).toBe('notes v1');
      // While the creator holds everything, the recipient writes and deletes below the shared folder.
      expect((await dav(accomplice, 'PUT', '/shared_with_you/Shared%20Out/notes.txt', 'notes v2')).status).toBe(204);
      expect((await dav(accomplice, 'PUT', '/shared_with_you/Shared%20Out/extra.txt', 'extra')).status).toBe(201);
      expect((await dav(accomplice, 'DELETE', '/shared_with_you/Shared%20Out/extra.txt')).status).toBe(204);

      // The creator keeps read, write and download but loses delete: so does the share.
      await dataOf(call(f.client, f.admin, 'PUT', `/api/admin/groups/${vault}/users/${writer.uuid}`, { node_permissions: ['read', 'write', 'download'] }));
      expect((await dav(accomplice, 'PUT', '/shared_with_you/Shared%20Out/extra.txt', 'extra')).status).toBe(201);
      expect((await dav(accomplice, 'DELETE', '/shared_with_you/Shared%20Out/extra.txt')).status).toBe(403);

      // Read-only now: no more writes, no more uploads through the link; reading stays.
      await dataOf(call(f.client, f.admin, 'PUT', `/api/admin/groups/${vault}/users/${writer.uuid}`, { node_permissions: ['read', 'download'] }));
      expect((await dav(accomplice, 'PUT', '/shared_with_you/Shared%20Out/notes.txt', 'notes v3')).status).toBe(403);
      expect((await dav(accomplice, 'GET', '/shared_with_you/Shared%20Out/notes.txt')).text).toBe('notes v2');
      const { headers, body } = multipartFile('dropped.txt', 'dropped');
      expect((await fetchRaw(f.store, `${uploadUrl}/upload`, { method: 'POST', headers, body })).status).toBe(404);
      expect((await fetchRaw(f.store, `${url}/notes.txt`)).body.toString()).toBe('notes v2');

      // Without download: the public link is gone, the private share no longer gives download.
      await dataOf(call(f.client, f.admin, 'PUT', `/api/admin/groups/${vault}/users/${writer.uuid}`, { node_permissions: ['read'] }));
      expect((await fetchRaw(f.store, `${url}/notes.txt`)).status).toBe(404);
      expect((await dav(accomplice, 'GET', '/shared_with_you/Shared%20Out/notes.txt')).status).toBe(403);

      // Out of the group: the share shows nothing, through either door.
      await dataOf(call(f.client, f.admin, 'DELETE', `/api/admin/groups/${vault}/users/${writer.uuid}`));
      expectError(await api(accomplice, 'GET', `/api/nodes/${shared}/dirlist`), 404, 'not_found');
      expect(await dataOf(api(accomplice, 'GET', '/api/nodes/shared_with_you/dirlist'))).toEqual([]);
      expect((await dav(accomplice, 'GET', '/shared_with_you/Shared%20Out/notes.txt')).status).toBe(404);
      expect((await dataOf<Array<{ name: string }>>(api(owner, 'GET', `/api/nodes/${shared}/dirlist`))).map((e) => e.name).sort()).toEqual(['extra.txt', 'notes.txt']);
    });

    it('ends when the creator is deactivated, and comes back with them', async () => {
      const sharer = await f.newDavUser();
      await ga.member(vault, sharer.uuid, { node_permissions: ALL, share_permissions: ALL_SHARE });
      const folder = await createFolder(f.client, sharer.session, `home:${vault}`, 'Lent');
      await dataOf(api(sharer, 'POST', `/api/nodes/${folder}/shares`, { type: 'private', recipients: [accomplice.uuid] }));
      expect((await api(accomplice, 'GET', `/api/nodes/${folder}/dirlist`)).status).toBe(200);
      await dataOf(call(f.client, f.admin, 'PUT', `/api/admin/users/${sharer.uuid}`, { is_active: false }));
      expectError(await api(accomplice, 'GET', `/api/nodes/${folder}/dirlist`), 404, 'not_found');
      await dataOf(call(f.client, f.admin, 'PUT', `/api/admin/users/${sharer.uuid}`, { is_active: true }));
      expect((await api(accomplice, 'GET', `/api/nodes/${folder}/dirlist`)).status).toBe(200);
      await dataOf(call(f.client, f.admin, 'DELETE', `/api/admin/users/${sharer.uuid}?confirm_delete=yes`));
      expectError(await api(accomplice, 'GET', `/api/nodes/${folder}/dirlist`), 404, 'not_found');
    });
  });
});
