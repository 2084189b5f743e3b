/**
 * Failed-login limiter: counts failures per username and per client IP inside a sliding
 * window; once either reaches the limit, login is refused (429) until the oldest counted
 * failure leaves the window. A success clears the username's counter, not the IP's (one
 * address may try many accounts). Memory stays bounded: each key keeps at most `maxFailures`
 * timestamps, stale keys are pruned, and each map holds at most `maxKeys` keys, the least
 * recently failed going first. Time comes from the injected Clock. Knows nothing of HTTP or
 * passwords.
 */
import type { Clock } from '../common/clock.js';

export interface LoginLimiterOptions {
  clock: Clock;
  maxFailures: number;
  windowSec: number;
  /** Keys kept per map (usernames, IPs) before the least recently failed are dropped. */
  maxKeys?: number;
}

export interface LimitVerdict {
  allowed: boolean;
  /** Whole seconds until a login may be tried again; 0 when allowed. */
  retryAfterSec: number;
}

const DEFAULT_MAX_KEYS = 10_000;

class FailureWindow {
  /** key -> failure times, oldest first; insertion order = least recently failed first. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  /** Milliseconds until `key` may try again; 0 when it is under the limit. */
  blockedForMs(key: string, now: number): number {
    const times = this.live(key, now);
    if (times.length < this.maxFailures) return 0;
    const oldest = times[times.length - this.maxFailures] as number;
    return oldest + this.windowMs - now;
  }

  add(key: string, now: number): void {
    const times = this.live(key, now);
    times.push(now);
    if (times.length > this.maxFailures) times.splice(0, times.length - this.maxFailures);
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > this.maxKeys) this.prune(now);
  }

  clear(key: string): void {
    this.failures.delete(key);
  }

  get size(): number {
    return this.failures.size;
  }

  private live(key: string, now: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const firstLive = times.findIndex((t) => t > now - this.windowMs);
    if (firstLive === -1) {
      this.failures.delete(key);
      return [];
    }
    if (firstLive > 0) times.splice(0, firstLive);
    return times;
  }

  private prune(now: number): void {
    for (const [key, times] of this.failures) {
      const newest = times[times.length - 1];
      if (newest === undefined || newest <= now - this.windowMs) this.failures.delete(key);
    }
    // Still full of live keys: drop the least recently failed ones, a tenth more than needed
    // so a flood does not rescan the whole map on every failure.
    const target = Math.floor(this.maxKeys * 0.9);
    for (const key of this.failures.keys()) {
      if (this.failures.size <= target) break;
      this.failures.delete(key);
    }
  }
}

export class LoginLimiter {
  private readonly clock: Clock;
  private readonly byUsername: FailureWindow;
  private readonly byIp: FailureWindow;

  constructor(options: LoginLimiterOptions) {
    this.clock = options.clock;
    const windowMs = options.windowSec * 1000;
    const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    this.byUsername = new FailureWindow(options.maxFailures, windowMs, maxKeys);
    this.byIp = new FailureWindow(options.maxFailures, windowMs, maxKeys);
  }

  /** Whether a login for `username` from `ip` may be attempted now. */
  check(username: string, ip: string): LimitVerdict {
    const now = this.clock.now();
    const waitMs = Math.max(this.byUsername.blockedForMs(normalise(username), now), this.byIp.blockedForMs(ip, now));
    return waitMs > 0 ? { allowed: false, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) } : { allowed: true, retryAfterSec: 0 };
  }

  recordFailure(username: string, ip: string): void {
    const now = this.clock.now();
    this.byUsername.add(normalise(username), now);
    this.byIp.add(ip, now);
  }

  recordSuccess(username: string): void {
    this.byUsername.clear(normalise(username));
  }

  /** Keys held (for tests of the memory bound). */
  get trackedKeys(): { usernames: number; ips: number } {
    return { usernames: this.byUsername.size, ips: this.byIp.size };
  }
}

/** Usernames are emails compared case-insensitively, so `A@x.org` and `a@x.org` share a counter. */
function normalise(username: string): string {
  return username.toLowerCase();
}
