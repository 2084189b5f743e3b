/**
 * 2FA that cannot lock a person out (issue 31, item 3; docs/extensions.md "Two-factor set-up and
 * recovery codes", docs/security.md "Asking for the password again"): the set-up in two steps
 * (POST /api/user/2fa/setup, /confirm) turns 2FA on only with a valid code of the secret shown;
 * recovery codes (shown once, stored hashed) sign in once each in place of the code, counted in
 * the login history and by the limiter when wrong; turning 2FA off, new recovery codes and making
 * or revoking app passwords ask for the password or a code on a session older than the grace.
 * Codes come from test/helpers/totp.ts at the store's hand-moved clock.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/store-client/index.js';
import { REAUTH_GRACE_MS } from '../../../src/store/ops/reauth.js';
import { SETUP_TTL_MS } from '../../../src/store/ops/twofa.js';
import type { StoreFixture, TestUser } from '../../helpers/store-fixture.js';
import { totpCode } from '../../helpers/totp.js';
import { apiCall, dataOf, frozenStoreSuite, isLive, postAuth, readHistoryRows, readUserRow } from '../../helpers/user-api.js';

const STEP_MS = 30_000;
const CODE_FORMAT = /^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/;

let f: StoreFixture;

interface Setup {
  twofa: boolean;
  secret_twofa: string;
  otpauth_uri: string;
  setup_expires: number;
}

const post = (s: StoreSession | string, path: string, json?: unknown) => apiCall(f.client, s, 'POST', path, json);
const setup = (s: StoreSession | string) => post(s, '/api/user/2fa/setup', {});
const confirm = (s: StoreSession | string, code: string) => post(s, '/api/user/2fa/confirm', { code });
const codeNow = (secret: string, offsetSteps = 0): string => totpCode(secret, f.store.clock.now() + offsetSteps * STEP_MS);
const wrongCode = (secret: string): string => (codeNow(secret) === '000000' ? '111111' : '000000');
const loginWith = (user: TestUser, code?: string) => postAuth(f.client, { username: user.email, password: user.password, ...(code === undefined ? {} : { code }) });

function recoveryRows(userUuid: string): Promise<Array<{ code_hash: string; used: number | null }>> {
  return f.store.ctx.storage.sql.all('SELECT code_hash, used FROM twofa_recovery_codes WHERE user_uuid = ?', [userUuid]);
}

/** A user with 2FA on through the set-up: their secret and recovery codes. */
async function withTwofa(): Promise<TestUser & { secret: string; codes: string[] }> {
  const user = await f.newUser();
  const { secret_twofa: secret } = dataOf<Setup>(await setup(user.session));
  const { recovery_codes: codes } = dataOf<{ recovery_codes: string[] }>(await confirm(user.session, codeNow(secret)));
  // The confirming code's step is used: the login below needs the next one.
  f.store.clock.advance(STEP_MS);
  return { ...user, secret, codes };
}

/** Moves the clock past the grace, so the user's session counts as old. */
function ageSessions(): void {
  f.store.clock.advance(REAUTH_GRACE_MS + 1000);
}

frozenStoreSuite((fixture) => {
  f = fixture;
});

