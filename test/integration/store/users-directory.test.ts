/**
 * GET /api/users: the users of the caller's organization only, by name; the fields of each
 * format (plain: uuid, fullname, email, avatar, is_active, is_admin; short and short_active:
 * uuid, fullname, email, the latter active users only); never hashes, secrets or quotas; any
 * other format is a 400 naming the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/store-client/index.js';
import { dataUrl, pngBytes } from '../../helpers/images.js';
import { storeFixture, type StoreFixture } from '../../helpers/store-fixture.js';
import { apiCall, dataOf } from '../../helpers/user-api.js';

const PASSWORD = 'Directory-Passw0rd';

let f: StoreFixture;
let north: Record<'zoe' | 'adam' | 'mia', string>;
let adamSession: StoreSession;
let southUuid: string;
let southSession: StoreSession;
let adamAvatar: string;

async function member(org: string, fullname: string, email: string, extra: { isActive?: boolean; isAdmin?: boolean; diskQuotaBytes?: number } = {}): Promise<string> {
  return (await f.client.createUser(f.admin, { fullname, email, password: PASSWORD, ...extra }, org)) as string;
}

const users = (session: StoreSession, query = '') => apiCall(f.client, session, 'GET', `/api/users${query}`);

beforeAll(async () => {
  f = await storeFixture();
  for (const id of ['north', 'south']) {
    const res = await apiCall(f.client, f.admin, 'POST', '/api/admin/organizations', { id, name: `${id} organization`, allow_unlimited_quota: true });
    expect(res.status).toBe(200);
  }
  north = {
    zoe: await member('north', 'Zoe Zeta', 'zoe@north.example', { isAdmin: true, diskQuotaBytes: 123_456 }),
    adam: await member('north', 'adam Alpha', 'adam@north.example'),
    mia: await member('north', 'Mia Mu', 'mia@north.example', { isActive: false }),
  };
  southUuid = await member('south', 'Sam South', 'sam@south.example');
  adamSession = await f.client.login('adam@north.example', PASSWORD);
  southSession = await f.client.login('sam@south.example', PASSWORD);
  adamAvatar = dataOf<{ avatar: string }>(await apiCall(f.client, adamSession, 'PUT', '/api/user', { avatar: dataUrl(pngBytes()) })).avatar;
  // Secrets that must never show: a TOTP secret for Zoe.
  await apiCall(f.client, await f.client.login('zoe@north.example', PASSWORD), 'POST', '/api/user/2fa', { twofa: true });
});
afterAll(async () => {
  await f.close();
});

describe('GET /api/users', () => {
  it('lists the caller’s organization by name with uuid, fullname, email, avatar, is_active and is_admin', async () => {
    const res = await users(adamSession);
    expect(res.body).toMatchObject({ status: 'success', msg: 'users of your organization' });
    expect(dataOf(res)).toStrictEqual([
      { uuid: north.adam, fullname: 'adam Alpha', email: 'adam@north.example', avatar: adamAvatar, is_active: true, is_admin: false },
      { uuid: north.mia, fullname: 'Mia Mu', email: 'mia@north.example', avatar: '', is_active: false, is_admin: false },
      { uuid: north.zoe, fullname: 'Zoe Zeta', email: 'zoe@north.example', avatar: '', is_active: true, is_admin: true },
    ]);
  });

  it('answers format=short with uuid, fullname and email of every member, inactive ones too', async () => {
    expect(dataOf(await users(adamSession, '?format=short'))).toStrictEqual([
      { uuid: north.adam, fullname: 'adam Alpha', email: 'adam@north.example' },
      { uuid: north.mia, fullname: 'Mia Mu', email: 'mia@north.example' },
      { uuid: north.zoe, fullname: 'Zoe Zeta', email: 'zoe@north.example' },
    ]);
  });

  it('answers format=short_active with the active members only', async () => {
    expect(dataOf(await users(adamSession, '?format=short_active'))).toStrictEqual([
      { uuid: north.adam, fullname: 'adam Alpha', email: 'adam@north.example' },
      { uuid: north.zoe, fullname: 'Zoe Zeta', email: 'zoe@north.example' },
    ]);
  });

  it('never shows another organization’s users, nor hashes, secrets, 2FA state or quotas', async () => {
    const south = dataOf<Array<{ uuid: string }>>(await users(southSession));
    expect(south.map((u) => u.uuid)).toEqual([southUuid]);
    for (const query of ['', '?format=short', '?format=short_active']) {
      const text = JSON.stringify((await users(adamSession, query)).body);
      expect(text).not.toContain(southUuid);
      expect(text).not.toMatch(/scrypt|password|secret|twofa|quota|disk_used|123456|comment|org_id/);
    }
    const defaultOrg = dataOf<Array<{ uuid: string }>>(await users(f.admin));
    expect(defaultOrg.map((u) => u.uuid)).not.toContain(north.adam);
    expect(defaultOrg.map((u) => u.uuid)).toContain(f.admin.userId);
  });

  it.each([['?format=long'], ['?format='], ['?format=SHORT'], ['?format=short&format=short_active']])('answers 400 naming format for %s', async (query) => {
    const res = await users(adamSession, query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(/^format: must be "short" or "short_active"/) });
  });

  it('answers 401 without a token', async () => {
    expect((await apiCall(f.client, undefined, 'GET', '/api/users')).status).toBe(401);
  });
});
