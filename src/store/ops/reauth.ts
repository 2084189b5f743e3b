/**
 * Asking again (docs/security.md "Asking for the password again"): turning 2FA off, making new
 * recovery codes and making or revoking app passwords need the account password (`password`)
 * or a current two-factor code (`code`) in the body. A session opened less than
 * REAUTH_GRACE_MS ago may send neither: it has just shown both, and SPEC's clients call
 * POST /api/user/2fa {twofa:false} or the app password routes plainly right after login. Older
 * sessions without either get 403 `reauth_required`; a wrong one 403 `reauth_invalid` (not 401:
 * the session itself is fine), counted by the login limiter like a wrong login, since it is a
 * guess at the password. An app password never answers here: sessions opened with one are
 * refused these routes before (policy.ts).
 */
import { z } from 'zod';
import type { StoreContext } from '../context.js';
import type { ClientInfo } from '../client-ip.js';
import { forbidden, StoreHttpError } from '../envelope.js';
import { verifyPassword } from '../passwords.js';
import type { AuthenticatedUser } from '../sessions.js';
import { sessionCreated } from '../storage/sessions.js';
import { getUserByUuid, setTwofaLastStep } from '../storage/users.js';
import { checkTwofaCode } from './totp.js';

/** How long after sign-in a session may make these changes without sending proof again. */
export const REAUTH_GRACE_MS = 10 * 60_000;

/** The body fields that carry the proof; operations spread them into their own strict schemas. */
export const reauthFields = {
  password: z.string({ error: 'password must be a string' }).max(1024, 'password must have at most 1024 characters').optional(),
  code: z.string({ error: 'code must be a string' }).max(64, 'code must have at most 64 characters').optional(),
};

export interface ReauthProof {
  password?: string | undefined;
  code?: string | undefined;
}

/** Resolves when `caller` may go on with the change (`action` completes "... to ..."); throws 403 or 429 otherwise. */
export async function requireReauth(ctx: StoreContext, caller: AuthenticatedUser, proof: ReauthProof, client: ClientInfo, action: string): Promise<void> {
  const { storage: { sql }, clock } = ctx;
  const password = proof.password === '' ? undefined : proof.password;
  const code = proof.code?.trim() === '' ? undefined : proof.code;
  if (password === undefined && code === undefined) {
    const created = await sessionCreated(sql, caller.sessionId);
    if (created !== undefined && clock.now() - created <= REAUTH_GRACE_MS) return;
    throw forbidden(
      `to ${action}, send your password in the field "password" (or a current two-factor code in "code"): this session was opened more than ${REAUTH_GRACE_MS / 60_000} minutes ago`,
      'reauth_required',
    );
  }
  const user = await getUserByUuid(sql, caller.userUuid);
  if (!user) throw forbidden('no such user');
  const reservation = await ctx.loginLimiter.reserve(user.username, client.ip);
  if (!reservation.allowed) {
    throw new StoreHttpError(429, 'rate_limited', 'too many wrong passwords or codes; try again later', { 'Retry-After': String(reservation.retryAfterSec) });
  }
  const { attempt } = reservation;
  try {
    let ok = password === undefined || (await verifyPassword(password, user.password_hash));
    if (ok && code !== undefined) {
      const checked = user.twofa === 1 && user.twofa_secret !== null ? checkTwofaCode(user.twofa_secret, code, clock.now(), user.twofa_last_step) : undefined;
      ok = checked?.ok === true;
      if (checked?.ok) await setTwofaLastStep(sql, user.uuid, checked.step);
    }
    if (!ok) {
      await attempt.failed();
      throw forbidden(`the password or two-factor code sent to ${action} is wrong`, 'reauth_invalid');
    }
    await attempt.succeeded();
  } finally {
    await attempt.failed();
  }
}
