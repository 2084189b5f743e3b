/**
 * TOTP of the second factor: RFC 6238 (HMAC-SHA1, 6 digits, 30 s steps) from `otpauth`. A code
 * is accepted one step either side of now, and only for a step later than the last accepted one,
 * so a code is good once. Login, the 2FA set-up's confirmation and asking again (reauth.ts) check
 * codes here.
 */
import { Secret, TOTP } from 'otpauth';

const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
const ISSUER = 'driveway';

export type CodeVerdict = { ok: true; step: number } | { ok: false; reason: 'wrong' | 'replayed' };

/** A new random secret (160 bits), base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://` URI an authenticator app scans for `secretBase32`, labelled with the account. */
export function otpauthUri(secretBase32: string, account: string): string {
  return new TOTP({ ...TOTP_PARAMS, issuer: ISSUER, label: account, secret: Secret.fromBase32(secretBase32) }).toString();
}

/** Whether `code` is shaped as a TOTP code (6 digits, spaces aside). */
export function isTotpShaped(code: string): boolean {
  return /^\d{6}$/.test(code.replace(/\s+/g, ''));
}

/** Checks a `code` against the secret at `nowMs`, given the last accepted step. */
export function checkTwofaCode(secretBase32: string, code: string, nowMs: number, lastStep: number | null): CodeVerdict {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return { ok: false, reason: 'wrong' };
  const delta = TOTP.validate({ ...TOTP_PARAMS, token, secret: Secret.fromBase32(secretBase32), timestamp: nowMs, window: 1 });
  if (delta === null) return { ok: false, reason: 'wrong' };
  const step = TOTP.counter({ period: TOTP_PARAMS.period, timestamp: nowMs }) + delta;
  if (lastStep !== null && step <= lastStep) return { ok: false, reason: 'replayed' };
  return { ok: true, step };
}
