/**
 * Two-factor authentication of the current user (docs/api.md "Current user": GET/POST
 * /api/user/2fa; docs/extensions.md "Two-factor set-up and recovery codes": POST
 * /api/user/2fa/setup, /confirm, /recovery_codes). TOTP is totp.ts's.
 *
 * Two ways on. SPEC's `{twofa: true}` turns 2FA on at once and answers the secret once (and,
 * an extension, the recovery codes, so a SPEC client's user has a way back in). The set-up in
 * two steps keeps 2FA off until a code from the secret shown is sent back: `setup` keeps a
 * pending secret for SETUP_TTL_MS (a new set-up replaces it), `confirm` with a valid code turns
 * 2FA on and answers the recovery codes once; a wrong code changes nothing. Either way on ends
 * the user's other sessions and deletes their app passwords: nothing let in by the password
 * alone keeps working. The secret is never shown again.
 *
 * Turning off and making new recovery codes ask for the password or a code again (reauth.ts).
 */
import { z } from 'zod';
import { withSql } from '../context.js';
import type { StoreContext } from '../context.js';
import type { ClientInfo } from '../client-ip.js';
import { deleteUserAppPasswords, setTwofa, setTwofaPending, countUnusedRecoveryCodes } from '../storage/users.js';
import { conflict, invalid } from '../envelope.js';
import { revokeOtherSessions, type AuthenticatedUser } from '../sessions.js';
import { callerRow } from './caller.js';
import { parseInput } from './input.js';
import { reauthFields, requireReauth } from './reauth.js';
import { makeRecoveryCodes } from './recovery-codes.js';
import { checkTwofaCode, newTotpSecret, otpauthUri } from './totp.js';

/** How long a set-up's secret waits for its first code. */
export const SETUP_TTL_MS = 15 * 60_000;

/**
 * `data` of the 2FA answers: `secret_twofa` and `otpauth_uri` only right after enabling (SPEC) or
 * starting a set-up; `recovery_codes` only right after turning on or making new ones;
 * `recovery_codes_left` while on (GET); `setup_expires` with a set-up.
 */
export interface TwofaStatus {
  twofa: boolean;
  secret_twofa?: string;
  otpauth_uri?: string;
  setup_expires?: number;
  recovery_codes?: string[];
  recovery_codes_left?: number;
}

const setSchema = z.strictObject({ twofa: z.boolean({ error: 'twofa must be true or false' }), ...reauthFields });
const setupSchema = z.strictObject({ ...reauthFields });
const confirmSchema = z.strictObject({ code: z.string({ error: 'code must be a string: the 6-digit code of your authenticator app' }).max(64) });
const proofSchema = z.strictObject(reauthFields);

export async function getTwofa(ctx: StoreContext, caller: AuthenticatedUser): Promise<TwofaStatus> {
  const row = await callerRow(ctx, caller);
  if (row.twofa !== 1) return { twofa: false };
  return { twofa: true, recovery_codes_left: await countUnusedRecoveryCodes(ctx.storage.sql, row.uuid) };
}

/**
 * Turns 2FA on with `secret` (whose code at `step`, if any, confirmed it) inside `tx`: ends the
 * other sessions, deletes app passwords, makes recovery codes (answered).
 */
async function turnOn(ctx: StoreContext, caller: AuthenticatedUser, secret: string, step: number | null): Promise<string[]> {
  const { clock } = ctx;
  await setTwofa(ctx.storage.sql, caller.userUuid, secret, clock.now(), step);
  await revokeOtherSessions(ctx.storage.sql, clock, caller.userUuid, caller.sessionId);
  await deleteUserAppPasswords(ctx.storage.sql, caller.userUuid);
  return makeRecoveryCodes(ctx.storage.sql, caller.userUuid, clock.now());
}

const alreadyOn = () => conflict('two-factor authentication is already enabled', 'twofa_enabled');

/**
 * SPEC's `{twofa: true}` enables at once (409 `twofa_enabled` when already on); `{twofa: false}`
 * disables (asking again, reauth.ts), and succeeds without change when it is off. Refused to
 * sessions opened with an app password (policy.ts).
 */
