/**
 * GET /api/user: the SPEC User profile of the caller, with the real quota and usage (usage
 * follows uploads), no pass_expires (no local password expiry), and nothing secret.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreClient, nodeId, type StoreClient, type StoreSession } from '../../../src/store-client/index.js';
import { ADMIN_PASSWORD, startTestStore, type TestStore } from '../../helpers/start-store.js';
import { uploadFile } from '../../helpers/seed.js';

const PASSWORD = 'Profile-Passw0rd';
const PROFILE_KEYS = ['avatar', 'created', 'disk_quota', 'disk_used', 'email', 'fullname', 'is_active', 'is_admin', 'twofa', 'uuid'];

let store: TestStore;
let client: StoreClient;
let admin: StoreSession;

async function getUser(session: StoreSession) {
  return client.http.requestRaw({ method: 'GET', path: '/api/user', token: session.token });
}

beforeAll(async () => {
  store = await startTestStore();
  client = createStoreClient(store.url, { retries: 0 });
  admin = await client.login('admin', ADMIN_PASSWORD);
});
afterAll(async () => {
  await client.close();
  await store.close();
});

describe('GET /api/user', () => {
  it('answers the built-in admin’s profile in the envelope, with exactly the SPEC fields', async () => {
    const row = store.ctx.db.prepare('SELECT uuid, created FROM users WHERE is_builtin = 1').get() as { uuid: string; created: number };
    const res = await getUser(admin);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      status: 'success',
      msg: 'current user',
      data: {
        uuid: row.uuid,
        fullname: 'Administrator',
        email: 'admin',
        is_active: true,
        is_admin: true,
        avatar: '',
        disk_quota: 0,
        disk_used: 0,
        twofa: false,
        created: row.created,
      },
    });
  });

  it('answers a user’s own profile: quota, name, email as created, and no pass_expires', async () => {
    const before = store.clock.now();
    const uuid = await client.createUser(admin, { fullname: 'Profile Person', email: 'Profile.Person@Example.org', password: PASSWORD, diskQuotaBytes: 50_000 });
    const session = await client.login('profile.person@example.org', PASSWORD);
    const res = await getUser(session);
    expect(res.status).toBe(200);
    const data = (res.body as { data: Record<string, unknown> }).data;
    expect(Object.keys(data).sort()).toEqual(PROFILE_KEYS);
    expect(data).toMatchObject({
      uuid,
      fullname: 'Profile Person',
      email: 'Profile.Person@Example.org',
      is_active: true,
      is_admin: false,
      disk_quota: 50_000,
      disk_used: 0,
      twofa: false,
    });
    expect(data.created).toBeGreaterThanOrEqual(before);
    expect(data.created).toBeLessThanOrEqual(store.clock.now());
    expect(JSON.stringify(res.body)).not.toMatch(/scrypt|password|secret/);
  });

  it('reports the real disk usage, which grows with every uploaded revision', async () => {
    const uuid = await client.createUser(admin, { fullname: 'Usage Person', email: 'usage@example.org', password: PASSWORD, diskQuotaBytes: 1_000_000 });
    const session = await client.login('usage@example.org', PASSWORD);
    const file = await uploadFile(client, session, 'home', 'report.txt', 'x'.repeat(1234));
    let profile = await client.currentUser(session);
    expect(profile).toMatchObject({ id: uuid, diskQuotaBytes: 1_000_000, diskUsedBytes: 1234 });

    await client.upload(session, { revisionOf: nodeId(file), name: 'report.txt' }, Readable.from([Buffer.alloc(100, 7)]), 100);
    profile = await client.currentUser(session);
    expect(profile.diskUsedBytes).toBe(1334);
    const stored = store.ctx.db.prepare('SELECT disk_used FROM users WHERE uuid = ?').get(uuid) as { disk_used: number };
    expect(stored.disk_used).toBe(1334);
  });

  it('shows changes an administrator made, on the same session', async () => {
    const uuid = await client.createUser(admin, { fullname: 'Before Change', email: 'changing@example.org', password: PASSWORD });
    const session = await client.login('changing@example.org', PASSWORD);
    await client.updateUser(admin, uuid as string, { fullname: 'After Change', isAdmin: true, diskQuotaBytes: 777 });
    expect(await client.currentUser(session)).toMatchObject({ fullname: 'After Change', isAdmin: true, diskQuotaBytes: 777 });
  });

  it('answers 401 without a token', async () => {
    const res = await client.http.requestRaw({ method: 'GET', path: '/api/user' });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: 'error', code: 'unauthenticated' });
  });
});
