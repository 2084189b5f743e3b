/**
 * POST /api/admin/users and PUT /api/admin/users/{user_uuid}: every field and rule, who may
 * call them (administrators; the built-in admin across organizations), the protections of the
 * built-in admin, and the quota rule against real usage. Stored rows are asserted, not only
 * statuses, and a refused request must leave no trace.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../../src/store/passwords.js';
import { createStoreClient, type RawResponse, type HttpStoreClient, type StoreSession } from '../../../src/store-client/index.js';
import { ADMIN_PASSWORD, startTestStore, type TestStore } from '../../helpers/start-store.js';
import { uploadFile } from '../../helpers/seed.js';
import type { UserRow } from '../../../src/store/storage/users.js';

const PASSWORD = 'Valid-Passw0rd';


let store: TestStore;
let client: HttpStoreClient;
let admin: StoreSession;
let emailCounter = 0;
const uniqueEmail = (stem = 'user'): string => `${stem}.${++emailCounter}@example.org`;

async function userRow(uuid: string): Promise<UserRow | undefined> {
  return (await store.ctx.storage.sql.get('SELECT * FROM users WHERE uuid = ?', [uuid])) as UserRow | undefined;
}
async function userCount(): Promise<number> {
  return ((await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM users')) as { n: number }).n;
}
async function builtinUuid(): Promise<string> {
  return ((await store.ctx.storage.sql.get('SELECT uuid FROM users WHERE is_builtin = 1')) as { uuid: string }).uuid;
}

function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { fullname: 'New Person', email: uniqueEmail(), password: PASSWORD, disk_quota: 0, is_active: true, is_admin: false, ...overrides };
}

function post(session: StoreSession | undefined, json: unknown, query = ''): Promise<RawResponse> {
  return client.http.requestRaw({ method: 'POST', path: `/api/admin/users${query}`, json, ...(session ? { token: session.token } : {}) });
}

function put(session: StoreSession | undefined, uuid: string, json: unknown): Promise<RawResponse> {
  return client.http.requestRaw({ method: 'PUT', path: `/api/admin/users/${uuid}`, json, ...(session ? { token: session.token } : {}) });
}

/** Creates organization `id` through the extension (docs/extensions.md) unless it exists. */
async function ensureOrg(id: string, allowUnlimitedQuota = true): Promise<void> {
  const res = await client.http.requestRaw({
    method: 'POST',
    path: '/api/admin/organizations',
    token: admin.token,
    json: { id, name: `Org ${id}`, allow_unlimited_quota: allowUnlimitedQuota },
  });
  expect([200, 409]).toContain(res.status);
}