export async function setTwofaState(ctx: StoreContext, caller: AuthenticatedUser, body: unknown, client: ClientInfo): Promise<TwofaStatus> {
  const { twofa, ...proof } = parseInput(setSchema, body);
  const { storage: { sql }, clock } = ctx;
  if (!twofa) {
    if ((await callerRow(ctx, caller)).twofa !== 1) return { twofa: false };
    await requireReauth(ctx, caller, proof, client, 'turn two-factor authentication off');
    await sql.transaction(async (tx) => {
      if ((await callerRow(withSql(ctx, tx), caller)).twofa === 1) await setTwofa(tx, caller.userUuid, null, clock.now());
    });
    return { twofa: false };
  }
  // Turning on ends every other session and app password, and the new secret then guards the
  // account: asked again, so a session left open cannot lock its owner out (reauth.ts).
  if ((await callerRow(ctx, caller)).twofa === 1) throw alreadyOn();
  await requireReauth(ctx, caller, proof, client, 'turn two-factor authentication on');
  const secret = newTotpSecret();
  const { email, codes } = await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const row = await callerRow(txCtx, caller);
    if (row.twofa === 1) throw alreadyOn();
    return { email: row.email, codes: await turnOn(txCtx, caller, secret, null) };
  });
  return { twofa: true, secret_twofa: secret, otpauth_uri: otpauthUri(secret, email), recovery_codes: codes };
}

/** Starts a set-up, asking again (reauth.ts): a pending secret (replacing any earlier one), 2FA still off; 409 when on. */
export async function startTwofaSetup(ctx: StoreContext, caller: AuthenticatedUser, body: unknown, client: ClientInfo): Promise<TwofaStatus> {
  const proof = parseInput(setupSchema, body);
  // As turning on: the secret set up here is the one that will guard the account (reauth.ts).
  if ((await callerRow(ctx, caller)).twofa === 1) throw alreadyOn();
  await requireReauth(ctx, caller, proof, client, 'set up two-factor authentication');
  const secret = newTotpSecret();
  const expires = ctx.clock.now() + SETUP_TTL_MS;
  const email = await ctx.storage.sql.transaction(async (tx) => {
    const row = await callerRow(withSql(ctx, tx), caller);
    if (row.twofa === 1) throw alreadyOn();
    await setTwofaPending(tx, row.uuid, secret, expires);
    return row.email;
  });
  return { twofa: false, secret_twofa: secret, otpauth_uri: otpauthUri(secret, email), setup_expires: expires };
}

/**
 * Confirms the pending set-up with a code of its secret: on, with recovery codes. 409
 * `twofa_not_set_up` without a live set-up, 400 `twofa_invalid` for a wrong code (2FA stays off,
 * the set-up stays for another try), 409 `twofa_enabled` when on.
 */
export async function confirmTwofaSetup(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<TwofaStatus> {
  const { code } = parseInput(confirmSchema, body);
  const { storage: { sql }, clock } = ctx;
  const codes = await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const row = await callerRow(txCtx, caller);
    if (row.twofa === 1) throw alreadyOn();
    const pending = row.twofa_pending_secret;
    if (pending === null || row.twofa_pending_expires === null || Number(row.twofa_pending_expires) <= clock.now()) {
      throw conflict('no two-factor set-up is waiting (none was started, or it expired): start it again', 'twofa_not_set_up');
    }
    const checked = checkTwofaCode(pending, code, clock.now(), null);
    if (!checked.ok) throw invalid('code: the code is wrong, or not from the secret of this set-up; two-factor authentication stays off', 'twofa_invalid');
    return turnOn(txCtx, caller, pending, checked.step);
  });
  return { twofa: true, recovery_codes: codes };
}

/** New recovery codes (the old stop working), asking again; 409 `twofa_disabled` when 2FA is off. */
export async function renewRecoveryCodes(ctx: StoreContext, caller: AuthenticatedUser, body: unknown, client: ClientInfo): Promise<TwofaStatus> {
  const proof = parseInput(proofSchema, body);
  if ((await callerRow(ctx, caller)).twofa !== 1) throw conflict('two-factor authentication is off: recovery codes come with turning it on', 'twofa_disabled');
  await requireReauth(ctx, caller, proof, client, 'make new recovery codes');
  const codes = await ctx.storage.sql.transaction(async (tx) => makeRecoveryCodes(tx, caller.userUuid, ctx.clock.now()));
  return { twofa: true, recovery_codes: codes };
}
