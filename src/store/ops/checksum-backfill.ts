/**
 * The checksum backfill: SHA-1 and MD5 for blobs stored before the store computed them
 * (migration 019; docs/extensions.md "Checksums"), and the MD5 of a large upload whose background
 * MD5 (ops/md5-later.ts) did not finish: its process stopped, or more were under way than it
 * takes. Until a blob has a checksum, the files using it publish none of that type, which clients
 * take as "unknown" and compare by what they have (SHA-1, size) as before.
 *
 * - Bounded rate: at most `perSec` blobs a second per job (`store.checksumBackfillPerSec`),
 *   whatever their size; one blob at a time, so it never holds more than one read open.
 * - Resumable: the progress is the rows themselves (`md5 IS NULL` is what is left, a partial
 *   index finds it: migration 035), so a stop loses at most the blob being hashed.
 * - Never twice: a job claims a batch by setting `checksum_lease` in one statement (PostgreSQL:
 *   `FOR UPDATE SKIP LOCKED`, so two instances' claims pass each other; SQLite serializes
 *   writers), and another job takes a claimed row only once its lease has expired (its job
 *   crashed). A stopped job gives back what it had not hashed.
 * - Over SQLite and PostgreSQL, for inline, local and S3 blobs alike: bytes are read through
 *   the blob backend. A blob the backend cannot give (missing, S3 down) keeps its lease and is
 *   tried again when it expires; `driveway check` reports a missing one.
 */
import type { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { BlobBackend } from '../blobs/blob-backend.js';
import { ContentDigests, digestOf } from '../blobs/staging.js';
import type { Sql } from '../storage/sql.js';
import type { Logger } from '../../common/logger.js';

/** How long a claim holds: longer than hashing a batch of large blobs from S3 takes. */
export const CHECKSUM_LEASE_MS = 15 * 60_000;
const BATCH = 20;

export interface BackfillOptions {
  sql: Sql;
  blobs: BlobBackend;
  log?: Logger | undefined;
  /** Blobs per second, at most; Infinity for no bound (tests, `driveway check --repair`). */
  perSec: number;
  /** The store's clock, for leases (the pace is kept by the monotonic clock). */
  now: () => number;
  signal?: AbortSignal | undefined;
  /** Stop after this many blobs (tests); unbounded when absent. */
  limit?: number | undefined;
}

export interface BackfillReport {
  /** The blobs this job hashed, by address. */
  hashed: string[];
  /** Blobs it could not read (left for a later try). */
  failed: number;
  /** Whether it stopped because nothing was left to claim. */
  done: boolean;
}

interface Claimed {
  hash: string;
  data: Buffer | null;
}

/** Claims up to `limit` blobs without checksums that no live job holds. */
export async function claimBlobsWithoutChecksums(sql: Sql, nowMs: number, limit: number): Promise<Claimed[]> {
  const lock = sql.dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
  const rows = await sql.all<Claimed>(
    `UPDATE blobs SET checksum_lease = ? WHERE hash IN (
       SELECT hash FROM blobs WHERE md5 IS NULL AND (checksum_lease IS NULL OR checksum_lease < ?) ORDER BY hash LIMIT ? ${lock}
     ) RETURNING hash, data`,
    [nowMs + CHECKSUM_LEASE_MS, nowMs, limit],
  );
  return rows.sort((a, b) => (a.hash < b.hash ? -1 : 1));
}

/** Records a blob's checksums (unless another job or an upload already did) and ends its claim. */
export async function recordChecksums(sql: Sql, hash: string, sums: { sha1: string; md5: string }): Promise<void> {
  await sql.run('UPDATE blobs SET sha1 = COALESCE(sha1, ?), md5 = COALESCE(md5, ?), checksum_lease = NULL WHERE hash = ?', [sums.sha1, sums.md5, hash]);
}

async function releaseClaims(sql: Sql, hashes: readonly string[]): Promise<void> {
  for (const hash of hashes) await sql.run('UPDATE blobs SET checksum_lease = NULL WHERE hash = ? AND md5 IS NULL', [hash]);
}

/**
 * Claims a blob just recorded without its MD5 for the background MD5 until `untilMs`, so no
 * backfill hashes it meanwhile; false when it has its MD5 already (the same bytes stored before).
 */
export async function claimForLaterMd5(sql: Sql, hash: string, untilMs: number): Promise<boolean> {
  const row = await sql.get<{ hash: string }>('UPDATE blobs SET checksum_lease = ? WHERE hash = ? AND md5 IS NULL RETURNING hash', [untilMs, hash]);
  return row !== undefined;
}

/** Gives back a background MD5's claim it could not finish. */
export async function releaseLaterMd5(sql: Sql, hash: string): Promise<void> {
  await sql.run('UPDATE blobs SET checksum_lease = NULL WHERE hash = ? AND md5 IS NULL', [hash]);
}

/** Records a blob's later MD5 (unless another job did) and ends its claim. */
export async function recordLaterMd5(sql: Sql, hash: string, md5: string): Promise<void> {
  await sql.run('UPDATE blobs SET md5 = COALESCE(md5, ?), checksum_lease = NULL WHERE hash = ?', [md5, hash]);
}

/** How many blobs still lack a checksum (progress, for logs and tests). */
export async function blobsWithoutChecksums(sql: Sql): Promise<number> {
  return Number((await sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM blobs WHERE md5 IS NULL'))?.n ?? 0);
}

/** SHA-1 and MD5 of a stored blob, read once through the backend (or its row). */
async function checksumsOf(blobs: BlobBackend, claimed: Claimed): Promise<{ sha1: string; md5: string }> {
  if (claimed.data !== null) return digestOf(claimed.data);
  const reader = await blobs.get(claimed.hash);
  try {
    const body: Readable = reader.kind === 'file' ? reader.stream() : reader.body;
    const digests = new ContentDigests();
    for await (const chunk of body) digests.update(chunk as Buffer);
    return digests.digest();
  } finally {
    await reader.close();
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Hashes blobs without checksums until none is left to claim, `limit` is reached, or `signal` stops it. */
export async function backfillChecksums(options: BackfillOptions): Promise<BackfillReport> {
  const { sql, blobs, log, perSec, now, signal } = options;
  const report: BackfillReport = { hashed: [], failed: 0, done: false };
  if (!(perSec > 0)) return report;
  const spacingMs = Number.isFinite(perSec) ? 1000 / perSec : 0;
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  let next = performance.now();
  while (!signal?.aborted && report.hashed.length < limit) {
    const batch = await claimBlobsWithoutChecksums(sql, now(), Math.max(1, Math.min(BATCH, Math.ceil(perSec), limit - report.hashed.length)));
    if (batch.length === 0) {
      report.done = true;
      break;
    }
    let i = 0;
    try {
      for (; i < batch.length; i++) {
        if (signal?.aborted) break;
        await sleep(next - performance.now(), signal);
        if (signal?.aborted) break;
        next = Math.max(next, performance.now()) + spacingMs;
        const claimed = batch[i] as Claimed;
        try {
          await recordChecksums(sql, claimed.hash, await checksumsOf(blobs, claimed));
          report.hashed.push(claimed.hash);
        } catch (err) {
          // Kept claimed: tried again once the lease expires (a missing blob is check's to report).
          report.failed += 1;
          log?.warn({ err, blob: claimed.hash }, 'checksum backfill could not read a blob; it is tried again later');
        }
      }
    } finally {
      await releaseClaims(sql, batch.slice(i).map((c) => c.hash));
    }
  }
  return report;
}