async function createUser(overrides: Record<string, unknown> = {}, session = admin, query = ''): Promise<{ uuid: string; email: string }> {
  const body = validBody(overrides);
  const res = await post(session, body, query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { uuid: (res.body as { data: { uuid: string } }).data.uuid, email: String(body.email) };
}

beforeAll(async () => {
  store = await startTestStore();
  client = createStoreClient(store.url, { retries: 0 });
});
beforeEach(async () => {
  admin = await client.login('admin', ADMIN_PASSWORD);
});
afterAll(async () => {
  await client.close();
  await store.close();
});

describe('POST /api/admin/users', () => {
  it('creates the user with every field, its seven top-level folders, and answers its uuid', async () => {
    const before = store.clock.now();
    const res = await post(admin, {
      fullname: 'Ada Lovelace',
      email: 'Ada.Lovelace@Example.org',
      password: PASSWORD,
      disk_quota: 1_000_000,
      is_active: true,
      is_admin: true,
      comment: 'first programmer',
    });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ status: 'success', msg: 'user created', data: { uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
    const uuid = (res.body as { data: { uuid: string } }).data.uuid;
    const row = await userRow(uuid) as UserRow;
    expect(row).toMatchObject({
      username: 'Ada.Lovelace@Example.org',
      email: 'Ada.Lovelace@Example.org',
      fullname: 'Ada Lovelace',
      is_active: 1,
      is_admin: 1,
      is_builtin: 0,
      org_id: 'default',
      disk_quota: 1_000_000,
      disk_used: 0,
      twofa: 0,
      twofa_secret: null,
      comment: 'first programmer',
    });
    expect(row.created).toBeGreaterThanOrEqual(before);
    expect(row.password_hash).toMatch(/^scrypt\$1024\$/);
    expect(row.password_hash).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, row.password_hash)).toBe(true);

    const tops = (await store.ctx.storage.sql.all('SELECT top_kind, owner_type, type FROM nodes WHERE owner_uuid = ? ORDER BY top_kind', [uuid]));
    expect(tops).toEqual(
      ['favorites', 'home', 'incoming', 'private_shares', 'public_shares', 'shared_with_you', 'trash'].map((k) => ({ top_kind: k, owner_type: 'User', type: 'Dir' })),
    );
    const session = await client.login('ada.lovelace@example.org', PASSWORD);
    expect(session).toMatchObject({ userId: uuid, isAdmin: true, fullname: 'Ada Lovelace' });
    expect(await client.listFolder(session, 'home' as Parameters<HttpStoreClient['listFolder']>[1])).toEqual([]);
  });

  it('stores an empty comment when none is given, and an inactive non-admin as asked', async () => {
    const { uuid } = await createUser({ is_active: false, is_admin: false });
    expect(await userRow(uuid)).toMatchObject({ comment: '', is_active: 0, is_admin: 0 });
  });

  it('works through the client', async () => {
    const email = uniqueEmail('client');
    const uuid = await client.createUser(admin, { fullname: 'Client Made', email, password: PASSWORD, diskQuotaBytes: 5000 });
    expect(await userRow(uuid as string)).toMatchObject({ email, disk_quota: 5000 });
  });

  it.each([
    ['-1 (unlimited by policy)', -1],
    ['0 (unlimited)', 0],
    ['a byte count', 123_456_789],
  ])('accepts disk_quota %s', async (_what, quota) => {
    const { uuid } = await createUser({ disk_quota: quota });
    expect((await userRow(uuid))?.disk_quota).toBe(quota);
  });

  it('trims the full name and accepts exactly three characters', async () => {
    const { uuid } = await createUser({ fullname: '  Bob  ' });
    expect((await userRow(uuid))?.fullname).toBe('Bob');
  });

  it.each([
    ['fullname shorter than 3 characters', { fullname: 'Al' }, 'invalid_request', /fullname/],
    ['fullname of spaces around 2 characters', { fullname: '  Al  ' }, 'invalid_request', /fullname/],
    ['fullname with a digit', { fullname: 'Agent 007' }, 'invalid_request', /digits/],
    ['fullname with a non-ASCII digit', { fullname: 'Agent ٣' }, 'invalid_request', /digits/],
    ['fullname not a string', { fullname: 123 }, 'invalid_request', /fullname/],
    ['an invalid email', { email: 'not-an-email' }, 'invalid_request', /email/],
    ['the admin name as email', { email: 'admin' }, 'invalid_request', /email/],
    ['a password shorter than 8', { password: 'Ab1defg' }, 'invalid_password', /at least 8/],
    ['a password without lowercase', { password: 'ABCDEFG1' }, 'invalid_password', /lowercase/],
    ['a password without uppercase', { password: 'abcdefg1' }, 'invalid_password', /uppercase/],
    ['a password without digit', { password: 'Abcdefgh' }, 'invalid_password', /digit/],
    ['a password longer than 1024 characters', { password: `Aa1${'x'.repeat(1022)}` }, 'invalid_request', /password/],
    ['disk_quota below -1', { disk_quota: -2 }, 'invalid_request', /disk_quota/],
    ['a fractional disk_quota', { disk_quota: 1.5 }, 'invalid_request', /disk_quota/],
    ['disk_quota as a string', { disk_quota: '100' }, 'invalid_request', /disk_quota/],
    ['is_active as a string', { is_active: 'true' }, 'invalid_request', /is_active/],
    ['is_admin missing', { is_admin: undefined }, 'invalid_request', /is_admin/],
    ['is_active missing', { is_active: undefined }, 'invalid_request', /is_active/],
    ['disk_quota missing', { disk_quota: undefined }, 'invalid_request', /disk_quota/],
    ['password missing', { password: undefined }, 'invalid_request', /password/],
    ['comment not a string', { comment: 5 }, 'invalid_request', /comment/],
    ['an unknown key', { nickname: 'Ada' }, 'invalid_request', /nickname/],
    ['twofa (not a create field)', { twofa: false }, 'invalid_request', /twofa/],
  ])('answers 400 and creates nobody for %s', async (_what, overrides, code, msg) => {
    const before = await userCount();
    const res = await post(admin, validBody(overrides));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code, msg: expect.stringMatching(msg) });
    expect(await userCount()).toBe(before);
  });

  it('answers 400 for a body that is not an object', async () => {
    expect((await post(admin, ['x'])).status).toBe(400);
    expect((await client.http.requestRaw({ method: 'POST', path: '/api/admin/users', token: admin.token })).status).toBe(400);
  });

  it('answers 409 email_taken for an email in use, whatever its case, and creates nobody', async () => {
    const { email } = await createUser();
    const before = await userCount();
    for (const variant of [email, email.toUpperCase()]) {
      const res = await post(admin, validBody({ email: variant }));
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ status: 'error', code: 'email_taken' });
    }
    expect(await userCount()).toBe(before);
  });

  it('answers 403 to a caller without administrator privileges and creates nobody', async () => {
    const { email } = await createUser();
    const user = await client.login(email, PASSWORD);
    const before = await userCount();
    const res = await post(user, validBody());
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ status: 'error', code: 'forbidden' });
    expect(await userCount()).toBe(before);
  });

  it('answers 401 without a token', async () => {
    expect((await post(undefined, validBody())).status).toBe(401);
  });

  describe('organizations', () => {
    it('lets the built-in admin create a user in another organization through org_id', async () => {
      await ensureOrg('acme');
      const { uuid } = await createUser({}, admin, '?org_id=acme');
      expect((await userRow(uuid))?.org_id).toBe('acme');
    });

    it('answers 404 for an org_id no organization has, and creates nobody', async () => {
      const before = await userCount();
      const res = await post(admin, validBody(), '?org_id=nowhere');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ status: 'error', code: 'not_found', msg: 'organization not found' });
      expect(await userCount()).toBe(before);
    });

    it('accepts disk_quota -1 only where the organization allows unlimited quotas', async () => {
      await ensureOrg('strict', false);
      const before = await userCount();
      const res = await post(admin, validBody({ disk_quota: -1 }), '?org_id=strict');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/^disk_quota: -1 .*"strict"/) });
      expect(await userCount()).toBe(before);
      const { uuid } = await createUser({ disk_quota: 5000 }, admin, '?org_id=strict');
      expect((await put(admin, uuid, { disk_quota: -1 })).status).toBe(400);
      expect((await userRow(uuid))?.disk_quota).toBe(5000);
    });

    it('refuses disk_quota 0 (no quota) where the organization forbids unlimited quotas, on create and on update', async () => {
      await ensureOrg('strict', false);
      const before = await userCount();
      const res = await post(admin, validBody({ disk_quota: 0 }), '?org_id=strict');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', msg: 'disk_quota: 0 (unlimited) is not allowed in organization "strict"; give a quota in bytes' });
      expect(await userCount()).toBe(before);
      const { uuid } = await createUser({ disk_quota: 5000 }, admin, '?org_id=strict');
      const update = await put(admin, uuid, { disk_quota: 0 });
      expect(update.status).toBe(400);
      expect(update.body).toMatchObject({ msg: expect.stringMatching(/^disk_quota: 0 \(unlimited\) is not allowed/) });
      expect((await userRow(uuid))?.disk_quota).toBe(5000);
    });

    it('answers 400 for a malformed org_id', async () => {
      const res = await post(admin, validBody(), '?org_id=a%20b');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/org_id/) });
    });

    it('lets another administrator create users in their own organization only', async () => {
      await ensureOrg('acme');
      const { email } = await createUser({ is_admin: true }, admin, '?org_id=acme');
      const acmeAdmin = await client.login(email, PASSWORD);
      const { uuid } = await createUser({}, acmeAdmin);
      expect((await userRow(uuid))?.org_id).toBe('acme');
      expect((await userRow((await createUser({}, acmeAdmin, '?org_id=acme')).uuid))?.org_id).toBe('acme');
      const before = await userCount();
      const res = await post(acmeAdmin, validBody(), '?org_id=default');
      expect(res.status).toBe(403);
      expect(await userCount()).toBe(before);
    });
  });
});

