/**
 * Password hashing with scrypt (memory-hard; N from config, r=8, p=1) and the password rule
 * for new passwords (docs/api.md "Limits"). Stored form: `scrypt$N$r$p$salt$hash` (base64url), so the cost can change
 * later without breaking old hashes.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const KEY_LENGTH = 32;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(password, salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

function costOptions(N: number, r = 8, p = 1): ScryptOptions {
  return { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
}

export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, costOptions(cost));
  return ['scrypt', cost, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), costOptions(Number(n), Number(r), Number(p)));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** docs/api.md "Limits": at least 8 characters with lowercase, uppercase and digit. Returns the problem, or undefined. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < 8) return 'password must have at least 8 characters';
  if (!/[a-z]/.test(password)) return 'password must contain a lowercase letter';
  if (!/[A-Z]/.test(password)) return 'password must contain an uppercase letter';
  if (!/[0-9]/.test(password)) return 'password must contain a digit';
  return undefined;
}

/** A strong random password that satisfies the rule (for the initial admin). */
export function generatePassword(): string {
  return `Dw${randomBytes(18).toString('base64url')}7a`;
}
