/**
 * Two-factor authentication: GET/POST /api/user/2fa, and POST /auth for an account with 2FA on.
 * Codes come from the tests' own RFC 6238 implementation (test/helpers/totp.ts), computed from
 * the secret the store answered, at the store's hand-moved clock. Covers the secret shown once,
 * other sessions ended on enabling, the login flow (code missing, wrong, replayed, one step
 * either side), the rate limit, disabling by the user and by an administrator.
 */
import { describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/store-client/index.js';
import { authenticateFileAccessKey } from '../../../src/store/sessions.js';
import type { StoreFixture, TestUser } from '../../helpers/store-fixture.js';
import { base32Decode, totpCode, totpStep } from '../../helpers/totp.js';
import { apiCall, dataOf, frozenStoreSuite, readHistoryRows, isLive, postAuth, readUserRow } from '../../helpers/user-api.js';

const STEP_MS = 30_000;
const BAD_CREDENTIALS = { status: 'error', msg: 'wrong username or password', code: 'unauthenticated' };

let f: StoreFixture;

interface TwofaUser extends TestUser {
  secret: string;
}

function twofa(session: StoreSession | string, json?: unknown) {
  return apiCall(f.client, session, json === undefined ? 'GET' : 'POST', '/api/user/2fa', json);
}

async function withTwofa(): Promise<TwofaUser> {
  const user = await f.newUser();
  const data = dataOf<{ secret_twofa: string }>(await twofa(user.session, { twofa: true }));
  return { ...user, secret: data.secret_twofa };
}

const codeNow = (secret: string, offsetSteps = 0): string => totpCode(secret, f.store.clock.now() + offsetSteps * STEP_MS);
const loginWith = (user: TestUser, extra: Record<string, unknown> = {}) => postAuth(f.client, { username: user.email, password: user.password, ...extra });

// Codes are computed from the store's clock: only the tests move it.
frozenStoreSuite((fixture) => {
  f = fixture;
});

describe('GET/POST /api/user/2fa', () => {
  it('answers twofa false for a new user', async () => {
    const user = await f.newUser();
    expect((await twofa(user.session)).body).toStrictEqual({ status: 'success', msg: 'two-factor status', data: { twofa: false } });
  });

  it('enables 2FA and shows the base32 secret, an otpauth URI and the recovery codes once, never again', async () => {
    const user = await f.newUser();
    const res = await twofa(user.session, { twofa: true });
    expect(res.status).toBe(200);
    const data = dataOf<{ twofa: boolean; secret_twofa: string; otpauth_uri: string; recovery_codes: string[] }>(res);
    expect(Object.keys(data).sort()).toEqual(['otpauth_uri', 'recovery_codes', 'secret_twofa', 'twofa']);
    expect(data.recovery_codes).toHaveLength(10);
    expect(data.twofa).toBe(true);
    expect(data.secret_twofa).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(data.secret_twofa)).toHaveLength(20);
    const uri = new URL(data.otpauth_uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(uri.searchParams.get('secret')).toBe(data.secret_twofa);
    expect(uri.searchParams.get('issuer')).toBe('driveway');
    expect(decodeURIComponent(uri.pathname)).toContain(user.email);

    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa: 1, twofa_secret: data.secret_twofa, twofa_last_step: null });
    expect((await twofa(user.session)).body).toStrictEqual({ status: 'success', msg: 'two-factor status', data: { twofa: true, recovery_codes_left: 10 } });
    const profile = await apiCall(f.client, user.session, 'GET', '/api/user');
    expect(dataOf(profile)).toMatchObject({ twofa: true });
    expect(JSON.stringify(profile.body)).not.toContain(data.secret_twofa);
    expect(JSON.stringify(profile.body)).not.toContain(data.recovery_codes[0]);
  });

  it('ends the user’s other sessions on enabling, keeping the caller’s', async () => {
    const user = await f.newUser();
    const other = await f.client.login(user.email, user.password);
    expect(dataOf(await twofa(user.session, { twofa: true }))).toMatchObject({ twofa: true });
    expect(await isLive(f.client, other)).toBe(false);
    expect((await authenticateFileAccessKey(f.store.ctx.storage.sql, f.store.clock, other.fileAccessKey))).toBeUndefined();
    expect(await isLive(f.client, user.session)).toBe(true);
  });

  it('answers 409 twofa_enabled when 2FA is already on, keeping the secret', async () => {
    const user = await withTwofa();
    const res = await twofa(user.session, { twofa: true });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: 'error', code: 'twofa_enabled', msg: expect.stringMatching(/already enabled/) });
    expect((await readUserRow(f.store, user.uuid)).twofa_secret).toBe(user.secret);
  });

  it.each([
    ['no body', undefined, /twofa/],
    ['an empty body', {}, /twofa/],
    ['a string', { twofa: 'true' }, /twofa/],
    ['an unknown key', { twofa: true, secret: 'x' }, /secret/],
  ])('answers 400 naming the field for %s, changing nothing', async (_what, json, msg) => {
    const user = await f.newUser();
    const res = await apiCall(f.client, user.session, 'POST', '/api/user/2fa', json);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_request', msg: expect.stringMatching(msg) });
    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa: 0, twofa_secret: null });
  });

  it('disables with a session signed in minutes ago alone and forgets the secret; disabling when off changes nothing', async () => {
    const user = await withTwofa();
    expect((await twofa(user.session, { twofa: false })).body).toStrictEqual({ status: 'success', msg: 'two-factor authentication disabled', data: { twofa: false } });
    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa: 0, twofa_secret: null, twofa_last_step: null });
    const updated = (await readUserRow(f.store, user.uuid)).updated;
    f.store.clock.advance(1000);
    expect(dataOf(await twofa(user.session, { twofa: false }))).toStrictEqual({ twofa: false });
    expect((await readUserRow(f.store, user.uuid)).updated).toBe(updated);
    expect((await loginWith(user)).status).toBe(200);
  });

  it('answers 401 without a token', async () => {
    expect((await apiCall(f.client, undefined, 'GET', '/api/user/2fa')).status).toBe(401);
    expect((await apiCall(f.client, undefined, 'POST', '/api/user/2fa', { twofa: true })).status).toBe(401);
  });
});