describe('the two-step set-up', () => {
  it('answers a pending secret and otpauth URI while 2FA stays off', async () => {
    const user = await f.newUser();
    const res = await setup(user.session);
    expect(res.status).toBe(200);
    const data = dataOf<Setup>(res);
    expect(data).toStrictEqual({ twofa: false, secret_twofa: expect.stringMatching(/^[A-Z2-7]{32}$/), otpauth_uri: expect.stringMatching(/^otpauth:\/\/totp\//), setup_expires: f.store.clock.now() + SETUP_TTL_MS });
    expect(new URL(data.otpauth_uri).searchParams.get('secret')).toBe(data.secret_twofa);
    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa: 0, twofa_secret: null, twofa_pending_secret: data.secret_twofa });
    expect(dataOf(await apiCall(f.client, user.session, 'GET', '/api/user/2fa'))).toStrictEqual({ twofa: false });
    // Off means off: the password alone still signs in.
    expect((await loginWith(user)).status).toBe(200);
  });

  it('leaves 2FA off on a wrong first code and says so; the right code then turns it on with ten recovery codes', async () => {
    const user = await f.newUser();
    const other = await f.client.login(user.email, user.password);
    const app = dataOf<{ uuid: string }>(await post(user.session, '/api/user/app_passwords', { name: 'laptop' }));
    const { secret_twofa: secret } = dataOf<Setup>(await setup(user.session));

    const wrong = await confirm(user.session, wrongCode(secret));
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ status: 'error', code: 'twofa_invalid', msg: expect.stringMatching(/wrong.*stays off/) });
    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa: 0, twofa_secret: null, twofa_pending_secret: secret });
    expect(await isLive(f.client, other)).toBe(true);
    expect((await loginWith(user)).status).toBe(200);

    const right = await confirm(user.session, codeNow(secret));
    expect(right.status).toBe(200);
    const data = dataOf<{ twofa: boolean; recovery_codes: string[] }>(right);
    expect(Object.keys(data).sort()).toEqual(['recovery_codes', 'twofa']);
    expect(data.twofa).toBe(true);
    expect(data.recovery_codes).toHaveLength(10);
    for (const code of data.recovery_codes) expect(code).toMatch(CODE_FORMAT);
    expect(new Set(data.recovery_codes).size).toBe(10);
    // Stored hashed: the SHA-256 of each code without dashes, never the code.
    const rows = await recoveryRows(user.uuid);
    expect(rows.map((r) => r.code_hash).sort()).toEqual(data.recovery_codes.map((c) => createHash('sha256').update(c.replace(/-/g, '')).digest('hex')).sort());
    expect(rows.every((r) => r.used === null)).toBe(true);
    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa: 1, twofa_secret: secret, twofa_pending_secret: null });
    // As with SPEC's enabling: other sessions and app passwords end, the caller's stays.
    expect(await isLive(f.client, other)).toBe(false);
    expect(await isLive(f.client, user.session)).toBe(true);
    expect(dataOf<unknown[]>(await apiCall(f.client, user.session, 'GET', '/api/user/app_passwords')).map((a) => (a as { uuid: string }).uuid)).not.toContain(app.uuid);
    expect((await loginWith(user)).body).toMatchObject({ code: 'twofa_required' });
    // The confirming code is spent: it cannot sign in again.
    expect((await loginWith(user, codeNow(secret))).body).toMatchObject({ code: 'twofa_invalid' });
    f.store.clock.advance(STEP_MS);
    expect((await loginWith(user, codeNow(secret))).status).toBe(200);
    expect(dataOf(await apiCall(f.client, user.session, 'GET', '/api/user/2fa'))).toStrictEqual({ twofa: true, recovery_codes_left: 10 });
  });

  it('a new set-up replaces the pending one: a code of the first secret no longer confirms', async () => {
    const user = await f.newUser();
    const first = dataOf<Setup>(await setup(user.session)).secret_twofa;
    const second = dataOf<Setup>(await setup(user.session)).secret_twofa;
    expect(second).not.toBe(first);
    expect((await confirm(user.session, codeNow(first))).body).toMatchObject({ code: 'twofa_invalid' });
    expect((await readUserRow(f.store, user.uuid)).twofa).toBe(0);
    expect((await confirm(user.session, codeNow(second))).status).toBe(200);
  });

  it('answers 409 twofa_not_set_up without a set-up and after it expired, leaving 2FA off', async () => {
    const user = await f.newUser();
    expect((await confirm(user.session, '123456')).body).toMatchObject({ status: 'error', code: 'twofa_not_set_up', msg: expect.stringMatching(/start it again/) });
    const { secret_twofa: secret } = dataOf<Setup>(await setup(user.session));
    f.store.clock.advance(SETUP_TTL_MS);
    const late = await confirm(user.session, codeNow(secret));
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ code: 'twofa_not_set_up' });
    expect((await readUserRow(f.store, user.uuid)).twofa).toBe(0);
  });

  it('answers 409 twofa_enabled to a set-up while 2FA is on, and 400 to a confirmation without a code', async () => {
    const user = await withTwofa();
    expect((await setup(user.session)).body).toMatchObject({ code: 'twofa_enabled' });
    const fresh = await f.newUser();
    const res = await post(fresh.session, '/api/user/2fa/confirm', {});
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', msg: expect.stringMatching(/^code: /) });
  });

  it('SPEC’s {twofa: true} still turns it on at once, now answering recovery codes that work', async () => {
    const user = await f.newUser();
    const data = dataOf<{ twofa: boolean; secret_twofa: string; recovery_codes: string[] }>(await post(user.session, '/api/user/2fa', { twofa: true }));
    expect(data.twofa).toBe(true);
    expect(data.recovery_codes).toHaveLength(10);
    expect((await loginWith(user, data.recovery_codes[3])).status).toBe(200);
    expect((await loginWith(user, codeNow(data.secret_twofa))).status).toBe(200);
  });
});

