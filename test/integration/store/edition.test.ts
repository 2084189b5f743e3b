/**
 * Editions (docs/api.md "Editions", docs/store-semantics.md "Editions"): a store started with
 * edition 1.0 serves the 1.0 subset and answers 404 not_implemented for every endpoint docs/api.md
 * lists as 3.0-only, while edition 3.0 serves the ones driveway implements.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreClient, nodeId, type RawResponse, type HttpStoreClient, type StoreSession } from '../../../src/store-client/index.js';
import type { Dispatcher } from 'undici';
import { ADMIN_PASSWORD, startTestStore, type TestStore } from '../../helpers/start-store.js';
import { blobHashOf, readBlobRefs, createSeeder, entryNamed, uploadFile } from '../../helpers/seed.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const LATEST = '999999999999999';
const SOME_UUID = '6f1c0f5e-7c2a-4b8e-9d1e-3a2b1c0d9e8f';

interface Fixture {
  store: TestStore;
  client: HttpStoreClient;
  admin: StoreSession;
  fileUuid: string;
}

async function fixture(edition: '1.0' | '3.0'): Promise<Fixture> {
  const store = await startTestStore({ edition });
  const client = createStoreClient(store.url, { retries: 0 });
  const admin = await client.login('admin', ADMIN_PASSWORD);
  const fileUuid = await uploadFile(client, admin, 'home', 'hello.txt', 'hello');
  return { store, client, admin, fileUuid };
}

function call(f: Fixture, method: Dispatcher.HttpMethod, path: string, withToken = true): Promise<RawResponse> {
  const hasBody = method === 'POST' || method === 'PUT';
  return f.client.http.requestRaw({ method, path, ...(withToken ? { token: f.admin.token } : {}), ...(hasBody ? { json: {} } : {}) });
}

/** Every endpoint docs/api.md marks as edition 3.0 only (path variables filled with plausible values). */
function threeOnlyApiEndpoints(f: Fixture): Array<[Dispatcher.HttpMethod, string]> {
  const g = SOME_UUID;
  const u = f.admin.userId;
  return [
    ['GET', `/api/nodes/${f.fileUuid}/myaccess`],
    ['GET', '/api/nodes/home/myaccess'],
    ['POST', `/api/nodes/${f.fileUuid}/revisions`],
    ['GET', '/api/user'],
    ['PUT', '/api/user'],
    ['GET', '/api/user/notifications'],
    ['PUT', '/api/user/notifications'],
    ['GET', '/api/user/2fa'],
    ['POST', '/api/user/2fa'],
    ['GET', '/api/user/login_history'],
    ['GET', '/api/user/app_passwords'],
    ['POST', '/api/user/app_passwords'],
    ['DELETE', `/api/user/app_passwords/${g}`],
    ['GET', '/api/user/webdrive'],
    ['POST', '/api/user/webdrive'],
    ['DELETE', '/api/user/webdrive'],
    ['GET', '/api/user/pending_incoming'],
    ['PUT', '/api/user/pending_incoming'],
    ['GET', '/api/users?format=short'],
    ['GET', '/api/users'],
    ['GET', '/api/groups'],
    ['GET', `/api/groups/${g}`],
    ['PUT', `/api/groups/${g}`],
    ['GET', `/api/groups/${g}/users`],
    ['POST', `/api/groups/${g}/users`],
    ['GET', `/api/groups/${g}/users/${u}`],
    ['PUT', `/api/groups/${g}/users/${u}`],
    ['DELETE', `/api/groups/${g}/users/${u}`],
    ['GET', `/api/groups/${g}/tags`],
    ['POST', `/api/groups/${g}/tags`],
    ['GET', `/api/groups/${g}/webdrive`],
    ['POST', `/api/groups/${g}/webdrive`],
    ['DELETE', `/api/groups/${g}/webdrive`],
    ['GET', `/api/groups/${g}/pending_incoming`],
    ['PUT', `/api/groups/${g}/pending_incoming`],
    ['GET', '/api/admin/users'],
    ['POST', '/api/admin/users'],
    ['GET', `/api/admin/users/${u}`],
    ['PUT', `/api/admin/users/${u}`],
    ['DELETE', `/api/admin/users/${u}?confirm_delete=yes`],
    ['GET', `/api/admin/users/${u}/groups`],
    ['POST', `/api/admin/users/${u}/groups`],
    ['GET', '/api/admin/groups'],
    ['POST', '/api/admin/groups'],
    ['GET', `/api/admin/groups/${g}`],
    ['PUT', `/api/admin/groups/${g}`],
    ['DELETE', `/api/admin/groups/${g}?confirm_delete=yes`],
    ['GET', `/api/admin/groups/${g}/users`],
    ['POST', `/api/admin/groups/${g}/users`],
    ['GET', `/api/admin/groups/${g}/users/${u}`],
    ['PUT', `/api/admin/groups/${g}/users/${u}`],
    ['DELETE', `/api/admin/groups/${g}/users/${u}`],
    // The organizations extension (docs/extensions.md) is 3.0 only too.
    ['GET', '/api/admin/organizations'],
    ['POST', '/api/admin/organizations'],
    ['GET', '/api/admin/organizations/default'],
    ['PUT', '/api/admin/organizations/default'],
    ['DELETE', '/api/admin/organizations/default'],
    ['GET', `/api/admin/users/${u}/approvers`],
    ['POST', `/api/admin/users/${u}/approvers`],
    ['DELETE', `/api/admin/users/${u}/approvers/${u}/public`],
    ['GET', `/api/admin/groups/${g}/approvers`],
    ['POST', `/api/admin/groups/${g}/approvers`],
    ['DELETE', `/api/admin/groups/${g}/approvers/${u}/share_copy`],
    ['GET', '/api/pending_shares'],
    ['PUT', `/api/pending_shares/${g}/approval`],
    ['GET', '/api/my_pending_shares'],
    ['DELETE', `/api/my_pending_shares/${g}`],
    // The share links extension (docs/extensions.md) is 3.0 only too.
    ['GET', `/api/nodes/${f.fileUuid}/shares`],
    ['POST', `/api/nodes/${f.fileUuid}/shares`],
    ['GET', '/api/shares'],
    ['DELETE', `/api/shares/${g}`],
    // Logout last: it ends the session the others use.
    ['GET', '/api/user/logout?chat_token=x'],
  ];
}