describe('POST /auth with 2FA on', () => {
  it('answers 401 twofa_required, naming the field code, to the right password without a code, and does not count it', async () => {
    const user = await withTwofa();
    for (let i = 0; i < 12; i += 1) {
      const res = await loginWith(user, i % 2 === 0 ? {} : { code: '  ' });
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual({ status: 'error', code: 'twofa_required', msg: expect.stringMatching(/two-factor code is needed.*"code"/) });
    }
    // Twelve of them and no 429: only a wrong password or a wrong code counts.
    expect((await loginWith(user, { code: codeNow(user.secret) })).status).toBe(200);
    expect((await readHistoryRows(f.store, user.uuid)).filter((e) => e.error_details === 'two-factor code required')).toHaveLength(12);
  });

  it('answers the usual 401 to a wrong password, with or without the right code, never mentioning 2FA', async () => {
    const user = await withTwofa();
    for (const extra of [{}, { code: codeNow(user.secret) }]) {
      const res = await postAuth(f.client, { username: user.email, password: 'Wrong-Passw0rd', ...extra });
      expect(res.status).toBe(401);
      expect(res.body).toStrictEqual(BAD_CREDENTIALS);
    }
    expect((await readUserRow(f.store, user.uuid)).twofa_last_step).toBeNull();
  });

  it('logs in with the code an independent TOTP computes from the secret, and records how', async () => {
    const user = await withTwofa();
    const res = await loginWith(user, { code: codeNow(user.secret) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', uuid: user.uuid, token: expect.any(String) });
    expect(await isLive(f.client, (res.body as { token: string }).token)).toBe(true);
    expect((await readUserRow(f.store, user.uuid)).twofa_last_step).toBe(totpStep(f.store.clock.now()));
    expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'success', action_args: 'password and two-factor code', error_details: '' });
  });

  it('accepts a code only once (no replay within its window), then the next step’s code', async () => {
    const user = await withTwofa();
    const code = codeNow(user.secret);
    expect((await loginWith(user, { code })).status).toBe(200);
    const replay = await loginWith(user, { code });
    expect(replay.status).toBe(401);
    expect(replay.body).toStrictEqual({ status: 'error', code: 'twofa_invalid', msg: expect.stringMatching(/wrong or was already used/) });
    expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'failure', error_details: 'two-factor code already used' });
    f.store.clock.advance(STEP_MS);
    expect((await loginWith(user, { code: codeNow(user.secret) })).status).toBe(200);
  });

  it('accepts codes one step either side of now, refuses two steps away, and never a step before the last accepted', async () => {
    const user = await withTwofa();
    for (const offset of [-2, 2]) {
      const res = await loginWith(user, { code: codeNow(user.secret, offset) });
      expect(res.body, `offset ${offset}`).toMatchObject({ code: 'twofa_invalid' });
    }
    expect((await loginWith(user, { code: codeNow(user.secret, -1) })).status).toBe(200);
    expect((await loginWith(user, { code: codeNow(user.secret, 1) })).status).toBe(200);
    // Step now+1 was accepted: the code of now (an earlier step) is refused as used.
    expect((await loginWith(user, { code: codeNow(user.secret) })).body).toMatchObject({ code: 'twofa_invalid' });
    expect((await readUserRow(f.store, user.uuid)).twofa_last_step).toBe(totpStep(f.store.clock.now()) + 1);
  });

  it.each([['abcdef'], ['12345'], ['1234567'], ['12 34 5x']])('answers twofa_invalid to the malformed code %j', async (code) => {
    const user = await withTwofa();
    const res = await loginWith(user, { code });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'twofa_invalid' });
    expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'failure', error_details: 'wrong two-factor code' });
  });

  it('answers 400 to a code that is not a string', async () => {
    const user = await withTwofa();
    const res = await loginWith(user, { code: 123456 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/^code: /) });
  });

  it('counts wrong codes toward the login rate limit', async () => {
    const user = await withTwofa();
    const right = codeNow(user.secret);
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 10; i += 1) expect((await loginWith(user, { code: wrong })).body).toMatchObject({ code: 'twofa_invalid' });
    const blocked = await loginWith(user, { code: right });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ code: 'rate_limited' });
    expect((await readUserRow(f.store, user.uuid)).twofa_last_step).toBeNull();
    expect((await readHistoryRows(f.store, user.uuid)).filter((e) => e.error_details === 'wrong two-factor code')).toHaveLength(10);
  });

  it('lets an administrator turn 2FA off (twofa:false), clearing the secret and the replay state', async () => {
    const user = await withTwofa();
    expect((await loginWith(user, { code: codeNow(user.secret) })).status).toBe(200);
    expect((await readUserRow(f.store, user.uuid)).twofa_last_step).not.toBeNull();
    const res = await apiCall(f.client, f.admin, 'PUT', `/api/admin/users/${user.uuid}`, { twofa: false });
    expect(res.status).toBe(200);
    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa: 0, twofa_secret: null, twofa_last_step: null });
    expect((await loginWith(user)).status).toBe(200);
  });
});
