/**
 * An independent TOTP for tests (not the `otpauth` library the store uses): RFC 4226 HOTP
 * (HMAC-SHA1, dynamic truncation) and RFC 6238 TOTP over node:crypto, plus the RFC 4648 base32
 * decoding the secrets come in. test/unit/helpers/totp.test.ts checks it against the RFCs' vectors.
 */
import { createHmac } from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 §6 base32 (no padding needed; case and spaces ignored). */
export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  const bytes: number[] = [];
  let value = 0;
  let bits = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index === -1) throw new Error(`not base32: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
    value &= (1 << bits) - 1;
  }
  return Buffer.from(bytes);
}

/** RFC 4226 §5.3: HOTP(K, C) with HMAC-SHA1, `digits` decimal digits. */
export function hotp(key: Buffer, counter: number, digits = 6): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** RFC 6238 §4: T = floor((unix time - T0) / X), T0 = 0, X = 30 s. */
export function totpStep(timeMs: number, periodSec = 30): number {
  return Math.floor(timeMs / 1000 / periodSec);
}

export function totp(key: Buffer, timeMs: number, digits = 6, periodSec = 30): string {
  return hotp(key, totpStep(timeMs, periodSec), digits);
}

/** The 6-digit code an authenticator app shows for a base32 secret at `timeMs`. */
export function totpCode(secretBase32: string, timeMs: number): string {
  return totp(base32Decode(secretBase32), timeMs);
}