describe('signing in with a recovery code', () => {
  it('signs in once and only once with each code, recorded in the login history with the codes left', async () => {
    const user = await withTwofa();
    const code = user.codes[0] as string;
    // Typed loosely (upper case, spaces): the same code.
    const res = await loginWith(user, ` ${code.toUpperCase().replace(/-/g, ' ')} `);
    expect(res.status).toBe(200);
    expect(await isLive(f.client, (res.body as { token: string }).token)).toBe(true);
    expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'success', action_args: 'password and recovery code (9 left)', error_details: '' });
    expect((await recoveryRows(user.uuid)).filter((r) => r.used !== null)).toHaveLength(1);

    const again = await loginWith(user, code);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ status: 'error', code: 'twofa_invalid', msg: expect.stringMatching(/recovery code/) });
    expect((await readHistoryRows(f.store, user.uuid)).at(-1)).toMatchObject({ status: 'failure', action_args: 'password and recovery code', error_details: 'wrong or used recovery code' });
    expect(dataOf(await apiCall(f.client, user.session, 'GET', '/api/user/2fa'))).toStrictEqual({ twofa: true, recovery_codes_left: 9 });
    // The history the person reads says so too.
    const history = dataOf<Array<{ action_args: string }>>(await apiCall(f.client, user.session, 'GET', '/api/user/login_history'));
    expect(history.some((e) => e.action_args.startsWith('password and recovery code (9 left)'))).toBe(true);
  });

  it('spends a code once when two logins race with it', async () => {
    const user = await withTwofa();
    const results = await Promise.all([loginWith(user, user.codes[1]), loginWith(user, user.codes[1])]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    expect((await recoveryRows(user.uuid)).filter((r) => r.used !== null)).toHaveLength(1);
  });

  it('counts wrong recovery codes toward the login rate limit', async () => {
    const user = await withTwofa();
    for (let i = 0; i < 10; i += 1) expect((await loginWith(user, 'aaaa-bbbb-cccc-dddd')).body).toMatchObject({ code: 'twofa_invalid' });
    const blocked = await loginWith(user, user.codes[2]);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ code: 'rate_limited' });
    expect((await recoveryRows(user.uuid)).every((r) => r.used === null)).toBe(true);
    expect((await readHistoryRows(f.store, user.uuid)).filter((e) => e.error_details === 'wrong or used recovery code')).toHaveLength(10);
  });

  it('makes new codes on request (asking again on an old session); the old ones stop working', async () => {
    const user = await withTwofa();
    ageSessions();
    const refused = await post(user.session, '/api/user/2fa/recovery_codes', {});
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'reauth_required' });
    const renewed = dataOf<{ recovery_codes: string[] }>(await post(user.session, '/api/user/2fa/recovery_codes', { password: user.password }));
    expect(renewed.recovery_codes).toHaveLength(10);
    expect(renewed.recovery_codes).not.toContain(user.codes[0]);
    expect((await loginWith(user, user.codes[0])).body).toMatchObject({ code: 'twofa_invalid' });
    expect((await loginWith(user, renewed.recovery_codes[0])).status).toBe(200);
  });

  it('forgets the codes when 2FA goes off, by the user or an administrator', async () => {
    const user = await withTwofa();
    expect((await post(user.session, '/api/user/2fa', { twofa: false })).status).toBe(200);
    expect(await recoveryRows(user.uuid)).toEqual([]);
    const other = await withTwofa();
    expect((await apiCall(f.client, f.admin, 'PUT', `/api/admin/users/${other.uuid}`, { twofa: false })).status).toBe(200);
    expect(await recoveryRows(other.uuid)).toEqual([]);
    expect(await readUserRow(f.store, other.uuid)).toMatchObject({ twofa: 0, twofa_secret: null, twofa_pending_secret: null });
  });
});

