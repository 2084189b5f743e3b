/**
 * LoginLimiter: sliding window per username and per IP, Retry-After arithmetic, recovery
 * when time passes, success clearing only the username, and the memory bound.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { LoginLimiter } from '../../../src/store/login-limiter.js';

function limiter(maxKeys?: number): { clock: ManualClock; limits: LoginLimiter } {
  const clock = new ManualClock();
  clock.freeze(); // Retry-After arithmetic is exact to the second
  return { clock, limits: new LoginLimiter({ clock, maxFailures: 3, windowSec: 60, maxKeys }) };
}

describe('LoginLimiter', () => {
  it('allows attempts until a username reaches the limit from any mix of addresses', () => {
    const { limits } = limiter();
    limits.recordFailure('a@x.org', '10.0.0.1');
    limits.recordFailure('a@x.org', '10.0.0.2');
    expect(limits.check('a@x.org', '10.0.0.3').allowed).toBe(true);
    limits.recordFailure('a@x.org', '10.0.0.3');
    expect(limits.check('a@x.org', '10.0.0.4')).toEqual({ allowed: false, retryAfterSec: 60 });
    expect(limits.check('b@x.org', '10.0.0.4').allowed).toBe(true);
  });

  it('counts usernames case-insensitively', () => {
    const { limits } = limiter();
    for (const name of ['A@x.org', 'a@X.org', 'a@x.ORG']) limits.recordFailure(name, `10.0.0.${name.length}`);
    expect(limits.check('a@x.org', '10.9.9.9').allowed).toBe(false);
  });

  it('blocks an address that failed for several usernames', () => {
    const { limits } = limiter();
    for (const name of ['a', 'b', 'c']) limits.recordFailure(name, '10.0.0.1');
    expect(limits.check('d', '10.0.0.1').allowed).toBe(false);
    expect(limits.check('d', '10.0.0.2').allowed).toBe(true);
  });

  it('says how long to wait, and allows again once the oldest failure left the window', () => {
    const { clock, limits } = limiter();
    limits.recordFailure('a', '10.0.0.1');
    clock.advance(20_000);
    limits.recordFailure('a', '10.0.0.1');
    clock.advance(20_000);
    limits.recordFailure('a', '10.0.0.1');
    expect(limits.check('a', '10.0.0.1').retryAfterSec).toBe(20);
    clock.advance(19_000);
    expect(limits.check('a', '10.0.0.1')).toEqual({ allowed: false, retryAfterSec: 1 });
    clock.advance(1_000);
    expect(limits.check('a', '10.0.0.1').allowed).toBe(true);
    limits.recordFailure('a', '10.0.0.1');
    expect(limits.check('a', '10.0.0.1')).toEqual({ allowed: false, retryAfterSec: 20 });
  });

  it('clears the username on success but not the address', () => {
    const { limits } = limiter();
    for (const name of ['a', 'a', 'b']) limits.recordFailure(name, '10.0.0.1');
    limits.recordFailure('a', '10.0.0.2');
    limits.recordSuccess('A');
    expect(limits.check('a', '10.0.0.3').allowed).toBe(true);
    expect(limits.check('a', '10.0.0.1').allowed).toBe(false);
  });

  it('keeps at most maxKeys keys, dropping expired ones first and then the least recently failed', () => {
    const { clock, limits } = limiter(100);
    for (let i = 0; i < 100; i += 1) limits.recordFailure(`old${i}`, `10.0.${i}.1`);
    clock.advance(61_000);
    limits.recordFailure('fresh', '10.1.0.1');
    expect(limits.trackedKeys).toEqual({ usernames: 1, ips: 1 });

    for (let i = 0; i < 250; i += 1) {
      for (let k = 0; k < 3; k += 1) limits.recordFailure(`u${i}`, `10.2.${i % 250}.${k}`);
    }
    expect(limits.trackedKeys.usernames).toBeLessThanOrEqual(100);
    expect(limits.trackedKeys.ips).toBeLessThanOrEqual(100);
    expect(limits.check('u249', '10.9.9.9').allowed).toBe(false);
  });

  it('measures the wait from the newest failures of a long burst', () => {
    const { limits } = limiter();
    for (let i = 0; i < 1000; i += 1) limits.recordFailure('a', '10.0.0.1');
    expect(limits.check('a', '10.0.0.2')).toEqual({ allowed: false, retryAfterSec: 60 });
  });
});
