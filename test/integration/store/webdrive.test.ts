/**
 * GET/POST/DELETE /api/user/webdrive: the name rule (3 to 10 of a-z and 0-9, reserved names
 * refused), uniqueness across owners, replacing frees the old name, deleting frees it, the URL to
 * mount beside the name, and edition 1.0 answering 404. Stored rows are asserted too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreClient, type RawResponse } from '../../../src/store-client/index.js';
import { startTestStore } from '../../helpers/start-store.js';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';

let f: StoreFixture;
let alice: TestUser;
let bob: TestUser;

function call(user: TestUser | undefined, method: 'GET' | 'POST' | 'DELETE', json?: unknown): Promise<RawResponse> {
  return f.client.http.requestRaw({ method, path: '/api/user/webdrive', ...(user ? { token: user.session.token } : {}), ...(json === undefined ? {} : { json }) });
}

function rowOf(ownerUuid: string): Promise<{ endpoint: string; owner_type: string } | undefined> {
  return f.store.ctx.storage.sql.get<{ endpoint: string; owner_type: string }>('SELECT endpoint, owner_type FROM webdrive_endpoints WHERE owner_uuid = ?', [ownerUuid]);
}

beforeAll(async () => {
  f = await storeFixture({ flags: { 'bridge.publicUrl': 'https://dav.example.org/' } });
  alice = await f.newUser();
  bob = await f.newUser();
});
afterAll(async () => {
  await f.close();
});

describe('/api/user/webdrive', () => {
  it('answers endpoint null while the user has none, and the drive\'s root URL all the same', async () => {
    const res = await call(alice, 'GET');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', msg: 'webdrive endpoint', data: { endpoint: null, url: null, root_url: 'https://dav.example.org/' } });
  });

  it('creates an endpoint and answers it with the URL to mount', async () => {
    const res = await call(alice, 'POST', { endpoint: 'alice1' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', data: { endpoint: 'alice1', url: 'https://dav.example.org/webdrive/alice1/', root_url: 'https://dav.example.org/' } });
    expect((await call(alice, 'GET')).body).toMatchObject({ data: { endpoint: 'alice1' } });
    expect(await rowOf(alice.uuid)).toEqual({ endpoint: 'alice1', owner_type: 'User' });
  });

  it.each([
    ['ab', /3 to 10/],
    ['abcdefghijk', /3 to 10/],
    ['Alice', /lowercase/],
    ['al-ce', /lowercase/],
    ['al ce', /lowercase/],
    ['café', /lowercase/],
    ['admin', /reserved/],
    ['webdav', /reserved/],
  ])('refuses %j with a 400 that names the field', async (endpoint, why) => {
    const res = await call(bob, 'POST', { endpoint });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(/^endpoint: /) });
    expect((res.body as { msg: string }).msg).toMatch(why);
    expect(await rowOf(bob.uuid)).toBeUndefined();
  });

  it('refuses a body without endpoint, with another type, or with unknown keys', async () => {
    for (const body of [{}, { endpoint: 42 }, { endpoint: 'bobby', extra: 1 }]) {
      const res = await call(bob, 'POST', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ status: 'error' });
    }
    expect(await rowOf(bob.uuid)).toBeUndefined();
  });

  it('refuses a name another user holds (409), without naming the holder', async () => {
    const res = await call(bob, 'POST', { endpoint: 'alice1' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'endpoint_taken' });
    expect(JSON.stringify(res.body)).not.toContain(alice.uuid);
    expect((await rowOf(alice.uuid))?.endpoint).toBe('alice1');
  });

  it('replaces the endpoint and frees the old name for others', async () => {
    expect((await call(alice, 'POST', { endpoint: 'alice2' })).status).toBe(200);
    expect((await rowOf(alice.uuid))?.endpoint).toBe('alice2');
    const res = await call(bob, 'POST', { endpoint: 'alice1' });
    expect(res.status).toBe(200);
    expect((await rowOf(bob.uuid))?.endpoint).toBe('alice1');
  });

  it('accepts setting the same name again', async () => {
    expect((await call(alice, 'POST', { endpoint: 'alice2' })).status).toBe(200);
    expect((await rowOf(alice.uuid))?.endpoint).toBe('alice2');
  });

  it('deletes the endpoint, freeing the name; deleting again still succeeds', async () => {
    expect((await call(alice, 'DELETE')).body).toMatchObject({ status: 'success', msg: 'webdrive endpoint deleted' });
    expect(await rowOf(alice.uuid)).toBeUndefined();
    expect((await call(alice, 'GET')).body).toMatchObject({ data: { endpoint: null, url: null } });
    expect((await call(alice, 'DELETE')).status).toBe(200);
    expect((await call(bob, 'POST', { endpoint: 'alice2' })).status).toBe(200);
  });

  it('answers 401 without a token', async () => {
    expect((await call(undefined, 'GET')).status).toBe(401);
    expect((await call(undefined, 'POST', { endpoint: 'nobody' })).status).toBe(401);
  });

  it('does not exist in edition 1.0 (404)', async () => {
    const old = await startTestStore({ edition: '1.0' });
    const client = createStoreClient(old.url, { retries: 0 });
    try {
      const admin = await client.login('admin', old.adminPassword);
      for (const method of ['GET', 'POST', 'DELETE'] as const) {
        const res = await client.http.requestRaw({ method, path: '/api/user/webdrive', token: admin.token, json: method === 'POST' ? { endpoint: 'oldone' } : undefined });
        expect(res.status, method).toBe(404);
      }
    } finally {
      await client.close();
      await old.close();
    }
  });
});
