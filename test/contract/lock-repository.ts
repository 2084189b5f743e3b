/**
 * One suite for every LockRepository (x/net/webdav's testFS habit): LockStore's rules over the
 * repository's state, conflicts, shared and exclusive, depth, expiry, refresh, budgets, and
 * conflicting LOCKs racing. Run on memory (test/unit/bridge/locks.test.ts: where a bridge over
 * SQLite or with its own bridge.sqlite keeps its locks), on SQLite and on PostgreSQL
 * (test/integration/bridge-state/repositories.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/common/clock.js';
import type { LockBudgets, LockRepository } from '../../src/bridge/lock-repository.js';
import { LockError, LockStore, remainingSec, type ActiveLock, type LockErrorKind, type LockRequest, type LockStoreOptions } from '../../src/bridge/locks.js';

// A tree: home / docs / { a.txt, sub / b.txt }
const HOME = ['home'];
const DOCS = ['home', 'docs'];
const A = ['home', 'docs', 'a'];
const SUB = ['home', 'docs', 'sub'];
const B = ['home', 'docs', 'sub', 'b'];

export function request(chain: readonly string[], overrides: Partial<LockRequest> = {}): LockRequest {
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

async function lockErrorKind(fn: () => Promise<unknown>): Promise<LockErrorKind | 'no error'> {
  try {
    await fn();
    return 'no error';
  } catch (err) {
    if (err instanceof LockError) return err.kind;
    throw err;
  }
}

/** Makes a fresh, empty repository with these budgets; `close` (optional) runs after each test. */
export interface RepositoryFactory {
  open(budgets: Partial<LockBudgets>): Promise<LockRepository>;
  close?(): Promise<void>;
}