function resourcePaths(f: Fixture): string[] {
  return ['view', 'download'].map((mode) => `/resources/auth/${mode}/${f.admin.fileAccessKey}/${f.fileUuid}/${LATEST}/hello.txt`);
}

describe('edition 1.0', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture('1.0');
  });
  afterAll(async () => {
    await f.client.close();
    await f.store.close();
  });

  it('serves login with the same Session object as 3.0', async () => {
    const res = await f.client.http.requestRaw({ method: 'POST', path: '/auth', json: { username: 'admin', password: ADMIN_PASSWORD } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body as object).sort()).toEqual(['avatar', 'fileaccesskey', 'fullname', 'is_admin', 'msg', 'status', 'token', 'uuid']);
  });

  it('serves the 1.0 node operations, upload and listings', async () => {
    const s = f.admin;
    await f.client.createFolder(s, nodeId('home'), 'docs');
    const docs = await entryNamed(f.client, s, 'home', 'docs');
    await f.client.rename(s, docs.id, 'papers');
    await f.client.setStarred(s, docs.id, true);
    await f.client.copyInto(s, nodeId(f.fileUuid), docs.id);
    expect((await f.client.listFolder(s, docs.id)).map((e) => e.name)).toEqual(['hello.txt']);
    expect(await f.client.details(s, docs.id)).toMatchObject({ name: 'papers', kind: 'folder' });
    expect((await f.client.path(s, docs.id)).map((p) => p.name)).toEqual(['home', 'papers']);
    await f.client.remove(s, docs.id);
    expect((await f.client.listFolder(s, nodeId('trash'))).map((e) => e.name)).toContain('papers');
  });

  it('answers 404 not_implemented for every 3.0-only API endpoint, for an authenticated caller', async () => {
    for (const [method, path] of threeOnlyApiEndpoints(f)) {
      const res = await call(f, method, path);
      expect({ method, path, status: res.status, body: res.body }).toMatchObject({
        status: 404,
        body: { status: 'error', code: 'not_implemented' },
      });
    }
    // None of them did anything: the session is still alive (logout is not served).
    expect((await f.client.listFolder(f.admin, nodeId('home'))).map((e) => e.name)).toContain('hello.txt');
    expect(((await f.store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM users')) as { n: number }).n).toBe(1);
    expect(((await f.store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM organizations')) as { n: number }).n).toBe(1);
  });

  it('answers 404 not_implemented for view and download, even with a live key and a real file', async () => {
    for (const path of resourcePaths(f)) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await f.client.http.requestRaw({ method, path });
        expect(res.status).toBe(404);
        if (method === 'GET') expect(res.body).toMatchObject({ status: 'error', code: 'not_implemented' });
      }
    }
  });

  it('delivers share_copy_with straight into each recipient’s incoming (1.0 has no pending lists)', async () => {
    // 1.0 cannot create users: the recipient is made by a 3.0 store on the same data dir first.
    const tmp = makeTmpDir();
    try {
      const three = await startTestStore({ dataDir: tmp.dir });
      const seeder = await createSeeder(three);
      const bob = await seeder.user('Bob Oneo');
      await seeder.client.close();
      await three.close();

      const one = await startTestStore({ edition: '1.0', dataDir: tmp.dir });
      const client = createStoreClient(one.url, { retries: 0 });
      try {
        const admin = await client.login('admin', ADMIN_PASSWORD);
        const bobSession = await client.login(bob.email, 'Secret-Passw0rd');
        await uploadFile(client, bobSession, 'incoming', 'memo.txt', 'bob’s own memo');
        const file = await uploadFile(client, admin, 'home', 'memo.txt', 'a memo for bob');
        const shared = await client.http.requestRaw({ method: 'POST', path: `/api/nodes/${file}`, token: admin.token, json: { share_copy_with: [bob.uuid] } });
        expect(shared.status).toBe(204);
        const incoming = await client.listFolder(bobSession, nodeId('incoming'));
        expect(incoming.map((e) => e.name)).toEqual(['memo (2).txt', 'memo.txt']);
        const copy = (await one.ctx.storage.sql.get('SELECT * FROM nodes WHERE uuid = ?', [incoming[0]!.id])) as { owner_uuid: string; revision: number };
        expect(copy).toMatchObject({ owner_uuid: bob.uuid, revision: 1 });
        expect((await one.ctx.storage.sql.all('SELECT state, answered_by, node_uuid FROM incoming_shares'))).toEqual([{ state: 'accepted', answered_by: null, node_uuid: incoming[0]!.id }]);
        expect(await readBlobRefs(one, blobHashOf('a memo for bob'))).toBe(2);
        expect(((await one.ctx.storage.sql.get('SELECT disk_used FROM users WHERE uuid = ?', [bob.uuid])) as { disk_used: number }).disk_used).toBe(
          Buffer.byteLength('bob’s own memo') + Buffer.byteLength('a memo for bob'),
        );
      } finally {
        await client.close();
        await one.close();
      }
    } finally {
      tmp.remove();
    }
  });

  it('answers 404 not_implemented for public and upload links', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const res = await f.client.http.requestRaw({ method, path: `/public/${'t'.repeat(43)}${method === 'POST' ? '/upload' : ''}` });
      expect({ method, status: res.status, body: res.body }).toMatchObject({ method, status: 404, body: { code: 'not_implemented' } });
    }
  });

  it('authenticates /api paths first: a 3.0-only one without a token is 401, as every /api path', async () => {
    const res = await call(f, 'GET', '/api/user', false);
    expect(res.status).toBe(401);
  });
});

