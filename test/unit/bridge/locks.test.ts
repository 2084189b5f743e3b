import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { LockError, LockStore, parseTimeout, remainingSec, type LockErrorKind, type LockRequest } from '../../../src/bridge/locks.js';

// A tree: home / docs / { a.txt, sub / b.txt }
const HOME = ['home'];
const DOCS = ['home', 'docs'];
const A = ['home', 'docs', 'a'];
const SUB = ['home', 'docs', 'sub'];
const B = ['home', 'docs', 'sub', 'b'];

function request(chain: readonly string[], overrides: Partial<LockRequest> = {}): LockRequest {
  return {
    chain,
    rootHref: '/' + chain.join('/'),
    scope: 'exclusive',
    depth: '0',
    ownerXml: undefined,
    principal: 'alice',
    timeoutSec: 600,
    ...overrides,
  };
}

function lockErrorKind(fn: () => unknown): LockErrorKind | 'no error' {
  try {
    fn();
    return 'no error';
  } catch (err) {
    if (err instanceof LockError) return err.kind;
    throw err;
  }
}

function setup(options: ConstructorParameters<typeof LockStore>[0] = {}) {
  const clock = new ManualClock();
  clock.freeze(); // expiry assertions are exact to the millisecond
  const locks = new LockStore({ clock, ...options });
  return { clock, locks };
}

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

