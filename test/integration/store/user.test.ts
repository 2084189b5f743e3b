/**
 * GET /api/user: the User profile (docs/api.md) of the caller, with the real quota and usage (usage
 * follows uploads), no pass_expires (no password lifetime configured), and nothing secret.
 * PUT /api/user: fullname, password (the password rule; other sessions end) and avatar (checked by
 * its bytes, served at the profile's link), each refusal naming the field and changing nothing.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreClient, nodeId, type HttpStoreClient, type StoreSession } from '../../../src/store-client/index.js';
import { ADMIN_PASSWORD, startTestStore, type TestStore } from '../../helpers/start-store.js';
import { uploadFile } from '../../helpers/seed.js';
import { dataUrl, jpegBytes, pngBytes } from '../../helpers/images.js';
import { apiCall, dataOf, isLive, readUserRow } from '../../helpers/user-api.js';

const PASSWORD = 'Profile-Passw0rd';
const PROFILE_KEYS = ['avatar', 'created', 'disk_quota', 'disk_used', 'email', 'fullname', 'is_active', 'is_admin', 'twofa', 'uuid'];

let store: TestStore;
let client: HttpStoreClient;
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
  it('answers the built-in admin’s profile in the envelope, with exactly the fields of docs/api.md', async () => {
    const row = (await store.ctx.storage.sql.get<{ uuid: string; created: number }>('SELECT uuid, created FROM users WHERE is_builtin = 1'))!;
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
    const stored = (await store.ctx.storage.sql.get<{ disk_used: number }>('SELECT disk_used FROM users WHERE uuid = ?', [uuid]))!;
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

describe('PUT /api/user', () => {
  let counter = 0;
  async function person(fullname = 'Editing Person'): Promise<{ uuid: string; email: string; session: StoreSession }> {
    const email = `editor.${++counter}@example.org`;
    const uuid = (await client.createUser(admin, { fullname, email, password: PASSWORD })) as string;
    return { uuid, email, session: await client.login(email, PASSWORD) };
  }
  const put = (session: StoreSession, json: unknown) => apiCall(client, session, 'PUT', '/api/user', json);

  it('changes the full name (trimmed; digits allowed) and answers the updated profile', async () => {
    const me = await person();
    const res = await put(me.session, { fullname: '  R2 Unit Person  ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', msg: 'profile updated', data: { uuid: me.uuid, fullname: 'R2 Unit Person' } });
    expect(Object.keys(dataOf(res)).sort()).toEqual(PROFILE_KEYS);
    expect((await readUserRow(store, me.uuid)).fullname).toBe('R2 Unit Person');
    expect((await client.login(me.email, PASSWORD)).fullname).toBe('R2 Unit Person');
  });

  it('accepts an empty body and changes nothing', async () => {
    const me = await person();
    const before = await readUserRow(store, me.uuid);
    expect(dataOf(await put(me.session, {}))).toMatchObject({ fullname: 'Editing Person' });
    expect(await readUserRow(store, me.uuid)).toEqual(before);
  });

  it.each([
    ['a full name of two characters', { fullname: 'Al' }, /^fullname: must have 3 to 255 characters$/],
    ['a full name of blanks around two characters', { fullname: '   Al   ' }, /^fullname: /],
    ['a full name of 256 characters', { fullname: 'x'.repeat(256) }, /^fullname: must have 3 to 255 characters$/],
    ['a full name with a control character', { fullname: 'Bad\u0007Name' }, /^fullname: must not contain control/],
    ['a full name that is not a string', { fullname: 42 }, /^fullname: must be a string/],
    ['an avatar that is not a string', { avatar: null }, /^avatar: must be a string/],
    ['a password that is not a string', { password: true }, /^password: must be a string/],
    ['an unknown key', { email: 'new@example.org' }, /email/],
    ['a body that is not an object', ['fullname'], /object/],
  ])('answers 400 invalid_request for %s, naming the field, and changes nothing', async (_what, json, msg) => {
    const me = await person();
    const before = await readUserRow(store, me.uuid);
    const res = await put(me.session, json);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(msg) });
    expect(await readUserRow(store, me.uuid)).toEqual(before);
  });

  describe('password', () => {
    it('sets a new password: the old one stops working, other sessions end, the caller’s goes on', async () => {
      const me = await person();
      const other = await client.login(me.email, PASSWORD);
      const before = store.clock.now();
      const res = await put(me.session, { password: 'Fresh-Passw0rd' });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toMatch(/Fresh-Passw0rd|scrypt/);
      expect(await isLive(client, me.session)).toBe(true);
      expect(await isLive(client, other)).toBe(false);
      await expect(client.login(me.email, PASSWORD)).rejects.toMatchObject({ kind: 'unauthenticated' });
      expect((await client.login(me.email, 'Fresh-Passw0rd')).userId).toBe(me.uuid);
      expect((await readUserRow(store, me.uuid)).password_changed).toBeGreaterThanOrEqual(before);
    });

    it.each([
      ['shorter than 8 characters', 'Ab1defg', /at least 8 characters/],
      ['without an uppercase letter', 'abcdefg1', /uppercase/],
      ['without a lowercase letter', 'ABCDEFG1', /lowercase/],
      ['without a digit', 'Abcdefgh', /digit/],
      ['equal to the current one', PASSWORD, /differ from the current/],
    ])('answers 400 invalid_password for a password %s, applying nothing of the body', async (_what, password, msg) => {
      const me = await person();
      const other = await client.login(me.email, PASSWORD);
      const before = await readUserRow(store, me.uuid);
      const res = await put(me.session, { fullname: 'Not Applied', password });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 'error', code: 'invalid_password', msg: expect.stringMatching(/^password must/) });
      expect((res.body as { msg: string }).msg).toMatch(msg);
      expect(await readUserRow(store, me.uuid)).toEqual(before);
      expect(await isLive(client, other)).toBe(true);
    });
  });

  describe('avatar', () => {
    async function fetchAvatar(link: string): Promise<{ status: number; type: string | undefined; bytes: Buffer }> {
      const res = await fetch(new URL(link, store.url));
      return { status: res.status, type: res.headers.get('content-type') ?? undefined, bytes: Buffer.from(await res.arrayBuffer()) };
    }

    it('sets a PNG: the profile and the session link to it, served with image/png', async () => {
      const me = await person();
      const png = pngBytes(4, 3);
      const data = dataOf<{ avatar: string }>(await put(me.session, { avatar: dataUrl(png) }));
      expect(data.avatar).toMatch(new RegExp(`^/avatars/${me.uuid}/[\\w-]+$`));
      expect(dataOf<{ avatar: string }>(await apiCall(client, me.session, 'GET', '/api/user')).avatar).toBe(data.avatar);
      expect((await client.http.requestRaw({ method: 'POST', path: '/auth', json: { username: me.email, password: PASSWORD } })).body).toMatchObject({ avatar: data.avatar });
      expect(await fetchAvatar(data.avatar)).toEqual({ status: 200, type: 'image/png', bytes: png });
    });

    it('goes by the bytes, not the prefix: JPEG bytes declared as PNG are served as image/jpeg', async () => {
      const me = await person();
      const jpeg = jpegBytes(5, 5);
      const data = dataOf<{ avatar: string }>(await put(me.session, { avatar: dataUrl(jpeg, 'image/png') }));
      expect(await fetchAvatar(data.avatar)).toEqual({ status: 200, type: 'image/jpeg', bytes: jpeg });
    });

    it('replaces the picture under a new link (the old one answers 404) and "" resets to the default', async () => {
      const me = await person();
      const first = dataOf<{ avatar: string }>(await put(me.session, { avatar: dataUrl(pngBytes(2, 2)) })).avatar;
      const second = dataOf<{ avatar: string }>(await put(me.session, { avatar: dataUrl(pngBytes(2, 2, [0, 0, 255])) })).avatar;
      expect(second).not.toBe(first);
      expect((await fetchAvatar(first)).status).toBe(404);
      expect(dataOf(await put(me.session, { avatar: '' }))).toMatchObject({ avatar: '' });
      expect((await fetchAvatar(second)).status).toBe(404);
      expect(await store.ctx.storage.sql.get('SELECT 1 FROM avatars WHERE owner_uuid = ?', [me.uuid])).toBeUndefined();
    });

    it.each([
      ['text declared as a PNG', dataUrl(Buffer.from('<svg onload="alert(1)"/>'), 'image/png'), /not a PNG or JPEG/],
      ['a GIF', dataUrl(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'), 'image/gif'), /not a PNG or JPEG/],
      ['a PNG above avatarMaxBytes', dataUrl(Buffer.concat([pngBytes(), Buffer.alloc(600 * 1024)])), /larger than 524288 bytes/],
      ['something that is no data URL', 'https://example.org/me.png', /data URL/],
    ])('answers 400 naming avatar for %s, keeping the current picture', async (_what, avatar, msg) => {
      const me = await person();
      const current = dataOf<{ avatar: string }>(await put(me.session, { avatar: dataUrl(pngBytes()) })).avatar;
      const res = await put(me.session, { avatar, fullname: 'Not Applied' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(/^avatar: /) });
      expect((res.body as { msg: string }).msg).toMatch(msg);
      expect(dataOf(await apiCall(client, me.session, 'GET', '/api/user'))).toMatchObject({ avatar: current, fullname: 'Editing Person' });
    });
  });

  it('answers 401 without a token', async () => {
    const res = await client.http.requestRaw({ method: 'PUT', path: '/api/user', json: { fullname: 'Nobody Here' } });
    expect(res.status).toBe(401);
  });
});
