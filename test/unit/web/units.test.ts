/**
 * The web app's one size formatter and plural (src/web/strings/units.ts): binary units named as
 * such (KiB, MiB, GiB), never decimal "KB"; "1 file", "2 files"; quotas typed in MiB.
 */
import { describe, expect, it } from 'vitest';
import { bytesToMebibytes, count, mebibytesToBytes, sizeText } from '../../../src/web/strings/units.js';
import { t } from '../../../src/web/strings/index.js';

describe('sizes and counts in words', () => {
  it('says sizes in binary units with their IEC names', () => {
    expect(sizeText(0)).toBe('0 bytes');
    expect(sizeText(1)).toBe('1 byte');
    expect(sizeText(1023)).toBe('1,023 bytes');
    expect(sizeText(1024)).toBe('1 KiB');
    expect(sizeText(1536)).toBe('1.5 KiB');
    expect(sizeText(1_000_000)).toBe('977 KiB');
    expect(sizeText(20 * 1024 * 1024)).toBe('20 MiB');
    expect(sizeText(5 * 1024 ** 3 + 512 * 1024 ** 2)).toBe('5.5 GiB');
    expect(sizeText(3 * 1024 ** 4)).toBe('3 TiB');
  });

  it('gives every page the same formatter: files, details and Administration', () => {
    expect(t.files.bytes(2048)).toBe('2 KiB');
    expect(t.item.bytes(2048)).toBe('2 KiB (2,048 bytes)');
    expect(t.admin.users.usedOf(sizeText(0), sizeText(1_048_576))).toBe('Uses 0 bytes of 1 MiB.');
    for (const text of [t.files.bytes(5_000_000), t.item.bytes(5_000_000), sizeText(5_000_000)]) expect(text).not.toMatch(/\b[KMGT]B\b/);
  });

  it('says one thing in the singular and the rest in the plural', () => {
    expect(count(1, 'file')).toBe('1 file');
    expect(count(2, 'file')).toBe('2 files');
    expect(count(1024, 'file')).toBe('1,024 files');
    expect(t.admin.adminGroups.summary(1, 'x')).toBe('1 member. x');
    expect(t.admin.organizations.counts(1, 2)).toBe('1 user, 2 groups.');
    expect(t.sharing.copySent(1)).toBe('Copy offered to 1 recipient.');
  });

  it('reads a quota typed in MiB and shows it back', () => {
    expect(mebibytesToBytes('1')).toBe(1_048_576);
    expect(mebibytesToBytes('0,5')).toBe(524_288);
    expect(mebibytesToBytes('')).toBeNaN();
    expect(mebibytesToBytes('-1')).toBeNaN();
    expect(bytesToMebibytes(1_048_576 * 3)).toBe('3');
    expect(bytesToMebibytes(1049)).toBe('0.001');
  });
});
