import { describe, expect, it } from 'vitest';
import { MemoryLockRepository } from '../../../src/bridge/lock-repository.js';
import { parseTimeout } from '../../../src/bridge/locks.js';
import { describeLockRepository } from '../../contract/lock-repository.js';

describe('parseTimeout', () => {
  it('reads Second-N and Infinite, in the client order of preference', () => {
    expect(parseTimeout('Second-600', 3600, 604800)).toBe(600);
    expect(parseTimeout('Infinite, Second-4100000000', 3600, 604800)).toBe(604800);
    expect(parseTimeout('Second-600, Infinite', 3600, 604800)).toBe(600);
    expect(parseTimeout('second-30', 3600, 604800)).toBe(30);
  });

  it('caps, floors and defaults', () => {
    expect(parseTimeout('Second-4100000000', 3600, 604800)).toBe(604800);
    expect(parseTimeout('Second-' + '9'.repeat(400), 3600, 604800)).toBe(604800);
    expect(parseTimeout('Second-0', 3600, 604800)).toBe(1);
    expect(parseTimeout(undefined, 3600, 604800)).toBe(3600);
    expect(parseTimeout('Minute-5, bogus', 3600, 604800)).toBe(3600);
    expect(parseTimeout('bogus, Second-120', 3600, 604800)).toBe(120);
  });
});

describeLockRepository('memory', () => ({ open: async (budgets) => new MemoryLockRepository(budgets) }));
