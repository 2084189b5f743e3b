/**
 * `driveway check` (src/cli/check.ts): the store's fsck. It verifies that
 *   1. every blob a row refers to is there, and its bytes hash to its address (BLAKE3, or
 *      SHA-256 for blobs written before migration 003) with the size its row says; blobs kept
 *      in their database row are hashed too; each blob is streamed through the backend
 *      interface, never buffered, so S3 is checked as the local folder is;
 *   2. `disk_used` of every user and group equals the bytes of the revisions it owns, trash
 *      included (storage/consistency.ts has the definition);
 *   3. `blobs.refs` equals the revisions and share snapshot entries that name the blob;
 *   4. the backend holds no blob that no row names and that is older than the collector's grace
 *      period (`store.blobs.gcGraceSec`; a younger one may be an upload under way);
 *   5. the SHA-1 and MD5 stored for a blob (docs/extensions.md "Checksums") are those of its
 *      bytes, computed in the same read as (1); a blob without them is the backfill's to fill.
 * With `repair`, what is safe is repaired: (5) is set to what the bytes hash to; (2) and (3) are recomputed in a transaction each (a
 * row left with no reference is dropped), and (4)'s orphans are removed through the backend,
 * which re-checks that nothing refers to them at that moment. A missing or damaged blob is only
 * reported: its metadata is never deleted, so the file stays visible and an operator can restore
 * the bytes from a backup. Safe beside a running server: every read is a committed state, and
 * every repair recomputes inside its own transaction.
 */
import { createHash } from 'node:crypto';
import { BlobMissingError, type BlobBackend } from '../blobs/blob-backend.js';
import { BlobVerificationError, assertAddressed, digestBlob, type BlobDigest } from '../blobs/blob-copy.js';
import { LocalBlobBackend } from '../blobs/local.js';
import { digestOf } from '../blobs/staging.js';
import { blobRows, blobUses, inlineBytes, ownerCount, repairBlobRefs, repairUsage, usageSkews, type BlobRow, type BlobUse } from '../storage/consistency.js';
import { isBlobReferenced } from '../storage/blob-refs.js';
import type { Sql } from '../storage/sql.js';

export type FindingKind = 'missing-blob' | 'damaged-blob' | 'disk-used' | 'blob-refs' | 'orphan-blob' | 'wrong-checksum';

export interface Finding {
  kind: FindingKind;
  /** One line naming what is wrong, and where. */
  text: string;
  /** Set when `repair` fixed it. */
  repaired: boolean;
}

export interface CheckOptions {
  sql: Sql;
  blobs: BlobBackend;
  graceMs: number;
  repair: boolean;
  now: () => number;
  /** Called with each finding as it is made (the command prints it). */
  onFinding?: (finding: Finding) => void;
}

export interface CheckSummary {
  findings: Finding[];
  blobsVerified: number;
  bytesVerified: number;
  ownersChecked: number;
  /** Unreferenced blobs inside the grace period: left alone, an upload may be about to refer to them. */
  youngUnreferenced: number;
  /** Findings `repair` did not (or could not) fix. */
  remaining: number;
}

const PAGE = 500;
const USES_NAMED = 3;

function where(blobs: BlobBackend, hash: string): string {
  return blobs instanceof LocalBlobBackend ? blobs.pathOf(hash) : `${blobs.kind} object ${hash}`;
}

function describeUses(uses: BlobUse[], total: number): string {
  if (uses.length === 0) return 'named by share snapshots only';
  const named = uses.map((u) => `${u.ownerType === 'User' ? 'user' : 'group'} ${u.ownerName}: ${u.path} revision ${u.revision}`).join('; ');
  return total > uses.length ? `${named}; and more` : named;
}

