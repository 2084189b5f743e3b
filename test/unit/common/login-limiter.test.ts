/**
 * MemoryLoginLimiter: attempts counted when reserved (so parallel ones never pass the limit),
 * failures kept, successes and releases freeing their slot, the sliding window per account and
 * per source, Retry-After arithmetic, recovery when time passes, success clearing only the
 * account, and the memory bound.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { MemoryLoginLimiter, type LoginAttempt } from '../../../src/common/login-limiter.js';

function limiter(maxKeys?: number): { clock: ManualClock; limits: MemoryLoginLimiter } {
  const clock = new ManualClock();
  clock.freeze(); // Retry-After arithmetic is exact to the second
  return { clock, limits: new MemoryLoginLimiter({ clock, maxFailures: 3, windowSec: 60, maxKeys }) };
}

function attempt(limits: MemoryLoginLimiter, account: string, source: string): LoginAttempt {
  const reservation = limits.reserveNow(account, source);
  if (!reservation.allowed) throw new Error(`refused: ${account} from ${source}`);
  return reservation.attempt;
}

async function fail(limits: MemoryLoginLimiter, account: string, source: string): Promise<void> {
  await attempt(limits, account, source).failed();
}

describe('MemoryLoginLimiter', () => {
  it('counts an attempt when it is reserved: parallel attempts beyond the limit are refused before any is settled', async () => {
    const { limits } = limiter();
    const reservations = await Promise.all(Array.from({ length: 10 }, (_, i) => limits.reserve('a@x.org', `10.0.0.${i}`)));
    expect(reservations.filter((r) => r.allowed)).toHaveLength(3);
    expect(reservations.filter((r) => !r.allowed)).toHaveLength(7);
  });

  it('frees the slot of a released or successful attempt, and keeps a failed one', async () => {
    const { limits } = limiter();
    const first = attempt(limits, 'a', '10.0.0.1');
    const second = attempt(limits, 'a', '10.0.0.1');
    const third = attempt(limits, 'a', '10.0.0.1');
    expect(limits.reserveNow('a', '10.0.0.2').allowed).toBe(false);
    await first.released();
    await second.failed();
    await second.released(); // settled already: no effect
    expect(limits.reserveNow('a', '10.0.0.2').allowed).toBe(true);
    expect(limits.reserveNow('a', '10.0.0.2').allowed).toBe(false);
    await third.succeeded();
    // The account's settled failures are gone; the one still in flight (10.0.0.2) stays counted.
    expect(limits.reserveNow('a', '10.0.0.3').allowed).toBe(true);
    expect(limits.reserveNow('a', '10.0.0.3').allowed).toBe(true);
    expect(limits.reserveNow('a', '10.0.0.3').allowed).toBe(false);
  });

  it('allows attempts until a username reaches the limit from any mix of addresses', async () => {
    const { limits } = limiter();
    await fail(limits, 'a@x.org', '10.0.0.1');
    await fail(limits, 'a@x.org', '10.0.0.2');
    await fail(limits, 'a@x.org', '10.0.0.3');
    expect(limits.reserveNow('a@x.org', '10.0.0.4')).toEqual({ allowed: false, retryAfterSec: 60 });
    expect(limits.reserveNow('b@x.org', '10.0.0.4').allowed).toBe(true);
  });

  it('counts usernames case-insensitively', async () => {
    const { limits } = limiter();
    for (const name of ['A@x.org', 'a@X.org', 'a@x.ORG']) await fail(limits, name, `10.0.0.${name.length}`);
    expect(limits.reserveNow('a@x.org', '10.9.9.9').allowed).toBe(false);
  });

  it('blocks an address that failed for several usernames', async () => {
    const { limits } = limiter();
    for (const name of ['a', 'b', 'c']) await fail(limits, name, '10.0.0.1');
    expect(limits.reserveNow('d', '10.0.0.1').allowed).toBe(false);
    expect(limits.reserveNow('d', '10.0.0.2').allowed).toBe(true);
  });

  it('says how long to wait, and allows again once the oldest failure left the window', async () => {
    const { clock, limits } = limiter();
    await fail(limits, 'a', '10.0.0.1');
    clock.advance(20_000);
    await fail(limits, 'a', '10.0.0.1');
    clock.advance(20_000);
    await fail(limits, 'a', '10.0.0.1');
    expect(limits.reserveNow('a', '10.0.0.1')).toEqual({ allowed: false, retryAfterSec: 20 });
    clock.advance(19_000);
    expect(limits.reserveNow('a', '10.0.0.1')).toEqual({ allowed: false, retryAfterSec: 1 });
    clock.advance(1_000);
    await fail(limits, 'a', '10.0.0.1');
    expect(limits.reserveNow('a', '10.0.0.1')).toEqual({ allowed: false, retryAfterSec: 20 });
  });

  it('clears the username on success but not the address', async () => {
    const { limits } = limiter();
    await fail(limits, 'a', '10.0.0.1');
    await fail(limits, 'b', '10.0.0.1');
    await fail(limits, 'a', '10.0.0.2');
    await attempt(limits, 'A', '10.0.0.1').succeeded();
    expect(limits.reserveNow('a', '10.0.0.3').allowed).toBe(true);
    await fail(limits, 'c', '10.0.0.1');
    expect(limits.reserveNow('a', '10.0.0.1').allowed).toBe(false);
  });

  it('keeps at most maxKeys keys, dropping expired ones first and then the least recently tried', async () => {
    const { clock, limits } = limiter(100);
    for (let i = 0; i < 100; i += 1) await fail(limits, `old${i}`, `10.0.${i}.1`);
    clock.advance(61_000);
    await fail(limits, 'fresh', '10.1.0.1');
    expect(limits.trackedKeys).toEqual({ accounts: 1, sources: 1 });

    for (let i = 0; i < 250; i += 1) {
      for (let k = 0; k < 3; k += 1) await fail(limits, `u${i}`, `10.2.${i % 250}.${k}`);
    }
    expect(limits.trackedKeys.accounts).toBeLessThanOrEqual(100);
    expect(limits.trackedKeys.sources).toBeLessThanOrEqual(100);
    expect(limits.reserveNow('u249', '10.9.9.9').allowed).toBe(false);
  });

  it('measures the wait from the newest failures', async () => {
    const { clock, limits } = limiter();
    for (let i = 0; i < 3; i += 1) {
      await fail(limits, 'a', '10.0.0.1');
      clock.advance(10_000);
    }
    expect(limits.reserveNow('a', '10.0.0.2')).toEqual({ allowed: false, retryAfterSec: 30 });
  });
});