describe('edition 3.0', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture('3.0');
  });
  afterAll(async () => {
    await f.client.close();
    await f.store.close();
  });

  it('serves the 3.0-only endpoints driveway implements', async () => {
    expect((await call(f, 'GET', `/api/nodes/${f.fileUuid}/myaccess`)).body).toMatchObject({ status: 'success', data: expect.arrayContaining(['read']) });
    for (const path of resourcePaths(f)) {
      const res = await f.client.http.requestRaw({ method: 'GET', path });
      expect(res.status).toBe(200);
      expect(res.body).toBe('hello');
    }
    expect((await call(f, 'GET', '/api/user')).body).toMatchObject({ status: 'success', data: { uuid: f.admin.userId } });
    const created = await f.client.http.requestRaw({
      method: 'POST',
      path: '/api/admin/users',
      token: f.admin.token,
      json: { fullname: 'Edition User', email: 'edition@example.org', password: 'Edition-Passw0rd', disk_quota: 0, is_active: true, is_admin: false },
    });
    expect(created.status).toBe(200);
    const uuid = (created.body as { data: { uuid: string } }).data.uuid;
    const updated = await f.client.http.requestRaw({ method: 'PUT', path: `/api/admin/users/${uuid}`, token: f.admin.token, json: { comment: 'x' } });
    expect(updated.status).toBe(200);
    expect((await call(f, 'GET', '/api/groups')).body).toMatchObject({ status: 'success', data: [] });
    expect((await call(f, 'GET', '/api/admin/groups')).body).toMatchObject({ status: 'success', data: [] });
    expect((await call(f, 'GET', '/api/admin/organizations')).body).toMatchObject({ status: 'success', data: [{ id: 'default' }] });
    for (const path of ['/api/pending_shares', '/api/my_pending_shares', '/api/user/pending_incoming', '/api/shares', `/api/admin/users/${uuid}/approvers`]) {
      expect({ path, body: (await call(f, 'GET', path)).body }).toMatchObject({ path, body: { status: 'success', data: [] } });
    }
    expect((await call(f, 'GET', '/api/user/logout')).status).toBe(200);
    expect((await call(f, 'GET', '/api/user')).status).toBe(401);
  });
});