describe('LockStore.lock', () => {
  it('grants an exclusive lock with an opaquelocktoken and the requested details', () => {
    const { clock, locks } = setup();
    const lock = locks.lock(request(A, { ownerXml: '<D:owner xmlns:D="DAV:">me</D:owner>', timeoutSec: 600 }));
    expect(lock.token).toMatch(/^opaquelocktoken:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(lock).toMatchObject({
      resourceId: 'a',
      chain: A,
      rootHref: '/home/docs/a',
      scope: 'exclusive',
      depth: '0',
      ownerXml: '<D:owner xmlns:D="DAV:">me</D:owner>',
      principal: 'alice',
      timeoutSec: 600,
      expiresAtMs: clock.now() + 600_000,
    });
    expect(locks.get(lock.token)).toEqual(lock);
    expect(locks.size).toBe(1);
  });

  it('gives every lock a different token', () => {
    const { locks } = setup();
    const tokens = new Set(Array.from({ length: 50 }, (_, i) => locks.lock(request(['home', `f${i}`])).token));
    expect(tokens.size).toBe(50);
  });

  it('caps the timeout', () => {
    const { locks } = setup({ maxTimeoutSec: 3600 });
    expect(locks.lock(request(A, { timeoutSec: 10 ** 9 })).timeoutSec).toBe(3600);
    expect(locks.parseTimeout('Infinite')).toBe(3600);
  });

  it('refuses a second exclusive lock, by anyone (litmus notowner_lock)', () => {
    const { locks } = setup();
    const first = locks.lock(request(A));
    expect(lockErrorKind(() => locks.lock(request(A)))).toBe('conflict');
    expect(lockErrorKind(() => locks.lock(request(A, { principal: 'bob', scope: 'shared' })))).toBe('conflict');
    try {
      locks.lock(request(A, { principal: 'bob' }));
    } catch (err) {
      expect((err as LockError).conflicts).toEqual([first]);
    }
  });

  it('lets shared locks coexist and refuses an exclusive one over them', () => {
    const { locks } = setup();
    locks.lock(request(A, { scope: 'shared' }));
    locks.lock(request(A, { scope: 'shared', principal: 'bob' }));
    expect(locks.locksCovering(A)).toHaveLength(2);
    expect(lockErrorKind(() => locks.lock(request(A)))).toBe('conflict');
  });

  it('sees a depth-infinity lock of an ancestor', () => {
    const { locks } = setup();
    locks.lock(request(DOCS, { depth: 'infinity' }));
    expect(lockErrorKind(() => locks.lock(request(B)))).toBe('conflict');
    expect(lockErrorKind(() => locks.lock(request(B, { scope: 'shared' })))).toBe('conflict');
  });

  it('ignores a depth-0 lock of an ancestor', () => {
    const { locks } = setup();
    locks.lock(request(DOCS, { depth: '0' }));
    expect(lockErrorKind(() => locks.lock(request(A)))).toBe('no error');
  });

  it('refuses a depth-infinity lock over a locked descendant, but not a depth-0 one', () => {
    const { locks } = setup();
    locks.lock(request(B));
    expect(lockErrorKind(() => locks.lock(request(DOCS, { depth: 'infinity' })))).toBe('conflict');
    expect(lockErrorKind(() => locks.lock(request(HOME, { depth: 'infinity', scope: 'shared' })))).toBe('conflict');
    expect(lockErrorKind(() => locks.lock(request(DOCS, { depth: '0' })))).toBe('no error');
  });

  it('lets a shared depth-infinity lock sit over shared descendants', () => {
    const { locks } = setup();
    locks.lock(request(B, { scope: 'shared' }));
    expect(lockErrorKind(() => locks.lock(request(DOCS, { depth: 'infinity', scope: 'shared' })))).toBe('no error');
  });

  it('refuses an oversized owner and an empty chain', () => {
    const { locks } = setup({ maxOwnerXmlBytes: 100 });
    expect(lockErrorKind(() => locks.lock(request(A, { ownerXml: 'x'.repeat(101) })))).toBe('owner-too-large');
    expect(lockErrorKind(() => locks.lock(request([])))).toBe('invalid-request');
  });

  it('bounds memory: total and per principal', () => {
    const { locks } = setup({ maxLocks: 3, maxLocksPerPrincipal: 2 });
    locks.lock(request(['f1']));
    locks.lock(request(['f2']));
    expect(lockErrorKind(() => locks.lock(request(['f3'])))).toBe('too-many-locks');
    locks.lock(request(['f3'], { principal: 'bob' }));
    expect(lockErrorKind(() => locks.lock(request(['f4'], { principal: 'carol' })))).toBe('too-many-locks');
  });

  it('bounds what the locks weigh together: big owners run out of room before the count does, and unlocking frees it', () => {
    const { locks } = setup({ maxBytes: 100 * 1024, maxBytesPerPrincipal: 100 * 1024 });
    const owner = `<D:owner xmlns:D="DAV:">${'x'.repeat(15_000)}</D:owner>`;
    const taken = [1, 2, 3].map((i) => locks.lock(request([`big${i}`], { ownerXml: owner })));
    expect(lockErrorKind(() => locks.lock(request(['big4'], { ownerXml: owner })))).toBe('too-many-locks');
    // A lock without an owner still fits in what is left.
    expect(lockErrorKind(() => locks.lock(request(['small'])))).toBe('no error');
    locks.unlock((taken[0] as { token: string }).token, ['big1'], 'alice');
    expect(lockErrorKind(() => locks.lock(request(['big4'], { ownerXml: owner })))).toBe('no error');
  });

  it('bounds what the locks of one principal weigh, so nobody alone fills the room of everyone', () => {
    const { locks } = setup({ maxBytes: 200 * 1024 });
    const owner = `<D:owner xmlns:D="DAV:">${'x'.repeat(15_000)}</D:owner>`;
    // A fifth of 200 KiB by default: one big lock (~30 KB) fits, a second does not.
    const first = locks.lock(request(['m1'], { principal: 'mallory', ownerXml: owner }));
    expect(lockErrorKind(() => locks.lock(request(['m2'], { principal: 'mallory', ownerXml: owner })))).toBe('too-many-locks');
    expect(lockErrorKind(() => locks.lock(request(['b1'], { principal: 'bob', ownerXml: owner })))).toBe('no error');
    expect(lockErrorKind(() => locks.lock(request(['b2'], { principal: 'bob' })))).toBe('no error');
    // Refreshing keeps the weight as it was; unlocking gives the room back.
    locks.refresh(first.token, ['m1'], 600, 'mallory');
    expect(lockErrorKind(() => locks.lock(request(['m2'], { principal: 'mallory', ownerXml: owner })))).toBe('too-many-locks');
    locks.unlock(locks.refresh(first.token, ['m1'], 600, 'mallory').token, ['m1'], 'mallory');
    expect(lockErrorKind(() => locks.lock(request(['m2'], { principal: 'mallory', ownerXml: owner })))).toBe('no error');
  });

  it('frees room when locks expire', () => {
    const { clock, locks } = setup({ maxLocks: 2 });
    locks.lock(request(['f1'], { timeoutSec: 10 }));
    locks.lock(request(['f2'], { timeoutSec: 10 }));
    clock.advance(10_000);
    expect(lockErrorKind(() => locks.lock(request(['f3'])))).toBe('no error');
    expect(locks.size).toBe(1);
  });
});

describe('expiry', () => {
  it('forgets a lock once its timeout has passed', () => {
    const { clock, locks } = setup();
    const lock = locks.lock(request(A, { timeoutSec: 600 }));
    clock.advance(599_999);
    expect(locks.get(lock.token)).toBeDefined();
    expect(remainingSec(lock, clock.now())).toBe(1);
    clock.advance(1);
    expect(locks.get(lock.token)).toBeUndefined();
    expect(locks.locksCovering(A)).toEqual([]);
    expect(lockErrorKind(() => locks.lock(request(A, { principal: 'bob' })))).toBe('no error');
  });

  it('sweeps expired locks on demand', () => {
    const { clock, locks } = setup();
    for (let i = 0; i < 10; i++) locks.lock(request(['f' + i], { timeoutSec: 5 }));
    locks.lock(request(['keep'], { timeoutSec: 50 }));
    clock.advance(5_000);
    expect(locks.sweepExpired()).toBe(10);
    expect(locks.size).toBe(1);
  });
});

describe('refresh', () => {
  it('restarts the timeout', () => {
    const { clock, locks } = setup();
    const lock = locks.lock(request(A, { timeoutSec: 600 }));
    clock.advance(500_000);
    const refreshed = locks.refresh(lock.token, A, 600);
    expect(refreshed.token).toBe(lock.token);
    expect(refreshed.expiresAtMs).toBe(clock.now() + 600_000);
    clock.advance(500_000);
    expect(locks.get(lock.token)).toBeDefined();
  });

  it('refreshes a collection lock through a member (litmus indirect_refresh)', () => {
    const { locks } = setup();
    const lock = locks.lock(request(DOCS, { depth: 'infinity' }));
    expect(locks.refresh(lock.token, B, 100).timeoutSec).toBe(100);
  });

  it('refuses an unknown or expired token, a resource out of scope, and another principal', () => {
    const { clock, locks } = setup();
    const lock = locks.lock(request(DOCS, { depth: '0', timeoutSec: 10 }));
    expect(lockErrorKind(() => locks.refresh('opaquelocktoken:nope', DOCS, 10))).toBe('no-such-lock');
    expect(lockErrorKind(() => locks.refresh(lock.token, A, 10))).toBe('not-in-scope');
    expect(lockErrorKind(() => locks.refresh(lock.token, DOCS, 10, 'bob'))).toBe('not-owner');
    expect(lockErrorKind(() => locks.refresh(lock.token, DOCS, 10, 'alice'))).toBe('no error');
    clock.advance(10_000);
    expect(lockErrorKind(() => locks.refresh(lock.token, DOCS, 10))).toBe('no-such-lock');
  });

  it('records a fresh chain when refreshed at the lock root', () => {
    const { locks } = setup();
    const lock = locks.lock(request(['old-parent', 'x']));
    locks.refresh(lock.token, ['new-parent', 'x'], 60);
    expect(locks.get(lock.token)?.chain).toEqual(['new-parent', 'x']);
    expect(locks.locksBelow('new-parent')).toHaveLength(1);
    expect(locks.locksBelow('old-parent')).toHaveLength(0);
  });
});

describe('unlock', () => {
  it('removes the lock so others may lock', () => {
    const { locks } = setup();
    const lock = locks.lock(request(A));
    expect(locks.unlock(lock.token, A)).toEqual(lock);
    expect(locks.get(lock.token)).toBeUndefined();
    expect(locks.size).toBe(0);
    expect(lockErrorKind(() => locks.lock(request(A, { principal: 'bob' })))).toBe('no error');
  });

  it('unlocks a depth-infinity lock through a member (RFC 4918 §9.11)', () => {
    const { locks } = setup();
    const lock = locks.lock(request(DOCS, { depth: 'infinity' }));
    locks.unlock(lock.token, B);
    expect(locks.locksCovering(B)).toEqual([]);
  });

  it('refuses a bogus token, an out-of-scope resource and another principal', () => {
    const { locks } = setup();
    const lock = locks.lock(request(A));
    expect(lockErrorKind(() => locks.unlock('opaquelocktoken:bogus', A))).toBe('no-such-lock');
    expect(lockErrorKind(() => locks.unlock(lock.token, B))).toBe('not-in-scope');
    expect(lockErrorKind(() => locks.unlock(lock.token, A, 'bob'))).toBe('not-owner');
    expect(locks.get(lock.token)).toBeDefined();
  });
});

describe('locksCovering and locksBelow', () => {
  it('lists own locks and depth-infinity locks of ancestors', () => {
    const { locks } = setup();
    const home = locks.lock(request(HOME, { depth: 'infinity', scope: 'shared' }));
    locks.lock(request(DOCS, { depth: '0', scope: 'shared' }));
    const b = locks.lock(request(B, { scope: 'shared' }));
    expect(locks.locksCovering(B)).toEqual([home, b]);
    expect(locks.locksCovering(A)).toEqual([home]);
  });

  it('finds locks below a resource through recorded chains', () => {
    const { locks } = setup();
    const a = locks.lock(request(A));
    const b = locks.lock(request(B));
    const docs = locks.lock(request(DOCS, { depth: '0' }));
    expect(new Set(locks.locksBelow('docs'))).toEqual(new Set([a, b]));
    expect(locks.locksBelow('sub')).toEqual([b]);
    expect(locks.locksBelow('a')).toEqual([]);
    expect(locks.locksCovering(DOCS)).toEqual([docs]);
  });
});

describe('canModify and blockingLocks: ownership is by token (litmus notowner_modify)', () => {
  it('lets anyone write an unlocked resource', () => {
    const { locks } = setup();
    expect(locks.canModify(A, [])).toBe(true);
  });

  it('requires the token, even from the user who took the lock', () => {
    const { locks } = setup();
    const lock = locks.lock(request(A));
    expect(locks.canModify(A, [])).toBe(false);
    expect(locks.canModify(A, [], { principal: 'alice' })).toBe(false);
    expect(locks.canModify(A, ['opaquelocktoken:other'])).toBe(false);
    expect(locks.canModify(A, [lock.token])).toBe(true);
    expect(locks.blockingLocks(A, [])).toEqual([lock]);
  });

  it("with a principal, also requires that the token is the caller's own (RFC 4918 §6.4)", () => {
    const { locks } = setup();
    const lock = locks.lock(request(A));
    expect(locks.canModify(A, [lock.token], { principal: 'alice' })).toBe(true);
    expect(locks.canModify(A, [lock.token], { principal: 'bob' })).toBe(false);
  });

  it('applies an ancestor depth-infinity lock to members (litmus lock_collection owner_modify)', () => {
    const { locks } = setup();
    const lock = locks.lock(request(DOCS, { depth: 'infinity' }));
    expect(locks.canModify(B, [])).toBe(false);
    expect(locks.canModify(B, [lock.token])).toBe(true);
  });

  it('accepts the token of any one shared lock covering the resource', () => {
    const { locks } = setup();
    const mine = locks.lock(request(A, { scope: 'shared' }));
    const theirs = locks.lock(request(A, { scope: 'shared', principal: 'bob' }));
    expect(locks.canModify(A, [mine.token], { principal: 'alice' })).toBe(true);
    expect(locks.canModify(A, [theirs.token], { principal: 'bob' })).toBe(true);
    expect(new Set(locks.blockingLocks(A, []))).toEqual(new Set([mine, theirs]));
  });

  it('checks the locks below when asked (DELETE or MOVE of a collection)', () => {
    const { locks } = setup();
    const a = locks.lock(request(A));
    const b = locks.lock(request(B));
    expect(locks.canModify(DOCS, [])).toBe(true);
    expect(new Set(locks.blockingLocks(DOCS, [], { includeDescendants: true }))).toEqual(new Set([a, b]));
    expect(locks.blockingLocks(DOCS, [a.token], { includeDescendants: true })).toEqual([b]);
    expect(locks.canModify(DOCS, [a.token, b.token], { includeDescendants: true })).toBe(true);
  });

  it('lets a satisfied shared ancestor lock cover a shared lock below', () => {
    const { locks } = setup();
    const below = locks.lock(request(B, { scope: 'shared', principal: 'bob' }));
    const above = locks.lock(request(DOCS, { scope: 'shared', depth: 'infinity' }));
    expect(locks.canModify(DOCS, [above.token], { includeDescendants: true })).toBe(true);
    expect(locks.blockingLocks(DOCS, [], { includeDescendants: true })).toContain(below);
  });
});

describe('dropLocksUnder', () => {
  it('drops the locks of a resource and everything below it, nothing else', () => {
    const { locks } = setup();
    const docs = locks.lock(request(DOCS, { depth: '0' }));
    const a = locks.lock(request(A));
    const b = locks.lock(request(B));
    const other = locks.lock(request(['home', 'other']));
    expect(new Set(locks.dropLocksUnder('docs'))).toEqual(new Set([docs, a, b]));
    expect(locks.size).toBe(1);
    expect(locks.get(other.token)).toBeDefined();
    expect(locks.locksBelow('home')).toEqual([other]);
  });

  it('is keyed by id: a lock taken through one path is seen through another chain ending in the same id', () => {
    const { locks } = setup();
    const lock = locks.lock(request(['home', 'shared-folder', 'file']));
    // The same node reached through shared_with_you by another user.
    expect(locks.locksCovering(['shared_with_you', 'shared-folder', 'file'])).toEqual([lock]);
    expect(locks.canModify(['shared_with_you', 'shared-folder', 'file'], [], { principal: 'bob' })).toBe(false);
  });
});
