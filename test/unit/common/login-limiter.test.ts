/**
 * MemoryLoginLimiter: the LoginLimiter contract (test/contract/login-limiter.ts), counting
 * synchronously inside reserveNow(), and the memory bound.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { MemoryLoginLimiter } from '../../../src/common/login-limiter.js';
import { describeLoginLimiter } from '../../contract/login-limiter.js';

describeLoginLimiter('memory', () => ({ open: async (options) => new MemoryLoginLimiter(options) }));

function limiter(maxKeys?: number): { clock: ManualClock; limits: MemoryLoginLimiter } {
  const clock = new ManualClock();
  clock.freeze();
  return { clock, limits: new MemoryLoginLimiter({ clock, maxFailures: 3, windowSec: 60, maxKeys }) };
}

async function fail(limits: MemoryLoginLimiter, account: string, source: string): Promise<void> {
  const reservation = limits.reserveNow(account, source);
  if (!reservation.allowed) throw new Error(`refused: ${account} from ${source}`);
  await reservation.attempt.failed();
}

describe('MemoryLoginLimiter', () => {
  it('counts synchronously: reserveNow has counted the attempt by the time it returns', () => {
    const { limits } = limiter();
    for (let i = 0; i < 3; i += 1) expect(limits.reserveNow('a', `10.0.0.${i}`).allowed).toBe(true);
    expect(limits.reserveNow('a', '10.0.0.9')).toEqual({ allowed: false, retryAfterSec: 60 });
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

});
