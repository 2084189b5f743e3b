/**
 * Two-factor recovery codes (docs/extensions.md "Two-factor set-up and recovery codes"): ten
 * per user, made when 2FA is turned on and on request, shown once, kept as SHA-256 only
 * (secret-codes.ts: 16 base32 letters, 80 random bits, `xxxx-xxxx-xxxx-xxxx`), each signing in
 * once in place of the TOTP code (login.ts). Making new ones forgets the old.
 */
import type { Sql } from '../storage/sql.js';
import { replaceRecoveryCodes } from '../storage/users.js';
import { canonicalCode, randomCode, sha256Hex } from './secret-codes.js';

export const RECOVERY_CODE_COUNT = 10;
const GROUPS = 4;
const GROUP_CHARS = 4;

/** Makes the user's recovery codes anew (the old stop working); the codes, to be shown once. */
export async function makeRecoveryCodes(sql: Sql, userUuid: string, nowMs: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => randomCode(GROUPS, GROUP_CHARS));
  await replaceRecoveryCodes(sql, userUuid, codes.map((code) => sha256Hex(canonicalCode(code, GROUPS * GROUP_CHARS) as string)), nowMs);
  return codes;
}

/** The hash of `typed` when it is shaped as a recovery code, else undefined. */
export function recoveryCodeHash(typed: string): string | undefined {
  const canonical = canonicalCode(typed, GROUPS * GROUP_CHARS);
  return canonical === undefined ? undefined : sha256Hex(canonical);
}
