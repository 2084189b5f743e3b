/**
 * The login and link limiters in the database (`limit_marks`, migration 013): the contract of
 * common/login-limiter.ts (an attempt counted at reserve(), before the secret is checked; a
 * failure kept for the window; a success freeing its slot and the account's failures; a release
 * freeing its slot), kept by rows every instance over one database counts, so the hardening
 * rules hold across instances (docs/scale-out.md "Shared state").
 *
 * One row per reserved attempt and counter (the account's, the source's). reserve() counts and
 * inserts in ONE transaction serialised per key:
 * - SQLite: the dialect's one transaction at a time (BEGIN IMMEDIATE).
 * - PostgreSQL: advisory transaction locks on both keys, taken in a fixed order (no deadlock
 *   between an attempt locking account then source and one locking them the other way), and the
 *   transaction switched to READ COMMITTED before its first query, so each statement after the
 *   locks sees what the previous holder committed. (Under the dialect's SERIALIZABLE the
 *   snapshot would predate the wait: every waiter would be rolled back and retried once per
 *   attempt ahead of it, and a burst of 50 would run out of retries.)
 * So N parallel attempts on one account, through any number of instances, evaluate at most
 * `maxFailures`.
 *
 * Bounded: each key holds at most `maxFailures` live rows (reserve refuses beyond); a key's stale
 * rows go when it is tried again; every SWEEP_EVERY reserves an instance drops the rows of its
 * scopes older than the window, and, if a scope still holds more than `maxKeys × maxFailures`
 * rows (a flood of distinct names and addresses), the oldest of them.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '../../common/clock.js';
import { MemoryLoginLimiter, type LoginAttempt, type LoginLimiter, type LoginLimiterOptions, type Reservation } from '../../common/login-limiter.js';
import type { Sql, Storage } from './sql.js';

/** First key of the two-key advisory locks taken here ("LIMT"); the second is a hash of scope and key. */
const ADVISORY_NAMESPACE = 0x4c494d54;
const SWEEP_EVERY = 256;
const DEFAULT_MAX_KEYS = 10_000;

export interface SqlLoginLimiterOptions extends LoginLimiterOptions {
  /** Names the limiter in the shared table: 'login', 'link', 'bridge'. */
  scope: string;
  /** Reserves between two sweeps of stale rows (default 256). */
  sweepEvery?: number;
}

/**
 * The limiter a store over `storage` uses: in the database over PostgreSQL (instances count
 * together), in memory over SQLite (one process serves the data directory, and a Map is faster
 * than a transaction per attempt).
 */
export function loginLimiterFor(storage: Storage, options: SqlLoginLimiterOptions): LoginLimiter {
  return sharedLoginLimiter(storage, options) ?? new MemoryLoginLimiter(options);
}

/** The database limiter over PostgreSQL; undefined over SQLite (the caller keeps its memory one). */
export function sharedLoginLimiter(storage: Storage, options: SqlLoginLimiterOptions): SqlLoginLimiter | undefined {
  return storage.dialect === 'postgres' ? new SqlLoginLimiter(storage.sql, options) : undefined;
}

export class SqlLoginLimiter implements LoginLimiter {
  private readonly clock: Clock;
  private readonly max: number;
  private readonly windowMs: number;
  private readonly maxRows: number;
  private readonly accountScope: string;
  private readonly sourceScope: string;
  private readonly sweepEvery: number;
  private reservesSinceSweep = 0;

  constructor(
    private readonly sql: Sql,
    options: SqlLoginLimiterOptions,
  ) {
    this.clock = options.clock;
    this.max = options.maxFailures;
    this.windowMs = options.windowSec * 1000;
    this.maxRows = (options.maxKeys ?? DEFAULT_MAX_KEYS) * options.maxFailures;
    this.accountScope = `${options.scope}:account`;
    this.sourceScope = `${options.scope}:source`;
    this.sweepEvery = options.sweepEvery ?? SWEEP_EVERY;
  }

