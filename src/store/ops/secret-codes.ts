/**
 * Random secrets a person types back (app passwords, 2FA recovery codes): base32 letters in
 * dash-separated groups, compared in a canonical form (case, dashes and spaces do not matter),
 * stored only as SHA-256. They carry 80 bits or more, so a fast hash cannot be searched
 * backwards and a lookup by the hash of what was typed times nothing secret.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** `groups` x `groupChars` random base32 letters (a multiple of 8 letters: whole bytes), dash-separated. */
export function randomCode(groups: number, groupChars: number): string {
  const bytes = randomBytes((groups * groupChars * 5) / 8);
  let bits = 0;
  let value = 0;
  let letters = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      letters += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return (letters.match(new RegExp(`.{${groupChars}}`, 'g')) as string[]).join('-');
}

/** The canonical form of something typed as a code of `letters` letters, or undefined when it cannot be one. */
export function canonicalCode(typed: string, letters: number): string | undefined {
  const clean = typed.replace(/[\s-]/g, '').toLowerCase();
  return new RegExp(`^[${ALPHABET}]{${letters}}$`).test(clean) ? clean : undefined;
}

export function sha256Hex(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex');
}
