/**
 * ownCloud checksum values (`OC-Checksum` header, `oc:checksum` property text): parsing a
 * client's claim, comparing it with the hashes the store computed, and formatting ours.
 * Pure: no I/O. The bridge (PUT, COPY, MOVE, PROPPATCH), the store's upload route and the
 * in-process client share it so that every door accepts and refuses the same values.
 *
 * Format (ownCloud/Nextcloud): one or more `ALGORITHM:hex` separated by spaces (ownCloud
 * publishes `SHA1:<hex> MD5:<hex> ADLER32:<hex>`; clients send one, e.g. `SHA1:<hex>`).
 * Choices:
 * - Algorithm names compare case-insensitively (`sha1:` and `SHA1:` both seen in the wild);
 *   hex compares case-insensitively too.
 * - An algorithm we do not compute (ADLER32, SHA256, anything else) is ignored: it can neither
 *   confirm nor refute the content.
 * - A known algorithm with a value that is not hex of the right length is a mismatch: the
 *   client claimed something about the content that cannot be true.
 * - A known algorithm whose hash we do not have (a revision the backfill has not reached) can
 *   not be checked and is not held against the client.
 */

/** Algorithms the store computes for every revision. */
export type OcChecksumAlgorithm = 'SHA1' | 'MD5';

export interface OcChecksumEntry {
  /** Upper-cased algorithm name as the client wrote it (`SHA1`, `MD5`, `ADLER32`, …). */
  algorithm: string;
  /** Lower-cased value as the client wrote it (not necessarily valid hex). */
  hex: string;
}

/** Hashes the store holds for one revision; null or absent when not (yet) computed. */
export interface RevisionChecksums {
  sha1?: string | null;
  md5?: string | null;
}

const HEX_LENGTH: Record<OcChecksumAlgorithm, number> = { SHA1: 40, MD5: 32 };

function isKnown(algorithm: string): algorithm is OcChecksumAlgorithm {
  return algorithm === 'SHA1' || algorithm === 'MD5';
}

/**
 * Splits a header or property value into entries. Tokens without a colon, or with an empty
 * name or value, are skipped (they carry no claim).
 */
export function parseOcChecksum(value: string): OcChecksumEntry[] {
  const entries: OcChecksumEntry[] = [];
  for (const token of value.trim().split(/[\s,]+/)) {
    const colon = token.indexOf(':');
    if (colon <= 0 || colon === token.length - 1) continue;
    entries.push({
      algorithm: token.slice(0, colon).toUpperCase(),
      hex: token.slice(colon + 1).toLowerCase(),
    });
  }
  return entries;
}

/** The entries of a claim the store can check: known algorithms only. */
export function knownOcChecksums(entries: readonly OcChecksumEntry[]): OcChecksumEntry[] {
  return entries.filter((e) => isKnown(e.algorithm));
}

/**
 * The first entry that contradicts the stored hashes, or undefined when none does (all match,
 * are unknown, or cannot be checked yet).
 */
export function ocChecksumMismatch(
  claim: string | readonly OcChecksumEntry[],
  actual: RevisionChecksums,
): OcChecksumEntry | undefined {
  const entries = typeof claim === 'string' ? parseOcChecksum(claim) : claim;
  for (const entry of entries) {
    if (!isKnown(entry.algorithm)) continue;
    if (entry.hex.length !== HEX_LENGTH[entry.algorithm] || !/^[0-9a-f]+$/.test(entry.hex)) {
      return entry;
    }
    const stored = entry.algorithm === 'SHA1' ? actual.sha1 : actual.md5;
    if (stored === null || stored === undefined) continue;
    if (stored.toLowerCase() !== entry.hex) return entry;
  }
  return undefined;
}

/** True when nothing in the claim contradicts the stored hashes. */
export function matchesOcChecksum(
  claim: string | readonly OcChecksumEntry[],
  actual: RevisionChecksums,
): boolean {
  return ocChecksumMismatch(claim, actual) === undefined;
}

/**
 * Our own value, `SHA1:<hex> MD5:<hex>`, with only the hashes we have; undefined when we have
 * none (a revision not yet backfilled, or a foreign store that does not publish them).
 */
export function formatOcChecksums(actual: RevisionChecksums | undefined): string | undefined {
  if (actual === undefined) return undefined;
  const parts: string[] = [];
  if (actual.sha1) parts.push(`SHA1:${actual.sha1.toLowerCase()}`);
  if (actual.md5) parts.push(`MD5:${actual.md5.toLowerCase()}`);
  return parts.length > 0 ? parts.join(' ') : undefined;
}
