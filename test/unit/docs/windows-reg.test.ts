/**
 * docs/windows-webclient-filesize.reg (issue 23, item 5) imports as Windows' regedit reads it:
 * the version 5 header first, CRLF line ends, ASCII only (the file has no byte-order mark), the
 * WebClient service's Parameters key, and FileSizeLimitInBytes at 0xFFFFFFFF, the most the
 * service takes; its comments say to restart the service.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const REG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/windows-webclient-filesize.reg');

it('raises the WebClient file size limit to 4 GiB - 1 and says how to apply it', () => {
  const bytes = readFileSync(REG);
  expect([...bytes].every((b) => b === 0x0d || b === 0x0a || (b >= 0x20 && b < 0x7f))).toBe(true);
  const text = bytes.toString('ascii');
  expect(text.split('\n').every((line, i, all) => line.endsWith('\r') || (i === all.length - 1 && line === ''))).toBe(true);
  const lines = text.split('\r\n');
  expect(lines[0]).toBe('Windows Registry Editor Version 5.00');
  const key = lines.indexOf('[HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\WebClient\\Parameters]');
  expect(key).toBeGreaterThan(0);
  expect(lines[key + 1]).toBe('"FileSizeLimitInBytes"=dword:ffffffff');
  expect(text).toMatch(/net stop webclient/);
  expect(text).toMatch(/net start webclient/);
});