export async function checkConsistency(options: CheckOptions): Promise<CheckSummary> {
  const { sql, blobs, repair } = options;
  const findings: Finding[] = [];
  const found = (kind: FindingKind, text: string, repaired = false): void => {
    const finding = { kind, text, repaired };
    findings.push(finding);
    options.onFinding?.(finding);
  };
  const summary: CheckSummary = { findings, blobsVerified: 0, bytesVerified: 0, ownersChecked: 0, youngUnreferenced: 0, remaining: 0 };

  // 1 and 3: every blob row, its bytes and its reference count.
  for (let after = ''; ; ) {
    const page = await blobRows(sql, after, PAGE);
    for (const blob of page) {
      after = blob.hash;
      if (blob.countedRefs > 0) {
        const problem = await verifyBytes(sql, blobs, blob, (digest) => {
          const wrong = [
            blob.sha1 !== null && blob.sha1 !== digest.sha1 ? `SHA-1 ${blob.sha1}, its bytes hash to ${digest.sha1}` : undefined,
            blob.md5 !== null && blob.md5 !== digest.md5 ? `MD5 ${blob.md5}, its bytes hash to ${digest.md5}` : undefined,
          ].filter((w): w is string => w !== undefined);
          return wrong.length === 0 ? undefined : { sha1: digest.sha1 as string, md5: digest.md5 as string, text: wrong.join('; ') };
        });
        if (problem?.kind === 'wrong-checksum') {
          let repaired = false;
          if (repair) {
            await sql.run('UPDATE blobs SET sha1 = ?, md5 = ? WHERE hash = ?', [problem.sha1, problem.md5, blob.hash]);
            repaired = true;
          }
          found('wrong-checksum', `blob ${blob.hash}: stored ${problem.text}`, repaired);
          summary.blobsVerified += 1;
          summary.bytesVerified += blob.sizeBytes;
        } else if (problem) {
          const uses = await blobUses(sql, blob.hash, USES_NAMED);
          found(problem.kind, `${problem.kind === 'missing-blob' ? 'missing' : 'damaged'} blob ${blob.hash} (${problem.detail}); used by ${describeUses(uses, blob.countedRefs)}`);
        } else {
          summary.blobsVerified += 1;
          summary.bytesVerified += blob.sizeBytes;
        }
      }
      if (blob.refs !== blob.countedRefs) {
        let repaired = false;
        if (repair) {
          const refs = await repairBlobRefs(sql, blob.hash);
          // The last reference is gone: the row went, and the bytes go as any unreferenced blob's.
          if (refs === 0 && !blob.isInline) await blobs.remove(blob.hash);
          repaired = true;
        }
        found('blob-refs', `blob ${blob.hash}: refs is ${blob.refs}, ${blob.countedRefs} row(s) refer to it${blob.countedRefs === 0 ? ' (the row is unused)' : ''}`, repaired);
      }
    }
    if (page.length < PAGE) break;
  }

  // 2: disk_used of users and groups.
  for (const skew of await usageSkews(sql)) {
    let repaired = false;
    let now = skew.storedBytes;
    if (repair) {
      now = await repairUsage(sql, skew.ownerType, skew.uuid);
      repaired = true;
    }
    found(
      'disk-used',
      `${skew.ownerType === 'User' ? 'user' : 'group'} ${skew.name} (${skew.uuid}): disk_used is ${skew.recordedBytes}, its revisions hold ${skew.storedBytes} bytes${repaired ? ` (set to ${now})` : ''}`,
      repaired,
    );
  }
  summary.ownersChecked = await ownerCount(sql);

  // 4: what the backend holds that no row names.
  const cutoff = options.now() - options.graceMs;
  for await (const stored of blobs.list()) {
    if (await isBlobReferenced(sql, stored.hash)) continue;
    if (stored.modifiedMs > cutoff) {
      summary.youngUnreferenced += 1;
      continue;
    }
    const repaired = repair ? await blobs.remove(stored.hash) : false;
    found('orphan-blob', `orphan blob ${stored.hash} (${stored.sizeBytes} bytes at ${where(blobs, stored.hash)}): no row refers to it`, repaired);
  }

  summary.remaining = findings.filter((f) => !f.repaired).length;
  return summary;
}

type WrongChecksum = { sha1: string; md5: string; text: string };

/**
 * Whether the blob's bytes are there and match its address, then `checksums` on the digest
 * (with SHA-1 and MD5); the problem otherwise.
 */
async function verifyBytes(
  sql: Sql,
  blobs: BlobBackend,
  blob: BlobRow,
  checksums: (digest: BlobDigest) => WrongChecksum | undefined,
): Promise<{ kind: 'missing-blob' | 'damaged-blob'; detail: string } | ({ kind: 'wrong-checksum' } & WrongChecksum) | undefined> {
  const { hash, sizeBytes } = blob;
  try {
    let digest: BlobDigest;
    if (blob.isInline) {
      const bytes = await inlineBytes(sql, hash);
      if (bytes === undefined) return undefined; // gone meanwhile (purged): nothing to verify
      const { hash: blake3, sha1, md5 } = digestOf(bytes);
      digest = { sizeBytes: bytes.length, blake3, sha256: createHash('sha256').update(bytes).digest('hex'), sha1, md5 };
      assertAddressed(hash, sizeBytes, digest, 'its database row');
    } else {
      digest = await digestBlob(blobs, hash, { checksums: true });
      assertAddressed(hash, sizeBytes, digest, where(blobs, hash));
    }
    const wrong = checksums(digest);
    return wrong ? { kind: 'wrong-checksum', ...wrong } : undefined;
  } catch (err) {
    if (err instanceof BlobMissingError) {
      // Purged meanwhile by the running server (the row went first, then the bytes): not a finding.
      if (!(await isBlobReferenced(sql, hash))) return undefined;
      return { kind: 'missing-blob', detail: `not at ${where(blobs, hash)}` };
    }
    if (err instanceof BlobVerificationError) return { kind: 'damaged-blob', detail: err.message };
    throw err;
  }
}
