/**
 * GET/PUT /api/user/notifications: the eight booleans with their documented defaults (all
 * true), partial updates that keep the other keys, per-user storage, and a clear 400 naming the
 * key for unknown keys and non-booleans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';
import { apiCall, dataOf, readUserRow } from '../../helpers/user-api.js';

const KEYS = [
  'email_alert_owned',
  'email_alert_group_owned',
  'email_alert_shared_with_me',
  'email_alert_shared_with_my_groups',
  'realtime_alert_owned',
  'realtime_alert_group_owned',
  'realtime_alert_shared_with_me',
  'realtime_alert_shared_with_my_groups',
];
const DEFAULTS = Object.fromEntries(KEYS.map((key) => [key, true]));

let f: StoreFixture;
const get = (user: TestUser) => apiCall(f.client, user.session, 'GET', '/api/user/notifications');
const put = (user: TestUser, json: unknown) => apiCall(f.client, user.session, 'PUT', '/api/user/notifications', json);

beforeAll(async () => {
  f = await storeFixture();
});
afterAll(async () => {
  await f.close();
});

describe('/api/user/notifications', () => {
  it('answers the eight settings, all true, for a user who never changed one', async () => {
    const user = await f.newUser();
    expect((await get(user)).body).toStrictEqual({ status: 'success', msg: 'notification settings', data: DEFAULTS });
  });

  it('changes only the keys a PUT names, answers every setting, and keeps them', async () => {
    const user = await f.newUser();
    const first = await put(user, { email_alert_owned: false, realtime_alert_group_owned: false });
    expect(first.body).toStrictEqual({
      status: 'success',
      msg: 'notification settings updated',
      data: { ...DEFAULTS, email_alert_owned: false, realtime_alert_group_owned: false },
    });
    const second = dataOf(await put(user, { email_alert_owned: true, email_alert_shared_with_me: false }));
    expect(second).toStrictEqual({ ...DEFAULTS, realtime_alert_group_owned: false, email_alert_shared_with_me: false });
    expect(dataOf(await get(user))).toStrictEqual(second);
    expect(JSON.parse((await readUserRow(f.store, user.uuid)).notifications)).toStrictEqual({ email_alert_owned: true, realtime_alert_group_owned: false, email_alert_shared_with_me: false });
  });

  it('accepts an empty body and changes nothing', async () => {
    const user = await f.newUser();
    const before = await readUserRow(f.store, user.uuid);
    expect(dataOf(await put(user, {}))).toStrictEqual(DEFAULTS);
    expect(await readUserRow(f.store, user.uuid)).toEqual(before);
  });

  it('keeps each user’s settings apart', async () => {
    const one = await f.newUser();
    const two = await f.newUser();
    await put(one, { realtime_alert_owned: false });
    expect(dataOf(await get(two))).toStrictEqual(DEFAULTS);
  });

  it.each([
    ['an unknown key', { realtime_alert_owned: false, email_alert_everything: false }, /^unknown key "email_alert_everything"; the settings are email_alert_owned, /],
    ['a string', { realtime_alert_owned: false, email_alert_owned: 'false' }, /^email_alert_owned: must be true or false$/],
    ['a number', { realtime_alert_owned: false, realtime_alert_shared_with_me: 0 }, /^realtime_alert_shared_with_me: must be true or false$/],
    ['null', { realtime_alert_owned: false, email_alert_group_owned: null }, /^email_alert_group_owned: must be true or false$/],
    ['a body that is not an object', [true], /object/],
  ])('answers 400 naming the key for %s, applying nothing of the body', async (_what, json, msg) => {
    const user = await f.newUser();
    await put(user, { email_alert_owned: false });
    const res = await put(user, json);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(msg) });
    expect(dataOf(await get(user))).toStrictEqual({ ...DEFAULTS, email_alert_owned: false });
  });

  it('answers 401 without a token', async () => {
    expect((await apiCall(f.client, undefined, 'GET', '/api/user/notifications')).status).toBe(401);
    expect((await apiCall(f.client, undefined, 'PUT', '/api/user/notifications', { email_alert_owned: false })).status).toBe(401);
  });
});
