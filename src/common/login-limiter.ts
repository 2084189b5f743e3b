/**
 * Failed-login limiter, for every door that checks a secret (account and app passwords, TOTP
 * codes, link passwords, Basic auth through the bridge). An attempt is counted BEFORE the
 * expensive check: `reserve()` counts it against an account key (a username, a link) and a
 * source key (a client address, a link and address) and refuses once either holds `maxFailures`
 * attempts inside the sliding window; the caller then verifies and settles the attempt:
 * `failed()` keeps it counted, `succeeded()` frees it and clears the account's failures (not the
 * source's: one address may try many accounts), `released()` frees it without clearing anything
 * (the attempt proved nothing either way, e.g. a second factor is asked for).
 *
 * So parallel attempts can never evaluate more than the limit: the in-memory implementation
 * counts synchronously inside reserve(), before the first await of its caller, and a
 * database-backed one would count in one atomic statement. The interface is async for the
 * latter. Memory stays bounded: each key keeps at most `maxFailures` marks, stale keys are
 * pruned, and each map holds at most `maxKeys` keys, the least recently tried going first.
 * Time comes from the injected Clock. Knows nothing of HTTP or passwords.
 */
import type { Clock } from './clock.js';

export type Reservation = { allowed: true; attempt: LoginAttempt } | { allowed: false; retryAfterSec: number };

/** A counted attempt, to be settled once (later calls do nothing). */
export interface LoginAttempt {
  /** The secret was right: the attempt no longer counts, and neither do the account's failures. */
  succeeded(): Promise<void>;
  /** The secret was wrong: the attempt stays counted for the window. */
  failed(): Promise<void>;
  /** Neither right nor wrong was learnt: the attempt no longer counts. */
  released(): Promise<void>;
}

export interface LoginLimiter {
  /** Counts an attempt on `account` from `source`, or refuses it with the seconds to wait. */
  reserve(account: string, source: string): Promise<Reservation>;
}

export interface LoginLimiterOptions {
  clock: Clock;
  maxFailures: number;
  windowSec: number;
  /** Keys kept per map (accounts, sources) before the least recently tried are dropped. */
  maxKeys?: number;
}

const DEFAULT_MAX_KEYS = 10_000;

/** One counted attempt: pending until its caller settles it. */
interface Mark {
  at: number;
  pending: boolean;
}

class AttemptWindow {
  /** key -> marks, oldest first; insertion order = least recently tried first. */
  private readonly marks = new Map<string, Mark[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  /** Milliseconds until `key` may try again; 0 when it is under the limit. */
  blockedForMs(key: string, now: number): number {
    const marks = this.live(key, now);
    if (marks.length < this.max) return 0;
    const oldest = (marks[marks.length - this.max] as Mark).at;
    return oldest + this.windowMs - now;
  }

  add(key: string, now: number): Mark {
    const marks = this.live(key, now);
    const mark = { at: now, pending: true };
    marks.push(mark);
    if (marks.length > this.max) marks.splice(0, marks.length - this.max);
    this.marks.delete(key);
    this.marks.set(key, marks);
    if (this.marks.size > this.maxKeys) this.prune(now);
    return mark;
  }

  remove(key: string, mark: Mark): void {
    const marks = this.marks.get(key);
    const at = marks ? marks.indexOf(mark) : -1;
    if (!marks || at === -1) return;
    marks.splice(at, 1);
    if (marks.length === 0) this.marks.delete(key);
  }

  /** Forgets the key's settled failures; attempts still in flight stay counted. */
  clearSettled(key: string): void {
    const marks = this.marks.get(key);
    if (!marks) return;
    const pending = marks.filter((m) => m.pending);
    if (pending.length === 0) this.marks.delete(key);
    else this.marks.set(key, pending);
  }

  get size(): number {
    return this.marks.size;
  }

  private live(key: string, now: number): Mark[] {
    const marks = this.marks.get(key);
    if (!marks) return [];
    const firstLive = marks.findIndex((m) => m.at > now - this.windowMs);
    if (firstLive === -1) {
      this.marks.delete(key);
      return [];
    }
    if (firstLive > 0) marks.splice(0, firstLive);
    return marks;
  }

  private prune(now: number): void {
    for (const [key, marks] of this.marks) {
      const newest = marks[marks.length - 1];
      if (newest === undefined || newest.at <= now - this.windowMs) this.marks.delete(key);
    }
    // Still full of live keys: drop the least recently tried ones, a tenth more than needed
    // so a flood does not rescan the whole map on every attempt.
    const target = Math.floor(this.maxKeys * 0.9);
    for (const key of this.marks.keys()) {
      if (this.marks.size <= target) break;
      this.marks.delete(key);
    }
  }
}

/** The limiter of one process: enough while one process serves a data directory. */
export class MemoryLoginLimiter implements LoginLimiter {
  private readonly clock: Clock;
  private readonly accounts: AttemptWindow;
  private readonly sources: AttemptWindow;

  constructor(options: LoginLimiterOptions) {
    this.clock = options.clock;
    const windowMs = options.windowSec * 1000;
    const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    this.accounts = new AttemptWindow(options.maxFailures, windowMs, maxKeys);
    this.sources = new AttemptWindow(options.maxFailures, windowMs, maxKeys);
  }

  reserve(account: string, source: string): Promise<Reservation> {
    return Promise.resolve(this.reserveNow(account, source));
  }

  /** reserve(), synchronously: counted (or refused) by the time it returns. */
  reserveNow(account: string, source: string): Reservation {
    const now = this.clock.now();
    const accountKey = normalise(account);
    const waitMs = Math.max(this.accounts.blockedForMs(accountKey, now), this.sources.blockedForMs(source, now));
    if (waitMs > 0) return { allowed: false, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
    const onAccount = this.accounts.add(accountKey, now);
    const onSource = this.sources.add(source, now);
    let settled = false;
    const settle = (how: 'succeeded' | 'failed' | 'released'): Promise<void> => {
      if (settled) return Promise.resolve();
      settled = true;
      onAccount.pending = false;
      onSource.pending = false;
      if (how === 'succeeded') {
        this.accounts.remove(accountKey, onAccount);
        this.accounts.clearSettled(accountKey);
        this.sources.remove(source, onSource);
      } else if (how === 'released') {
        this.accounts.remove(accountKey, onAccount);
        this.sources.remove(source, onSource);
      }
      return Promise.resolve();
    };
    return {
      allowed: true,
      attempt: { succeeded: () => settle('succeeded'), failed: () => settle('failed'), released: () => settle('released') },
    };
  }

  /** Keys held (for tests of the memory bound). */
  get trackedKeys(): { accounts: number; sources: number } {
    return { accounts: this.accounts.size, sources: this.sources.size };
  }
}

/** Usernames are emails compared case-insensitively, so `A@x.org` and `a@x.org` share a counter. */
function normalise(account: string): string {
  return account.toLowerCase();
}