export function describeLockRepository(name: string, factory: () => RepositoryFactory): void {
  describe(`LockRepository contract: ${name}`, () => {
    let current: RepositoryFactory | undefined;
    afterEach(async () => {
      await current?.close?.();
      current = undefined;
    });

    async function setup(options: LockStoreOptions = {}) {
      const clock = new ManualClock();
      clock.freeze(); // expiry assertions are exact to the millisecond
      current = factory();
      const { maxLocks, maxLocksPerPrincipal, maxBytes, maxBytesPerPrincipal, ...rest } = options;
      const budgets = Object.fromEntries(
        Object.entries({ maxLocks, maxLocksPerPrincipal, maxBytes, maxBytesPerPrincipal }).filter(([, v]) => v !== undefined),
      ) as Partial<LockBudgets>;
      const repository = await current.open(budgets);
      const locks = new LockStore({ clock, ...rest, repository });
      return { clock, locks, repository };
    }

    describe('LockStore.lock', () => {
      it('grants an exclusive lock with an opaquelocktoken and the requested details', async () => {
        const { clock, locks } = await setup();
        const lock = await locks.lock(request(A, { ownerXml: '<D:owner xmlns:D="DAV:">me</D:owner>', timeoutSec: 600 }));
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
        expect(await locks.get(lock.token)).toEqual(lock);
        expect(await locks.count()).toBe(1);
      });

      it('gives every lock a different token', async () => {
        const { locks } = await setup();
        const tokens = new Set<string>();
        for (let i = 0; i < 50; i++) tokens.add((await locks.lock(request(['home', `f${i}`]))).token);
        expect(tokens.size).toBe(50);
      });

      it('caps the timeout', async () => {
        const { locks } = await setup({ maxTimeoutSec: 3600 });
        expect((await locks.lock(request(A, { timeoutSec: 10 ** 9 }))).timeoutSec).toBe(3600);
        expect(locks.parseTimeout('Infinite')).toBe(3600);
      });

      it('refuses a second exclusive lock, by anyone (litmus notowner_lock)', async () => {
        const { locks } = await setup();
        const first = await locks.lock(request(A));
        expect(await lockErrorKind(() => locks.lock(request(A)))).toBe('conflict');
        expect(await lockErrorKind(() => locks.lock(request(A, { principal: 'bob', scope: 'shared' })))).toBe('conflict');
        try {
          await locks.lock(request(A, { principal: 'bob' }));
        } catch (err) {
          expect((err as LockError).conflicts).toEqual([first]);
        }
      });

      it('lets shared locks coexist and refuses an exclusive one over them', async () => {
        const { locks } = await setup();
        await locks.lock(request(A, { scope: 'shared' }));
        await locks.lock(request(A, { scope: 'shared', principal: 'bob' }));
        expect(await locks.locksCovering(A)).toHaveLength(2);
        expect(await lockErrorKind(() => locks.lock(request(A)))).toBe('conflict');
      });

      it('sees a depth-infinity lock of an ancestor', async () => {
        const { locks } = await setup();
        await locks.lock(request(DOCS, { depth: 'infinity' }));
        expect(await lockErrorKind(() => locks.lock(request(B)))).toBe('conflict');
        expect(await lockErrorKind(() => locks.lock(request(B, { scope: 'shared' })))).toBe('conflict');
      });

      it('ignores a depth-0 lock of an ancestor', async () => {
        const { locks } = await setup();
        await locks.lock(request(DOCS, { depth: '0' }));
        expect(await lockErrorKind(() => locks.lock(request(A)))).toBe('no error');
      });

      it('refuses a depth-infinity lock over a locked descendant, but not a depth-0 one', async () => {
        const { locks } = await setup();
        await locks.lock(request(B));
        expect(await lockErrorKind(() => locks.lock(request(DOCS, { depth: 'infinity' })))).toBe('conflict');
        expect(await lockErrorKind(() => locks.lock(request(HOME, { depth: 'infinity', scope: 'shared' })))).toBe('conflict');
        expect(await lockErrorKind(() => locks.lock(request(DOCS, { depth: '0' })))).toBe('no error');
      });

      it('lets a shared depth-infinity lock sit over shared descendants', async () => {
        const { locks } = await setup();
        await locks.lock(request(B, { scope: 'shared' }));
        expect(await lockErrorKind(() => locks.lock(request(DOCS, { depth: 'infinity', scope: 'shared' })))).toBe('no error');
      });

      it('refuses an oversized owner and an empty chain', async () => {
        const { locks } = await setup({ maxOwnerXmlBytes: 100 });
        expect(await lockErrorKind(() => locks.lock(request(A, { ownerXml: 'x'.repeat(101) })))).toBe('owner-too-large');
        expect(await lockErrorKind(() => locks.lock(request([])))).toBe('invalid-request');
      });

      it('bounds memory: total and per principal', async () => {
        const { locks } = await setup({ maxLocks: 3, maxLocksPerPrincipal: 2 });
        await locks.lock(request(['f1']));
        await locks.lock(request(['f2']));
        expect(await lockErrorKind(() => locks.lock(request(['f3'])))).toBe('too-many-locks');
        await locks.lock(request(['f3'], { principal: 'bob' }));
        expect(await lockErrorKind(() => locks.lock(request(['f4'], { principal: 'carol' })))).toBe('too-many-locks');
      });

      it('bounds what the locks weigh together: big owners run out of room before the count does, and unlocking frees it', async () => {
        const { locks } = await setup({ maxBytes: 100 * 1024, maxBytesPerPrincipal: 100 * 1024 });
        const owner = `<D:owner xmlns:D="DAV:">${'x'.repeat(15_000)}</D:owner>`;
        const taken = [];
        for (const i of [1, 2, 3]) taken.push(await locks.lock(request([`big${i}`], { ownerXml: owner })));
        expect(await lockErrorKind(() => locks.lock(request(['big4'], { ownerXml: owner })))).toBe('too-many-locks');
        // A lock without an owner still fits in what is left.
        expect(await lockErrorKind(() => locks.lock(request(['small'])))).toBe('no error');
        await locks.unlock((taken[0] as { token: string }).token, ['big1'], 'alice');
        expect(await lockErrorKind(() => locks.lock(request(['big4'], { ownerXml: owner })))).toBe('no error');
      });

      it('bounds what the locks of one principal weigh, so nobody alone fills the room of everyone', async () => {
        const { locks } = await setup({ maxBytes: 200 * 1024 });
        const owner = `<D:owner xmlns:D="DAV:">${'x'.repeat(15_000)}</D:owner>`;
        // A fifth of 200 KiB by default: one big lock (~30 KB) fits, a second does not.
        const first = await locks.lock(request(['m1'], { principal: 'mallory', ownerXml: owner }));
        expect(await lockErrorKind(() => locks.lock(request(['m2'], { principal: 'mallory', ownerXml: owner })))).toBe('too-many-locks');
        expect(await lockErrorKind(() => locks.lock(request(['b1'], { principal: 'bob', ownerXml: owner })))).toBe('no error');
        expect(await lockErrorKind(() => locks.lock(request(['b2'], { principal: 'bob' })))).toBe('no error');
        // Refreshing keeps the weight as it was; unlocking gives the room back.
        await locks.refresh(first.token, ['m1'], 600, 'mallory');
        expect(await lockErrorKind(() => locks.lock(request(['m2'], { principal: 'mallory', ownerXml: owner })))).toBe('too-many-locks');
        await locks.unlock((await locks.refresh(first.token, ['m1'], 600, 'mallory')).token, ['m1'], 'mallory');
        expect(await lockErrorKind(() => locks.lock(request(['m2'], { principal: 'mallory', ownerXml: owner })))).toBe('no error');
      });

      it('frees room when locks expire', async () => {
        const { clock, locks } = await setup({ maxLocks: 2 });
        await locks.lock(request(['f1'], { timeoutSec: 10 }));
        await locks.lock(request(['f2'], { timeoutSec: 10 }));
        clock.advance(10_000);
        expect(await lockErrorKind(() => locks.lock(request(['f3'])))).toBe('no error');
        expect(await locks.count()).toBe(1);
      });
    });

    describe('expiry', () => {
      it('forgets a lock once its timeout has passed', async () => {
        const { clock, locks } = await setup();
        const lock = await locks.lock(request(A, { timeoutSec: 600 }));
        clock.advance(599_999);
        expect(await locks.get(lock.token)).toBeDefined();
        expect(remainingSec(lock, clock.now())).toBe(1);
        clock.advance(1);
        expect(await locks.get(lock.token)).toBeUndefined();
        expect(await locks.locksCovering(A)).toEqual([]);
        expect(await lockErrorKind(() => locks.lock(request(A, { principal: 'bob' })))).toBe('no error');
      });

      it('sweeps expired locks on demand', async () => {
        const { clock, locks } = await setup();
        for (let i = 0; i < 10; i++) await locks.lock(request(['f' + i], { timeoutSec: 5 }));
        await locks.lock(request(['keep'], { timeoutSec: 50 }));
        clock.advance(5_000);
        expect(await locks.sweepExpired()).toBe(10);
        expect(await locks.count()).toBe(1);
      });
    });

    describe('refresh', () => {
      it('restarts the timeout', async () => {
        const { clock, locks } = await setup();
        const lock = await locks.lock(request(A, { timeoutSec: 600 }));
        clock.advance(500_000);
        const refreshed = await locks.refresh(lock.token, A, 600);
        expect(refreshed.token).toBe(lock.token);
        expect(refreshed.expiresAtMs).toBe(clock.now() + 600_000);
        clock.advance(500_000);
        expect(await locks.get(lock.token)).toBeDefined();
      });

      it('refreshes a collection lock through a member (litmus indirect_refresh)', async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(DOCS, { depth: 'infinity' }));
        expect((await locks.refresh(lock.token, B, 100)).timeoutSec).toBe(100);
      });

      it('refuses an unknown or expired token, a resource out of scope, and another principal', async () => {
        const { clock, locks } = await setup();
        const lock = await locks.lock(request(DOCS, { depth: '0', timeoutSec: 10 }));
        expect(await lockErrorKind(() => locks.refresh('opaquelocktoken:nope', DOCS, 10))).toBe('no-such-lock');
        expect(await lockErrorKind(() => locks.refresh(lock.token, A, 10))).toBe('not-in-scope');
        expect(await lockErrorKind(() => locks.refresh(lock.token, DOCS, 10, 'bob'))).toBe('not-owner');
        expect(await lockErrorKind(() => locks.refresh(lock.token, DOCS, 10, 'alice'))).toBe('no error');
        clock.advance(10_000);
        expect(await lockErrorKind(() => locks.refresh(lock.token, DOCS, 10))).toBe('no-such-lock');
      });

      it('records a fresh chain when refreshed at the lock root', async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(['old-parent', 'x']));
        await locks.refresh(lock.token, ['new-parent', 'x'], 60);
        expect((await locks.get(lock.token))?.chain).toEqual(['new-parent', 'x']);
        expect(await locks.locksBelow('new-parent')).toHaveLength(1);
        expect(await locks.locksBelow('old-parent')).toHaveLength(0);
      });
    });

    describe('unlock', () => {
      it('removes the lock so others may lock', async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(A));
        expect(await locks.unlock(lock.token, A)).toEqual(lock);
        expect(await locks.get(lock.token)).toBeUndefined();
        expect(await locks.count()).toBe(0);
        expect(await lockErrorKind(() => locks.lock(request(A, { principal: 'bob' })))).toBe('no error');
      });

      it('unlocks a depth-infinity lock through a member (RFC 4918 §9.11)', async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(DOCS, { depth: 'infinity' }));
        await locks.unlock(lock.token, B);
        expect(await locks.locksCovering(B)).toEqual([]);
      });

      it('refuses a bogus token, an out-of-scope resource and another principal', async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(A));
        expect(await lockErrorKind(() => locks.unlock('opaquelocktoken:bogus', A))).toBe('no-such-lock');
        expect(await lockErrorKind(() => locks.unlock(lock.token, B))).toBe('not-in-scope');
        expect(await lockErrorKind(() => locks.unlock(lock.token, A, 'bob'))).toBe('not-owner');
        expect(await locks.get(lock.token)).toBeDefined();
      });
    });

    describe('locksCovering and locksBelow', () => {
      it('lists own locks and depth-infinity locks of ancestors', async () => {
        const { locks } = await setup();
        const home = await locks.lock(request(HOME, { depth: 'infinity', scope: 'shared' }));
        await locks.lock(request(DOCS, { depth: '0', scope: 'shared' }));
        const b = await locks.lock(request(B, { scope: 'shared' }));
        expect(await locks.locksCovering(B)).toEqual([home, b]);
        expect(await locks.locksCovering(A)).toEqual([home]);
      });

      it('finds locks below a resource through recorded chains', async () => {
        const { locks } = await setup();
        const a = await locks.lock(request(A));
        const b = await locks.lock(request(B));
        const docs = await locks.lock(request(DOCS, { depth: '0' }));
        expect(new Set((await locks.locksBelow('docs')))).toEqual(new Set([a, b]));
        expect(await locks.locksBelow('sub')).toEqual([b]);
        expect(await locks.locksBelow('a')).toEqual([]);
        expect(await locks.locksCovering(DOCS)).toEqual([docs]);
      });
    });

    describe('canModify and blockingLocks: ownership is by token (litmus notowner_modify)', () => {
      it('lets anyone write an unlocked resource', async () => {
        const { locks } = await setup();
        expect(await locks.canModify(A, [])).toBe(true);
      });

      it('requires the token, even from the user who took the lock', async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(A));
        expect(await locks.canModify(A, [])).toBe(false);
        expect(await locks.canModify(A, [], { principal: 'alice' })).toBe(false);
        expect(await locks.canModify(A, ['opaquelocktoken:other'])).toBe(false);
        expect(await locks.canModify(A, [lock.token])).toBe(true);
        expect(await locks.blockingLocks(A, [])).toEqual([lock]);
      });

      it("with a principal, also requires that the token is the caller's own (RFC 4918 §6.4)", async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(A));
        expect(await locks.canModify(A, [lock.token], { principal: 'alice' })).toBe(true);
        expect(await locks.canModify(A, [lock.token], { principal: 'bob' })).toBe(false);
      });

      it('applies an ancestor depth-infinity lock to members (litmus lock_collection owner_modify)', async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(DOCS, { depth: 'infinity' }));
        expect(await locks.canModify(B, [])).toBe(false);
        expect(await locks.canModify(B, [lock.token])).toBe(true);
      });

      it('accepts the token of any one shared lock covering the resource', async () => {
        const { locks } = await setup();
        const mine = await locks.lock(request(A, { scope: 'shared' }));
        const theirs = await locks.lock(request(A, { scope: 'shared', principal: 'bob' }));
        expect(await locks.canModify(A, [mine.token], { principal: 'alice' })).toBe(true);
        expect(await locks.canModify(A, [theirs.token], { principal: 'bob' })).toBe(true);
        expect(new Set((await locks.blockingLocks(A, [])))).toEqual(new Set([mine, theirs]));
      });

      it('checks the locks below when asked (DELETE or MOVE of a collection)', async () => {
        const { locks } = await setup();
        const a = await locks.lock(request(A));
        const b = await locks.lock(request(B));
        expect(await locks.canModify(DOCS, [])).toBe(true);
        expect(new Set((await locks.blockingLocks(DOCS, [], { includeDescendants: true })))).toEqual(new Set([a, b]));
        expect(await locks.blockingLocks(DOCS, [a.token], { includeDescendants: true })).toEqual([b]);
        expect(await locks.canModify(DOCS, [a.token, b.token], { includeDescendants: true })).toBe(true);
      });

      it('lets a satisfied shared ancestor lock cover a shared lock below', async () => {
        const { locks } = await setup();
        const below = await locks.lock(request(B, { scope: 'shared', principal: 'bob' }));
        const above = await locks.lock(request(DOCS, { scope: 'shared', depth: 'infinity' }));
        expect(await locks.canModify(DOCS, [above.token], { includeDescendants: true })).toBe(true);
        expect(await locks.blockingLocks(DOCS, [], { includeDescendants: true })).toContainEqual(below);
      });
    });

    describe('dropLocksUnder', () => {
      it('drops the locks of a resource and everything below it, nothing else', async () => {
        const { locks } = await setup();
        const docs = await locks.lock(request(DOCS, { depth: '0' }));
        const a = await locks.lock(request(A));
        const b = await locks.lock(request(B));
        const other = await locks.lock(request(['home', 'other']));
        expect(new Set((await locks.dropLocksUnder('docs')))).toEqual(new Set([docs, a, b]));
        expect(await locks.count()).toBe(1);
        expect(await locks.get(other.token)).toBeDefined();
        expect(await locks.locksBelow('home')).toEqual([other]);
      });

      it('is keyed by id: a lock taken through one path is seen through another chain ending in the same id', async () => {
        const { locks } = await setup();
        const lock = await locks.lock(request(['home', 'shared-folder', 'file']));
        // The same node reached through shared_with_you by another user.
        expect(await locks.locksCovering(['shared_with_you', 'shared-folder', 'file'])).toEqual([lock]);
        expect(await locks.canModify(['shared_with_you', 'shared-folder', 'file'], [], { principal: 'bob' })).toBe(false);
      });
    });

    describe('what instances racing each other get', () => {
      it('grants exactly one of many conflicting LOCKs started at once', async () => {
        const { locks } = await setup();
        const outcomes = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) => locks.lock(request(A, { principal: `p${i % 3}`, scope: i % 2 === 0 ? 'exclusive' : 'shared' }))),
        );
        const granted = outcomes.filter((o) => o.status === 'fulfilled');
        const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        // Either one exclusive lock, or shared locks only: never an exclusive beside anything.
        const scopes = granted.map((o) => (o as PromiseFulfilledResult<ActiveLock>).value.scope);
        if (scopes.includes('exclusive')) expect(scopes).toEqual(['exclusive']);
        expect(granted.length).toBeGreaterThan(0);
        expect(refused.every((o) => o.reason instanceof LockError && o.reason.kind === 'conflict')).toBe(true);
        expect((await locks.locksCovering(A)).map((l) => l.scope).sort()).toEqual([...scopes].sort());
      });

      it('grants exactly one of many exclusive LOCKs on nested resources started at once', async () => {
        const { locks } = await setup();
        const chains = [HOME, DOCS, SUB, B, DOCS, B];
        const outcomes = await Promise.allSettled(chains.map((chain) => locks.lock(request(chain, { depth: 'infinity' }))));
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        expect(await locks.count()).toBe(1);
      });

      it('grants every one of many LOCKs on unrelated resources started at once', async () => {
        const { locks } = await setup();
        const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => locks.lock(request(['home', 'docs', `f${i}`], { principal: `p${i % 4}` }))));
        expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
        expect(await locks.count()).toBe(20);
      });
    });

    describe('the repository itself', () => {
      it('lists the locks rooted at a resource, and those rooted at the children of a folder', async () => {
        const { locks, repository, clock } = await setup();
        const a = await locks.lock(request(A, { scope: 'shared' }));
        const a2 = await locks.lock(request(A, { scope: 'shared', principal: 'bob' }));
        const sub = await locks.lock(request(SUB, { timeoutSec: 5 }));
        await locks.lock(request(B));
        expect(new Set((await repository.active('a', clock.now())).map((l) => l.token))).toEqual(new Set([a.token, a2.token]));
        expect(new Set((await repository.childrenOf('docs', clock.now())).map((l) => l.token))).toEqual(new Set([a.token, a2.token, sub.token]));
        clock.advance(5_000);
        expect((await repository.childrenOf('docs', clock.now())).map((l) => l.token).sort()).toEqual([a.token, a2.token].sort());
      });

      it('shows a Depth 1 PROPFIND the locks of the folder and of its members, read once', async () => {
        const { locks } = await setup();
        const docs = await locks.lock(request(DOCS, { depth: 'infinity', scope: 'shared' }));
        const a = await locks.lock(request(A, { scope: 'shared', principal: 'bob' }));
        await locks.lock(request(B, { scope: 'shared' }));
        const view = await locks.view(DOCS, true);
        expect(view.isEmpty).toBe(false);
        expect(view.covering(DOCS)).toEqual([docs]);
        expect(view.covering(A)).toEqual([docs, a]);
        expect(view.covering(SUB)).toEqual([docs]);
        expect((await locks.view(['home', 'elsewhere'], true)).isEmpty).toBe(true);
      });

      it('counts an expired lock against the budget only until it is swept, which a full budget does by itself', async () => {
        const { clock, locks } = await setup({ maxLocksPerPrincipal: 2 });
        await locks.lock(request(['f1'], { timeoutSec: 1 }));
        await locks.lock(request(['f2'], { timeoutSec: 1 }));
        expect(await lockErrorKind(() => locks.lock(request(['f3'])))).toBe('too-many-locks');
        clock.advance(1_000);
        expect(await locks.count()).toBe(0);
        expect(await lockErrorKind(() => locks.lock(request(['f3'])))).toBe('no error');
        expect(await locks.sweepExpired()).toBe(0);
      });

      it('keeps a removed or expired token out of every read', async () => {
        const { clock, locks, repository } = await setup();
        const lock = await locks.lock(request(B, { depth: 'infinity', timeoutSec: 2 }));
        expect(await repository.remove('opaquelocktoken:none', clock.now())).toBeUndefined();
        clock.advance(2_000);
        for (const read of [repository.get(lock.token, clock.now()), repository.active('b', clock.now()), repository.below('docs', clock.now()), repository.covering(B, clock.now())]) {
          expect(await read).toEqual(expect.not.objectContaining({ token: lock.token }));
        }
        expect(await repository.covering(B, clock.now())).toEqual([]);
        expect(await repository.refresh(lock.token, { chain: B, timeoutSec: 60, expiresAtMs: clock.now() + 60_000 }, clock.now())).toBeUndefined();
        expect(await repository.remove(lock.token, clock.now())).toBeUndefined();
      });
    });
  });
}