describe('asking for the password again', () => {
  it('refuses turning 2FA off on an old session without proof (403 reauth_required), and a wrong password (reauth_invalid)', async () => {
    const user = await withTwofa();
    ageSessions();
    const refused = await post(user.session, '/api/user/2fa', { twofa: false });
    expect(refused.status).toBe(403);
    expect(refused.body).toStrictEqual({ status: 'error', code: 'reauth_required', msg: expect.stringMatching(/"password".*"code".*10 minutes/) });
    const wrong = await post(user.session, '/api/user/2fa', { twofa: false, password: 'Wrong-Passw0rd' });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ code: 'reauth_invalid' });
    expect((await readUserRow(f.store, user.uuid)).twofa).toBe(1);
    // The session itself is fine.
    expect(await isLive(f.client, user.session)).toBe(true);
  });

  it('turns 2FA off on an old session with the password, or with a current code', async () => {
    const byPassword = await withTwofa();
    const byCode = await withTwofa();
    ageSessions();
    expect(dataOf(await post(byPassword.session, '/api/user/2fa', { twofa: false, password: byPassword.password }))).toStrictEqual({ twofa: false });
    expect((await readUserRow(f.store, byPassword.uuid)).twofa).toBe(0);
    expect((await post(byCode.session, '/api/user/2fa', { twofa: false, code: wrongCode(byCode.secret) })).body).toMatchObject({ code: 'reauth_invalid' });
    expect(dataOf(await post(byCode.session, '/api/user/2fa', { twofa: false, code: codeNow(byCode.secret) }))).toStrictEqual({ twofa: false });
    expect((await readUserRow(f.store, byCode.uuid)).twofa).toBe(0);
  });

  it('asks again for making and revoking app passwords on an old session, then accepts the password or a code', async () => {
    const user = await withTwofa();
    const early = dataOf<{ uuid: string }>(await post(user.session, '/api/user/app_passwords', { name: 'made at once' }));
    ageSessions();
    const refused = await post(user.session, '/api/user/app_passwords', { name: 'laptop' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'reauth_required', msg: expect.stringMatching(/make an app password/) });
    expect((await post(user.session, '/api/user/app_passwords', { name: 'laptop', password: 'Wrong-Passw0rd' })).body).toMatchObject({ code: 'reauth_invalid' });
    const names = async () => dataOf<Array<{ name: string }>>(await apiCall(f.client, user.session, 'GET', '/api/user/app_passwords')).map((a) => a.name);
    expect(await names()).toEqual(['made at once']);
    expect((await post(user.session, '/api/user/app_passwords', { name: 'laptop', password: user.password })).status).toBe(200);
    expect((await post(user.session, '/api/user/app_passwords', { name: 'phone', code: codeNow(user.secret) })).status).toBe(200);

    const path = `/api/user/app_passwords/${early.uuid}`;
    expect((await apiCall(f.client, user.session, 'DELETE', path)).body).toMatchObject({ code: 'reauth_required', msg: expect.stringMatching(/revoke an app password/) });
    expect(await names()).toContain('made at once');
    expect((await apiCall(f.client, user.session, 'DELETE', path, { password: user.password })).status).toBe(200);
    expect((await names()).sort()).toEqual(['laptop', 'phone']);
  });

  it('lets a session signed in less than 10 minutes ago go on without proof (SPEC’s plain calls)', async () => {
    const user = await withTwofa();
    const login = await loginWith(user, codeNow(user.secret));
    const token = (login.body as { token: string }).token;
    f.store.clock.advance(REAUTH_GRACE_MS - 60_000);
    expect((await post(token, '/api/user/app_passwords', { name: 'rclone' })).status).toBe(200);
    expect(dataOf(await post(token, '/api/user/2fa', { twofa: false }))).toStrictEqual({ twofa: false });
  });

  it('counts wrong passwords sent as proof toward the login rate limit', async () => {
    const user = await f.newUser();
    ageSessions();
    for (let i = 0; i < 10; i += 1) expect((await post(user.session, '/api/user/app_passwords', { name: 'x', password: 'Wrong-Passw0rd' })).body).toMatchObject({ code: 'reauth_invalid' });
    const blocked = await post(user.session, '/api/user/app_passwords', { name: 'x', password: user.password });
    expect(blocked.status).toBe(429);
    expect((await loginWith(user)).status).toBe(429);
  });
});
