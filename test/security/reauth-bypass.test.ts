/**
 * Asking for the password again, attacked (docs/security.md "Asking for the password again"): a
 * session left open on someone else's screen must not remove the second factor by any door. An
 * administrator's own 2FA is the user's own: PUT /api/admin/users/{self} {twofa:false} on an old
 * session would skip the proof POST /api/user/2fa asks for. Also held: a recovery code is no
 * proof for the change, a replayed TOTP code neither, and a confirmed secret is never replaced by
 * a set-up. One TOTP code is good once even when two changes race with it (the replay guard is
 * claimed in one statement, not read and then written).
 */
import { Client } from 'undici';
import { describe, expect, it } from 'vitest';
import type { StoreSession } from '../../src/store-client/index.js';
import { REAUTH_GRACE_MS } from '../../src/store/ops/reauth.js';
import type { StoreFixture, TestUser } from '../helpers/store-fixture.js';
import { totpCode } from '../helpers/totp.js';
import { apiCall, dataOf, frozenStoreSuite, readUserRow } from '../helpers/user-api.js';

const STEP_MS = 30_000;
let f: StoreFixture;

frozenStoreSuite((fixture) => {
  f = fixture;
});

const post = (s: StoreSession | string, path: string, json?: unknown) => apiCall(f.client, s, 'POST', path, json);
const codeNow = (secret: string): string => totpCode(secret, f.store.clock.now());

/** A user with 2FA on through the set-up: their secret and recovery codes; the confirming step used. */
async function withTwofa(user?: TestUser): Promise<TestUser & { secret: string; codes: string[] }> {
  const who = user ?? (await f.newUser());
  const { secret_twofa: secret } = dataOf<{ secret_twofa: string }>(await post(who.session, '/api/user/2fa/setup', {}));
  const { recovery_codes: codes } = dataOf<{ recovery_codes: string[] }>(await post(who.session, '/api/user/2fa/confirm', { code: codeNow(secret) }));
  f.store.clock.advance(STEP_MS);
  return { ...who, secret, codes };
}

const ageSessions = (): void => f.store.clock.advance(REAUTH_GRACE_MS + 1000);

describe('removing the second factor on an old session', () => {
  it('refuses an administrator turning their own 2FA off through the admin route (403, 2FA stays on)', async () => {
    const user = await f.newUser();
    expect((await apiCall(f.client, f.admin, 'PUT', `/api/admin/users/${user.uuid}`, { is_admin: true })).status).toBe(200);
    const admin = await withTwofa(user);
    ageSessions();
    const refused = await apiCall(f.client, admin.session, 'PUT', `/api/admin/users/${admin.uuid}`, { twofa: false });
    expect(refused.status).toBe(403);
    expect(refused.body).toStrictEqual({ status: 'error', code: 'forbidden', msg: expect.stringMatching(/\/api\/user\/2fa/) });
    expect(await readUserRow(f.store, admin.uuid)).toMatchObject({ twofa: 1, twofa_secret: admin.secret });
    // Another administrator still may (the lost-phone case), and the user's own route with proof.
    expect((await apiCall(f.client, f.admin, 'PUT', `/api/admin/users/${admin.uuid}`, { twofa: false })).status).toBe(200);
    expect((await readUserRow(f.store, admin.uuid)).twofa).toBe(0);
  });

  it('takes neither a recovery code nor a replayed TOTP code as the proof', async () => {
    const user = await withTwofa();
    ageSessions();
    expect((await post(user.session, '/api/user/2fa', { twofa: false, code: user.codes[0] })).body).toMatchObject({ code: 'reauth_invalid' });
    const code = codeNow(user.secret);
    expect((await post(user.session, '/api/user/2fa/recovery_codes', { code })).status).toBe(200);
    expect((await post(user.session, '/api/user/2fa', { twofa: false, code })).body).toMatchObject({ code: 'reauth_invalid' });
    expect((await readUserRow(f.store, user.uuid)).twofa).toBe(1);
  });

  it('never lets a set-up replace a confirmed secret', async () => {
    const user = await withTwofa();
    const res = await post(user.session, '/api/user/2fa/setup', {});
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: 'error', code: 'twofa_enabled' });
    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa_secret: user.secret, twofa_pending_secret: null });
  });
});

describe('turning the second factor on from a session left open', () => {
  it('asks for the password before a set-up or SPEC\'s one-step {twofa:true}, so an open session cannot lock its owner out', async () => {
    const user = await f.newUser();
    ageSessions();
    for (const [path, body] of [['/api/user/2fa/setup', {}], ['/api/user/2fa', { twofa: true }]] as const) {
      const refused = await post(user.session, path, body);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ status: 'error', code: 'reauth_required' });
      expect((await post(user.session, path, { ...body, password: 'not-the-password-1A' })).body).toMatchObject({ code: 'reauth_invalid' });
    }
    // Nothing changed: 2FA off, no secret waiting, the session and sign-in still work.
    expect(await readUserRow(f.store, user.uuid)).toMatchObject({ twofa: 0, twofa_secret: null, twofa_pending_secret: null });
    expect((await apiCall(f.client, undefined, 'POST', '/auth', { username: user.email, password: user.password })).status).toBe(200);
    // With the password the set-up starts, and confirming needs only the code of its secret.
    const { secret_twofa: secret } = dataOf<{ secret_twofa: string }>(await post(user.session, '/api/user/2fa/setup', { password: user.password }));
    expect((await post(user.session, '/api/user/2fa/confirm', { code: codeNow(secret) })).status).toBe(200);
    expect((await readUserRow(f.store, user.uuid)).twofa).toBe(1);
  });
});

describe('one TOTP code as the proof of two changes at once', () => {
  it('is accepted once: the other change is 403 reauth_invalid', async () => {
    const user = await withTwofa();
    ageSessions();
    const code = codeNow(user.secret);
    // Each on its own connection, so the store handles them side by side.
    const answers = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const client = new Client(f.store.url);
        try {
          const res = await client.request({
            method: 'POST',
            path: '/api/user/2fa/recovery_codes',
            headers: { authorization: `Bearer ${user.session.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ code }),
          });
          return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
        } finally {
          await client.close();
        }
      }),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 403, 403, 403, 403, 403]);
    for (const res of answers.filter((r) => r.status === 403)) expect(res.body).toMatchObject({ status: 'error', code: 'reauth_invalid' });
  });
});
