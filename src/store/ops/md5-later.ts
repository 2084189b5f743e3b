/**
 * MD5 after the commit (issue 32): a large upload's answer waits for BLAKE3 (its address) and
 * SHA-1 (what the Nextcloud clients send and verify), not for MD5, which on this machine's cores
 * (~820 MiB/s, no CPU instructions of its own) was what a 1 GiB PUT waited for. The checksum
 * worker goes on with the MD5 after staging returned (blobs/checksum-worker.ts); this records it.
 *
 * - Never a wrong checksum: until the MD5 is recorded the blob's `md5` is NULL, and the file
 *   publishes SHA-1 alone (`oc:checksums` `SHA1:<hex>`, the API's `checksums` without `md5`).
 * - A client that sends an MD5 (OC-Checksum `MD5:`, the bridge's X-File-MD5 / Content-MD5) gets
 *   it computed in the pass and verified before the commit, as before: `thresholdFor()`.
 * - Bounded: at most `max` MD5s under way (store.checksumMd5LaterMax); a further one is left to
 *   the backfill, which is woken for it. Each under way holds one open descriptor on the worker.
 * - Survives a stop: a blob whose MD5 was not recorded keeps `md5` NULL, which the checksum
 *   backfill claims (ops/checksum-backfill.ts), at start and then each minute. While one is under
 *   way here its row is leased, so no backfill hashes it too; a stop gives the lease back, and
 *   one a killed process left runs out (LATER_LEASE_MS, longer for larger files).
 */
import type { Logger } from '../../common/logger.js';
import { parseOcChecksum, knownOcChecksums } from '../../common/oc-checksum.js';
import type { LaterMd5 } from '../blobs/checksum-worker.js';
import type { Sql } from '../storage/sql.js';
import { claimForLaterMd5, recordLaterMd5, releaseLaterMd5 } from './checksum-backfill.js';

/** A background MD5's lease: this long, plus the time to read the file at LEASE_BYTES_PER_MS. */
const LATER_LEASE_MS = 60_000;
const LEASE_BYTES_PER_MS = 10 * 1024;

export interface Md5LaterOptions {
  sql: Sql;
  log: Logger;
  now: () => number;
  /** Bodies from this size on get their MD5 after the commit; Infinity: never. */
  fromBytes: number;
  /** MD5s under way at once; beyond it, the backfill's. */
  max: number;
  /** Wakes the checksum backfill for a blob left to it. */
  wakeBackfill: () => void;
}

export class Md5AfterCommit {
  private underWay = 0;
  private readonly pending = new Set<{ later: LaterMd5; done: Promise<void> }>();
  private closed = false;

  constructor(private readonly options: Md5LaterOptions) {}

  /** stage()'s `md5LaterBytes` for an upload with this OC-Checksum claim: undefined when MD5 is needed before the commit. */
  thresholdFor(claim: string | undefined): number | undefined {
    if (!Number.isFinite(this.options.fromBytes)) return undefined;
    if (claim !== undefined && knownOcChecksums(parseOcChecksum(claim)).some((e) => e.algorithm === 'MD5')) return undefined;
    return this.options.fromBytes;
  }

  /** After the commit that recorded blob `hash` (`sizeBytes`) without its MD5. Never throws. */
  take(hash: string, sizeBytes: number, later: LaterMd5): void {
    if (this.closed || this.underWay >= this.options.max) {
      later.cancel();
      this.options.wakeBackfill();
      return;
    }
    this.underWay += 1;
    const entry = { later, done: Promise.resolve() };
    entry.done = this.record(hash, sizeBytes, later).finally(() => {
      this.underWay -= 1;
      this.pending.delete(entry);
    });
    this.pending.add(entry);
  }

  private async record(hash: string, sizeBytes: number, later: LaterMd5): Promise<void> {
    const { sql, log, now } = this.options;
    try {
      if (!(await claimForLaterMd5(sql, hash, now() + LATER_LEASE_MS + Math.ceil(sizeBytes / LEASE_BYTES_PER_MS)))) {
        later.cancel();
        return;
      }
      await recordLaterMd5(sql, hash, await later.md5);
    } catch (err) {
      // Given back at once, so a backfill (this instance's after a restart, or another's) takes it.
      await releaseLaterMd5(sql, hash).catch(() => undefined);
      if (this.closed) return;
      log.warn({ err, blob: hash }, 'the MD5 of an upload could not be computed after its commit; the checksum backfill does it');
      this.options.wakeBackfill();
    }
  }

  /** Waits for the MD5s under way (tests, and a drained stop); new ones go to the backfill. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending].map((p) => p.done));
  }

  /** Stops: MD5s under way are dropped and their rows given back to the backfill. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { later } of this.pending) later.cancel();
    await this.settled();
  }
}
