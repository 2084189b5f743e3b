/**
 * Numbers in words, one way for the whole app: `count(n, 'file')` ("1 file", "2 files",
 * "1,024 files") and `sizeText(bytes)` in binary units with their IEC names, as the bridge and
 * the sync clients count (1 KiB = 1,024 bytes): "1 byte", "512 bytes", "1.5 KiB", "20 MiB".
 */

/** `n` and the noun, plural unless n is 1 (`many` for nouns whose plural is not noun + s). */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

export const BINARY_UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** A size for people in binary units: bytes below 1 KiB, then at most one decimal. */
export function sizeText(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return count(Math.max(0, Math.round(bytes || 0)), 'byte');
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toLocaleString('en', { maximumFractionDigits: value < 10 ? 1 : 0 })} ${BINARY_UNITS[unit]}`;
}

/** Bytes from a number of mebibytes typed (1 MiB = 1,048,576 bytes; decimals allowed); NaN when it is not one. */
export function mebibytesToBytes(text: string): number {
  const value = Number(text.trim().replace(',', '.'));
  return text.trim() === '' || !Number.isFinite(value) || value < 0 ? Number.NaN : Math.round(value * 1024 * 1024);
}

/** The number of mebibytes to show in a quota field for `bytes` (at most 3 decimals). */
export function bytesToMebibytes(bytes: number): string {
  return String(Math.round((bytes / (1024 * 1024)) * 1000) / 1000);
}