  async reserve(account: string, source: string): Promise<Reservation> {
    const now = this.clock.now();
    const accountKey = account.toLowerCase();
    const attempt = randomUUID();
    const since = now - this.windowMs;
    const sweep = ++this.reservesSinceSweep >= this.sweepEvery;
    if (sweep) this.reservesSinceSweep = 0;
    const waitMs = await this.sql.transaction(async (tx) => {
      if (tx.dialect === 'postgres') {
        await tx.exec('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
        const keys = [lockKey(this.accountScope, accountKey), lockKey(this.sourceScope, source)].sort((a, b) => a - b);
        for (const key of keys) await tx.run('SELECT pg_advisory_xact_lock(?, ?)', [ADVISORY_NAMESPACE, key]);
      }
      await tx.run('DELETE FROM limit_marks WHERE scope = ? AND key = ? AND at <= ?', [this.accountScope, accountKey, since]);
      await tx.run('DELETE FROM limit_marks WHERE scope = ? AND key = ? AND at <= ?', [this.sourceScope, source, since]);
      const wait = Math.max(await this.blockedForMs(tx, this.accountScope, accountKey, now), await this.blockedForMs(tx, this.sourceScope, source, now));
      if (wait > 0) return wait;
      await tx.run('INSERT INTO limit_marks (attempt, scope, key, at, pending) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 1)', [
        attempt,
        this.accountScope,
        accountKey,
        now,
        attempt,
        this.sourceScope,
        source,
        now,
      ]);
      return 0;
    });
    if (sweep) await this.sweep(since);
    if (waitMs > 0) return { allowed: false, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
    return { allowed: true, attempt: this.attempt(attempt, accountKey) };
  }

  /** Milliseconds until `key` may try again (the max-th newest live mark leaving the window); 0 under the limit. */
  private async blockedForMs(tx: Sql, scope: string, key: string, now: number): Promise<number> {
    const row = await tx.get<{ at: number }>('SELECT at FROM limit_marks WHERE scope = ? AND key = ? AND at > ? ORDER BY at DESC LIMIT 1 OFFSET ?', [
      scope,
      key,
      now - this.windowMs,
      this.max - 1,
    ]);
    return row ? Number(row.at) + this.windowMs - now : 0;
  }

  private attempt(id: string, accountKey: string): LoginAttempt {
    let settled = false;
    const once = (work: () => Promise<void>) => async (): Promise<void> => {
      if (settled) return;
      settled = true;
      await work();
    };
    return {
      failed: once(async () => {
        await this.sql.run('UPDATE limit_marks SET pending = 0 WHERE attempt = ?', [id]);
      }),
      released: once(async () => {
        await this.sql.run('DELETE FROM limit_marks WHERE attempt = ?', [id]);
      }),
      // The account's settled failures go; attempts still in flight stay counted, and so do the source's.
      succeeded: once(async () => {
        await this.sql.run('DELETE FROM limit_marks WHERE attempt = ?', [id]);
        await this.sql.run('DELETE FROM limit_marks WHERE scope = ? AND key = ? AND pending = 0', [this.accountScope, accountKey]);
      }),
    };
  }

  /** Drops this limiter's stale rows, then the oldest beyond the bound. */
  private async sweep(since: number): Promise<void> {
    for (const scope of [this.accountScope, this.sourceScope]) {
      await this.sql.run('DELETE FROM limit_marks WHERE scope = ? AND at <= ?', [scope, since]);
      const cut = await this.sql.get<{ at: number }>('SELECT at FROM limit_marks WHERE scope = ? ORDER BY at DESC LIMIT 1 OFFSET ?', [scope, this.maxRows]);
      if (cut) await this.sql.run('DELETE FROM limit_marks WHERE scope = ? AND at <= ?', [scope, Number(cut.at)]);
    }
  }

  /** Rows this limiter holds (for tests of the bound). */
  async trackedRows(): Promise<number> {
    const row = await this.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM limit_marks WHERE scope IN (?, ?)', [this.accountScope, this.sourceScope]);
    return Number(row?.n ?? 0);
  }
}

/** A signed 32-bit key for PostgreSQL's advisory lock on one counter. */
function lockKey(scope: string, key: string): number {
  return createHash('sha256').update(scope).update('\0').update(key).digest().readInt32BE(0);
}