describe('PUT /api/admin/users/{user_uuid}', () => {
  it('changes fullname and comment and bumps updated', async () => {
    const { uuid } = await createUser({ fullname: 'Old Name', comment: 'old' });
    const before = await userRow(uuid) as UserRow;
    store.clock.advance(1_000);
    const res = await put(admin, uuid, { fullname: 'New Name', comment: 'new' });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ status: 'success', msg: 'user updated' });
    const after = await userRow(uuid) as UserRow;
    expect(after).toMatchObject({ fullname: 'New Name', comment: 'new', email: before.email, password_hash: before.password_hash });
    expect(after.updated).toBeGreaterThan(before.updated);
  });

  it('changes the email, which becomes the login name', async () => {
    const { uuid, email } = await createUser();
    const newEmail = uniqueEmail('renamed');
    expect((await put(admin, uuid, { email: newEmail })).status).toBe(200);
    expect(await userRow(uuid)).toMatchObject({ email: newEmail, username: newEmail });
    expect((await client.login(newEmail, PASSWORD)).userId).toBe(uuid);
    await expect(client.login(email, PASSWORD)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it('accepts the user’s own email in another case', async () => {
    const { uuid, email } = await createUser();
    expect((await put(admin, uuid, { email: email.toUpperCase() })).status).toBe(200);
    expect((await userRow(uuid))?.email).toBe(email.toUpperCase());
  });

  it('answers 409 email_taken for another user’s email, in any case, and changes nothing', async () => {
    const { email: taken } = await createUser();
    const { uuid, email } = await createUser();
    for (const variant of [taken, taken.toUpperCase()]) {
      const res = await put(admin, uuid, { email: variant, fullname: 'Should Not Stick' });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'email_taken' });
    }
    expect(await userRow(uuid)).toMatchObject({ email, fullname: 'New Person' });
  });

  it('sets a new password, revokes the user’s sessions, and the old password stops working', async () => {
    const { uuid, email } = await createUser();
    const session = await client.login(email, PASSWORD);
    expect((await put(admin, uuid, { password: 'Brand-New-Passw0rd' })).status).toBe(200);
    await expect(client.currentUser(session)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(client.login(email, PASSWORD)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect((await client.login(email, 'Brand-New-Passw0rd')).userId).toBe(uuid);
  });

  it.each([
    ['short', 'Ab1'],
    ['without uppercase', 'abcdefg1'],
    ['without lowercase', 'ABCDEFG1'],
    ['without digit', 'Abcdefgh'],
  ])('answers 400 invalid_password for a password %s and keeps the old one', async (_what, password) => {
    const { uuid, email } = await createUser();
    const hash = (await userRow(uuid))?.password_hash;
    const res = await put(admin, uuid, { password, fullname: 'Should Not Stick' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_password' });
    expect(await userRow(uuid)).toMatchObject({ password_hash: hash, fullname: 'New Person' });
    expect((await client.login(email, PASSWORD)).userId).toBe(uuid);
  });

  it.each([
    ['fullname too short', { fullname: 'Al' }, /fullname/],
    ['fullname with a digit', { fullname: 'R2 Unit' }, /digits/],
    ['an invalid email', { email: 'nope' }, /email/],
    ['a fractional disk_quota', { disk_quota: 2.5 }, /disk_quota/],
    ['is_active as a number', { is_active: 0 }, /is_active/],
    ['is_admin as a string', { is_admin: 'yes' }, /is_admin/],
    ['twofa true (users enable it themselves)', { twofa: true }, /twofa/],
    ['comment not a string', { comment: [] }, /comment/],
    ['an unknown key', { uuid: 'x' }, /uuid/],
  ])('answers 400 for %s and changes nothing', async (_what, body, msg) => {
    const { uuid } = await createUser();
    const before = await userRow(uuid);
    const res = await put(admin, uuid, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(msg) });
    expect(await userRow(uuid)).toEqual(before);
  });

  it('accepts an empty body and changes no field', async () => {
    const { uuid } = await createUser();
    const before = await userRow(uuid) as UserRow;
    expect((await put(admin, uuid, {})).status).toBe(200);
    expect({ ...(await userRow(uuid)), updated: 0 }).toEqual({ ...before, updated: 0 });
  });

  it('deactivates (revoking sessions) and reactivates a user', async () => {
    const { uuid, email } = await createUser();
    const session = await client.login(email, PASSWORD);
    expect((await put(admin, uuid, { is_active: false })).status).toBe(200);
    expect((await userRow(uuid))?.is_active).toBe(0);
    await expect(client.currentUser(session)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(client.login(email, PASSWORD)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect((await put(admin, uuid, { is_active: true })).status).toBe(200);
    expect((await userRow(uuid))?.is_active).toBe(1);
    expect((await client.login(email, PASSWORD)).userId).toBe(uuid);
  });

  it('grants and withdraws administrator privileges, effective on the user’s live session', async () => {
    const { uuid, email } = await createUser();
    const session = await client.login(email, PASSWORD);
    expect((await post(session, validBody())).status).toBe(403);
    expect((await put(admin, uuid, { is_admin: true })).status).toBe(200);
    expect((await userRow(uuid))?.is_admin).toBe(1);
    expect((await post(session, validBody())).status).toBe(200);
    expect((await put(admin, uuid, { is_admin: false })).status).toBe(200);
    expect((await post(session, validBody())).status).toBe(403);
  });

  it('disables two-factor authentication and forgets the secret and the replay guard', async () => {
    const { uuid } = await createUser();
    (await store.ctx.storage.sql.run("UPDATE users SET twofa = 1, twofa_secret = 'JBSWY3DPEHPK3PXP', twofa_last_step = 58000000 WHERE uuid = ?", [uuid]));
    expect((await put(admin, uuid, { twofa: false })).status).toBe(200);
    expect(await userRow(uuid)).toMatchObject({ twofa: 0, twofa_secret: null, twofa_last_step: null });
  });

  it('works through the client', async () => {
    const { uuid } = await createUser();
    await client.updateUser(admin, uuid, { fullname: 'Client Updated', diskQuotaBytes: 4096, comment: 'via client' });
    expect(await userRow(uuid)).toMatchObject({ fullname: 'Client Updated', disk_quota: 4096, comment: 'via client' });
  });

  describe('disk_quota against current usage', () => {
    it('must exceed what the user already stores, unless it is 0', async () => {
      const { uuid, email } = await createUser({ disk_quota: 10_000 });
      const session = await client.login(email, PASSWORD);
      await uploadFile(client, session, 'home', 'a.bin', Buffer.alloc(1000, 1));
      expect((await userRow(uuid))?.disk_used).toBe(1000);

      for (const quota of [999, 1000]) {
        const res = await put(admin, uuid, { disk_quota: quota });
        expect(res.status, `quota ${quota}`).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/must exceed current usage \(1000 bytes\)/) });
        expect((await userRow(uuid))?.disk_quota).toBe(10_000);
      }
      const below = await put(admin, uuid, { disk_quota: -2 });
      expect(below.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/disk_quota must be -1, 0 or a positive/) });
      expect((await put(admin, uuid, { disk_quota: 1001 })).status).toBe(200);
      expect((await userRow(uuid))?.disk_quota).toBe(1001);
      expect((await put(admin, uuid, { disk_quota: 0 })).status).toBe(200);
      expect((await userRow(uuid))?.disk_quota).toBe(0);
      // The default organization allows unlimited quotas: -1 is unlimited like 0.
      expect((await put(admin, uuid, { disk_quota: -1 })).status).toBe(200);
      expect((await userRow(uuid))?.disk_quota).toBe(-1);
    });

    it('accepts any positive quota for a user who stores nothing', async () => {
      const { uuid } = await createUser();
      expect((await put(admin, uuid, { disk_quota: 1 })).status).toBe(200);
      expect((await userRow(uuid))?.disk_quota).toBe(1);
    });
  });

  describe('who may change whom', () => {
    it('answers 404 for an unknown or malformed user uuid', async () => {
      for (const id of ['6f1c0f5e-7c2a-4b8e-9d1e-3a2b1c0d9e8f', 'not-a-uuid']) {
        const res = await put(admin, id, { comment: 'x' });
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ status: 'error', code: 'not_found', msg: 'user not found' });
      }
    });

    it('accepts the uuid in upper case', async () => {
      const { uuid } = await createUser();
      expect((await put(admin, uuid.toUpperCase(), { comment: 'upper' })).status).toBe(200);
      expect((await userRow(uuid))?.comment).toBe('upper');
    });

    it('answers 403 to a caller without administrator privileges and changes nothing', async () => {
      const { uuid, email } = await createUser();
      const user = await client.login(email, PASSWORD);
      const res = await put(user, uuid, { is_admin: true });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'forbidden' });
      expect((await userRow(uuid))?.is_admin).toBe(0);
      expect((await put(user, '6f1c0f5e-7c2a-4b8e-9d1e-3a2b1c0d9e8f', {})).status).toBe(403);
    });

    it('refuses to deactivate the built-in admin or take its privileges (403), but allows other changes', async () => {
      const uuid = await builtinUuid();
      for (const body of [{ is_active: false }, { is_admin: false }, { is_active: false, fullname: 'Not Stored' }]) {
        const res = await put(admin, uuid, body);
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'forbidden', msg: expect.stringMatching(/built-in admin/) });
      }
      expect(await userRow(uuid)).toMatchObject({ is_active: 1, is_admin: 1, fullname: 'Administrator' });
      expect((await put(admin, uuid, { is_active: true, is_admin: true, fullname: 'Chief Admin' })).status).toBe(200);
      expect(await userRow(uuid)).toMatchObject({ fullname: 'Chief Admin', username: 'admin' });
      expect((await put(admin, uuid, { fullname: 'Administrator' })).status).toBe(200);
    });

    it('keeps `admin` as the built-in admin’s login name when its email changes', async () => {
      const uuid = await builtinUuid();
      expect((await put(admin, uuid, { email: 'root@example.org' })).status).toBe(200);
      expect(await userRow(uuid)).toMatchObject({ email: 'root@example.org', username: 'admin' });
      expect((await client.login('admin', ADMIN_PASSWORD)).userId).toBe(uuid);
    });

    it('lets only the built-in admin change the built-in admin', async () => {
      const { email } = await createUser({ is_admin: true });
      const otherAdmin = await client.login(email, PASSWORD);
      const res = await put(otherAdmin, await builtinUuid(), { password: 'Taken-Over-Passw0rd' });
      expect(res.status).toBe(403);
      expect((await client.login('admin', ADMIN_PASSWORD)).userId).toBe(await builtinUuid());
    });

    it('lets another administrator change users of their own organization, and hides the others (404)', async () => {
      await ensureOrg('globex');
      const { email } = await createUser({ is_admin: true }, admin, '?org_id=globex');
      const globexAdmin = await client.login(email, PASSWORD);
      const { uuid: colleague } = await createUser({}, globexAdmin);
      const { uuid: outsider } = await createUser();
      expect((await put(globexAdmin, colleague, { comment: 'colleague' })).status).toBe(200);
      expect((await userRow(colleague))?.comment).toBe('colleague');
      const res = await put(globexAdmin, outsider, { comment: 'outsider' });
      expect(res.status).toBe(404);
      expect((await userRow(outsider))?.comment).toBe('');
      expect((await put(admin, colleague, { comment: 'by the built-in admin' })).status).toBe(200);
    });

    it('lets an administrator deactivate another administrator', async () => {
      const { uuid, email } = await createUser({ is_admin: true });
      const session = await client.login(email, PASSWORD);
      expect((await put(admin, uuid, { is_active: false })).status).toBe(200);
      await expect(client.currentUser(session)).rejects.toMatchObject({ kind: 'unauthenticated' });
    });
  });
});
