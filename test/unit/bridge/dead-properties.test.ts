import { describe, expect, it } from 'vitest';
import { parseDateProperty, parseHttpDate, parseLastModified, parseOcMtime } from '../../../src/bridge/dead-properties.js';

describe('client mtime parsers', () => {
  it('reads X-OC-Mtime seconds (rclone)', () => {
    expect(parseOcMtime('1577836800')).toBe(1_577_836_800_000);
    expect(parseOcMtime(' 1577836800.25 ')).toBe(1_577_836_800_250);
    expect(parseOcMtime(undefined)).toBeUndefined();
    expect(parseOcMtime('-5')).toBeUndefined();
    expect(parseOcMtime('soon')).toBeUndefined();
    expect(parseOcMtime('1e9')).toBeUndefined();
  });

  it('reads date properties (Win32LastModifiedTime, SAR:lastmodified)', () => {
    expect(parseDateProperty('Tue, 07 Jan 2025 11:22:33 GMT')).toBe(Date.UTC(2025, 0, 7, 11, 22, 33));
    expect(parseDateProperty('2025-01-07T11:22:33Z')).toBe(Date.UTC(2025, 0, 7, 11, 22, 33));
    expect(parseDateProperty('')).toBeUndefined();
    expect(parseDateProperty('not a date')).toBeUndefined();
    expect(parseDateProperty('1577836800')).toBeUndefined();
  });

  it('reads the three HTTP-date forms as UTC and nothing else (RFC 9110 §5.6.7)', () => {
    const t = Date.UTC(1994, 10, 6, 8, 49, 37);
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(t);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', Date.UTC(2026, 0, 1))).toBe(t);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994')).toBe(t);
    expect(parseHttpDate('Sun Nov 16 08:49:37 1994')).toBe(Date.UTC(1994, 10, 16, 8, 49, 37));
    // A two-digit year more than 50 years ahead is read as the past century's.
    expect(parseHttpDate('Friday, 01-Jan-76 00:00:00 GMT', Date.UTC(2026, 0, 1))).toBe(Date.UTC(2076, 0, 1));
    expect(parseHttpDate('Saturday, 01-Jan-77 00:00:00 GMT', Date.UTC(2026, 0, 1))).toBe(Date.UTC(1977, 0, 1));
    for (const bad of ['Sun, 31 Feb 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 24:00:00 GMT', 'Sun, 06 Nov 1994 08:49:37 CET', 'Sun, 6 Nov 1994 08:49:37 GMT', '1994-11-06T08:49:37Z', 'Sun Nov 6 08:49:37 1994 GMT', '']) {
      expect(parseHttpDate(bad), bad).toBeUndefined();
    }
  });

  it('reads DAV:lastmodified as unix seconds (rclone) or an HTTP-date', () => {
    expect(parseLastModified('1577880000')).toBe(1_577_880_000_000);
    expect(parseLastModified('Wed, 01 Jan 2020 12:00:00 GMT')).toBe(1_577_880_000_000);
    expect(parseLastModified('soon')).toBeUndefined();
    expect(parseLastModified('-1')).toBeUndefined();
  });
});
