/**
 * OC-Checksum values: parsing a client's claim, refusing only what contradicts the stored
 * hashes, ignoring algorithms we do not compute, and formatting ours.
 */
import { describe, expect, it } from 'vitest';
import {
  formatOcChecksums,
  matchesOcChecksum,
  ocChecksumMismatch,
  parseOcChecksum,
} from '../../../src/common/oc-checksum.js';

// sha1sum / md5sum of "hello\n"
const SHA1 = 'f572d396fae9206628714fb2ce00f72e94f2258f';
const MD5 = 'b1946ac92492d2347c6235b4d2611184';
const stored = { sha1: SHA1, md5: MD5 };

describe('OC-Checksum', () => {
  it('parses one or several entries, upper-casing names and lower-casing values', () => {
    expect(parseOcChecksum(`sha1:${SHA1.toUpperCase()}  MD5:${MD5} ADLER32:0a1b`)).toEqual([
      { algorithm: 'SHA1', hex: SHA1 },
      { algorithm: 'MD5', hex: MD5 },
      { algorithm: 'ADLER32', hex: '0a1b' },
    ]);
    expect(parseOcChecksum('  nonsense :x y: ')).toEqual([]);
  });

  it('accepts matching values, whatever the case, alone or together', () => {
    expect(matchesOcChecksum(`SHA1:${SHA1}`, stored)).toBe(true);
    expect(matchesOcChecksum(`MD5:${MD5.toUpperCase()}`, stored)).toBe(true);
    expect(matchesOcChecksum(`SHA1:${SHA1} MD5:${MD5}`, stored)).toBe(true);
  });

  it('refuses a wrong or malformed value of a known algorithm', () => {
    expect(ocChecksumMismatch(`SHA1:${'0'.repeat(40)}`, stored)).toEqual({
      algorithm: 'SHA1',
      hex: '0'.repeat(40),
    });
    expect(matchesOcChecksum(`SHA1:${SHA1} MD5:${'f'.repeat(32)}`, stored)).toBe(false);
    expect(matchesOcChecksum('SHA1:xyz', stored)).toBe(false);
    expect(matchesOcChecksum(`MD5:${SHA1}`, stored)).toBe(false);
  });

  it('ignores unknown algorithms and hashes not computed yet', () => {
    expect(matchesOcChecksum('ADLER32:deadbeef SHA256:00', stored)).toBe(true);
    expect(matchesOcChecksum(`SHA1:${'1'.repeat(40)}`, { sha1: null, md5: MD5 })).toBe(true);
  });

  it('formats only the hashes it has', () => {
    expect(formatOcChecksums(stored)).toBe(`SHA1:${SHA1} MD5:${MD5}`);
    expect(formatOcChecksums({ sha1: SHA1, md5: null })).toBe(`SHA1:${SHA1}`);
    expect(formatOcChecksums({ sha1: null, md5: null })).toBeUndefined();
    expect(formatOcChecksums(undefined)).toBeUndefined();
  });
});
