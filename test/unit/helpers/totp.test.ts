/**
 * The tests' own TOTP (test/helpers/totp.ts) against the specifications' published vectors, so
 * the 2FA suites check the store with something known to be right and independent of otpauth.
 */
import { describe, expect, it } from 'vitest';
import { base32Decode, hotp, totp, totpStep } from '../../helpers/totp.js';

const RFC_SECRET = Buffer.from('12345678901234567890', 'ascii');

describe('test TOTP helper', () => {
  it('matches RFC 4226 Appendix D (HOTP values for counters 0 to 9)', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expect(expected.map((_, counter) => hotp(RFC_SECRET, counter))).toEqual(expected);
  });

  it.each([
    [59, '0000000000000001', '94287082'],
    [1111111109, '00000000023523EC', '07081804'],
    [1111111111, '00000000023523ED', '14050471'],
    [1234567890, '000000000273EF07', '89005924'],
    [2000000000, '0000000003F940AA', '69279037'],
    [20000000000, '0000000027BC86AA', '65353130'],
  ])('matches RFC 6238 Appendix B (SHA1) at %i s', (seconds, stepHex, code) => {
    expect(totpStep(seconds * 1000)).toBe(Number.parseInt(stepHex, 16));
    expect(totp(RFC_SECRET, seconds * 1000, 8)).toBe(code);
  });

  it('decodes RFC 4648 §10 base32 vectors', () => {
    expect(base32Decode('MZXW6YTBOI').toString('ascii')).toBe('foobar');
    expect(base32Decode('MZXW6YQ=').toString('ascii')).toBe('foob');
    expect(base32Decode('gezdgnbvgy3tqojqgezdgnbvgy3tqojq').toString('ascii')).toBe(RFC_SECRET.toString('ascii'));
  });
});
