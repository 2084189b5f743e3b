/**
 * Two-factor authentication of the current user (docs/api.md "Current user": GET/POST /api/user/2fa)
 * and the TOTP check login uses. TOTP is RFC 6238 (HMAC-SHA1, 6 digits, 30 s steps) from
 * `otpauth`; a code is accepted one step either side of now, and only for a step later than the
 * last accepted one, so a code is good once. Enabling answers the base32 secret once (and an
 * `otpauth://` URI for QR apps), ends the user's other sessions and deletes their app passwords:
 * nothing let in by the password alone keeps working. The secret is never shown again.
 */
import { Secret, TOTP } from 'otpauth';
import { withSql } from '../context.js';
import { z } from 'zod';
import type { StoreContext } from '../context.js';
import { deleteUserAppPasswords, setTwofa } from '../storage/users.js';
import { conflict } from '../envelope.js';
import { revokeOtherSessions, type AuthenticatedUser } from '../sessions.js';
import { callerRow } from './caller.js';
import { parseInput } from './input.js';

const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
const ISSUER = 'driveway';

/** `data` of the 2FA answers: `secret_twofa` and `otpauth_uri` only right after enabling. */
export interface TwofaStatus {
  twofa: boolean;
  secret_twofa?: string;
  otpauth_uri?: string;
}

const setSchema = z.strictObject({ twofa: z.boolean({ error: 'twofa must be true or false' }) });

export type CodeVerdict = { ok: true; step: number } | { ok: false; reason: 'wrong' | 'replayed' };

/** Checks a login's `code` against the user's secret at `nowMs`, given the last accepted step. */
export function checkTwofaCode(secretBase32: string, code: string, nowMs: number, lastStep: number | null): CodeVerdict {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return { ok: false, reason: 'wrong' };
  const delta = TOTP.validate({ ...TOTP_PARAMS, token, secret: Secret.fromBase32(secretBase32), timestamp: nowMs, window: 1 });
  if (delta === null) return { ok: false, reason: 'wrong' };
  const step = TOTP.counter({ period: TOTP_PARAMS.period, timestamp: nowMs }) + delta;
  if (lastStep !== null && step <= lastStep) return { ok: false, reason: 'replayed' };
  return { ok: true, step };
}

export async function getTwofa(ctx: StoreContext, caller: AuthenticatedUser): Promise<TwofaStatus> {
  return { twofa: (await callerRow(ctx, caller)).twofa === 1 };
}

/**
 * `{twofa: true}` enables (409 `twofa_enabled` when already on); `{twofa: false}` disables, and
 * succeeds without change when it is off. Refused to sessions opened with an app password (policy.ts).
 */
export async function setTwofaState(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<TwofaStatus> {
  const { twofa } = parseInput(setSchema, body);
  const { storage: { sql }, clock } = ctx;
  if (!twofa) {
    await sql.transaction(async (tx) => {
      const txCtx = withSql(ctx, tx);
      if ((await callerRow(txCtx, caller)).twofa === 1) await setTwofa(tx, caller.userUuid, null, clock.now());
    });
    return { twofa: false };
  }
  const secret = new Secret({ size: 20 });
  const user = await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const row = await callerRow(txCtx, caller);
    if (row.twofa === 1) throw conflict('two-factor authentication is already enabled', 'twofa_enabled');
    await setTwofa(tx, row.uuid, secret.base32, clock.now());
    await revokeOtherSessions(tx, clock, row.uuid, caller.sessionId);
    await deleteUserAppPasswords(tx, row.uuid);
    return row;
  });
  const uri = new TOTP({ ...TOTP_PARAMS, issuer: ISSUER, label: user.email, secret }).toString();
  return { twofa: true, secret_twofa: secret.base32, otpauth_uri: uri };
}
