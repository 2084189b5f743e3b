/**
 * One suite for every LoginLimiter (common/login-limiter.ts): attempts counted when reserved (so
 * parallel ones never pass the limit), failures kept, successes and releases freeing their slot,
 * the sliding window per account and per source, Retry-After arithmetic, recovery when time
 * passes, success clearing only the account. Run on memory (test/unit/common/login-limiter.test.ts),
 * on SQLite and on PostgreSQL (test/integration/storage/limits.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/common/clock.js';
import type { LoginAttempt, LoginLimiter, LoginLimiterOptions } from '../../src/common/login-limiter.js';

/** Makes a fresh, empty limiter with these options; `close` (optional) runs after each test. */
export interface LimiterFactory {
  open(options: LoginLimiterOptions): Promise<LoginLimiter>;
  close?(): Promise<void>;
}

export function describeLoginLimiter(name: string, factory: () => LimiterFactory): void {
  describe(`LoginLimiter contract: ${name}`, () => {
    let current: LimiterFactory | undefined;
    afterEach(async () => {
      await current?.close?.();
      current = undefined;
    });

    async function limiter(): Promise<{ clock: ManualClock; limits: LoginLimiter }> {
      const clock = new ManualClock();
      clock.freeze(); // Retry-After arithmetic is exact to the second
      current = factory();
      return { clock, limits: await current.open({ clock, maxFailures: 3, windowSec: 60 }) };
    }

    async function attempt(limits: LoginLimiter, account: string, source: string): Promise<LoginAttempt> {
      const reservation = await limits.reserve(account, source);
      if (!reservation.allowed) throw new Error(`refused: ${account} from ${source}`);
      return reservation.attempt;
    }

    async function fail(limits: LoginLimiter, account: string, source: string): Promise<void> {
      await (await attempt(limits, account, source)).failed();
    }

    const allowed = async (limits: LoginLimiter, account: string, source: string): Promise<boolean> => (await limits.reserve(account, source)).allowed;

    it('counts an attempt when it is reserved: parallel attempts beyond the limit are refused before any is settled', async () => {
      const { limits } = await limiter();
      const reservations = await Promise.all(Array.from({ length: 10 }, (_, i) => limits.reserve('a@x.org', `10.0.0.${i}`)));
      expect(reservations.filter((r) => r.allowed)).toHaveLength(3);
      expect(reservations.filter((r) => !r.allowed)).toHaveLength(7);
    });

    it('frees the slot of a released or successful attempt, and keeps a failed one', async () => {
      const { limits } = await limiter();
      const first = await attempt(limits, 'a', '10.0.0.1');
      const second = await attempt(limits, 'a', '10.0.0.1');
      const third = await attempt(limits, 'a', '10.0.0.1');
      expect(await allowed(limits, 'a', '10.0.0.2')).toBe(false);
      await first.released();
      await second.failed();
      await second.released(); // settled already: no effect
      expect(await allowed(limits, 'a', '10.0.0.2')).toBe(true);
      expect(await allowed(limits, 'a', '10.0.0.2')).toBe(false);
      await third.succeeded();
      // The account's settled failures are gone; the one still in flight (10.0.0.2) stays counted.
      expect(await allowed(limits, 'a', '10.0.0.3')).toBe(true);
      expect(await allowed(limits, 'a', '10.0.0.3')).toBe(true);
      expect(await allowed(limits, 'a', '10.0.0.3')).toBe(false);
    });

    it('allows attempts until a username reaches the limit from any mix of addresses', async () => {
      const { limits } = await limiter();
      await fail(limits, 'a@x.org', '10.0.0.1');
      await fail(limits, 'a@x.org', '10.0.0.2');
      await fail(limits, 'a@x.org', '10.0.0.3');
      expect(await limits.reserve('a@x.org', '10.0.0.4')).toEqual({ allowed: false, retryAfterSec: 60 });
      expect(await allowed(limits, 'b@x.org', '10.0.0.4')).toBe(true);
    });

    it('counts usernames case-insensitively', async () => {
      const { limits } = await limiter();
      for (const name of ['A@x.org', 'a@X.org', 'a@x.ORG']) await fail(limits, name, `10.0.0.${name.length}`);
      expect(await allowed(limits, 'a@x.org', '10.9.9.9')).toBe(false);
    });

    it('blocks an address that failed for several usernames', async () => {
      const { limits } = await limiter();
      for (const name of ['a', 'b', 'c']) await fail(limits, name, '10.0.0.1');
      expect(await allowed(limits, 'd', '10.0.0.1')).toBe(false);
      expect(await allowed(limits, 'd', '10.0.0.2')).toBe(true);
    });

    it('says how long to wait, and allows again once the oldest failure left the window', async () => {
      const { clock, limits } = await limiter();
      await fail(limits, 'a', '10.0.0.1');
      clock.advance(20_000);
      await fail(limits, 'a', '10.0.0.1');
      clock.advance(20_000);
      await fail(limits, 'a', '10.0.0.1');
      expect(await limits.reserve('a', '10.0.0.1')).toEqual({ allowed: false, retryAfterSec: 20 });
      clock.advance(19_000);
      expect(await limits.reserve('a', '10.0.0.1')).toEqual({ allowed: false, retryAfterSec: 1 });
      clock.advance(1_000);
      await fail(limits, 'a', '10.0.0.1');
      expect(await limits.reserve('a', '10.0.0.1')).toEqual({ allowed: false, retryAfterSec: 20 });
    });

    it('clears the username on success but not the address', async () => {
      const { limits } = await limiter();
      await fail(limits, 'a', '10.0.0.1');
      await fail(limits, 'b', '10.0.0.1');
      await fail(limits, 'a', '10.0.0.2');
      await (await attempt(limits, 'A', '10.0.0.1')).succeeded();
      expect(await allowed(limits, 'a', '10.0.0.3')).toBe(true);
      await fail(limits, 'c', '10.0.0.1');
      expect(await allowed(limits, 'a', '10.0.0.1')).toBe(false);
    });

    it('measures the wait from the newest failures', async () => {
      const { clock, limits } = await limiter();
      for (let i = 0; i < 3; i += 1) {
        await fail(limits, 'a', '10.0.0.1');
        clock.advance(10_000);
      }
      expect(await limits.reserve('a', '10.0.0.2')).toEqual({ allowed: false, retryAfterSec: 30 });
    });
  });
}
