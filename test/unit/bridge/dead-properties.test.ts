import { describe, expect, it } from 'vitest';
import { parseDateProperty, parseOcMtime } from '../../../src/bridge/dead-properties.js';

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
});
