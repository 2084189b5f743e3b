/**
 * Locks in process memory: the MemoryLockRepository implementation of the LockRepository
 * contract (contracts/dav-locks.ts, re-exported here so the bridge imports one module). The
 * storage-backed implementation is store/storage/dav-locks.ts; run.ts chooses.
 */
import {
  budgetError,
  budgetPassed,
  conflictsOf,
  LockError,
  lockBudgets,
  lockBytes,
  parentOf,
  SWEEP_EVERY_LOCKS,
  type ActiveLock,
  type LockBudgets,
  type LockRenewal,
  type LockRepository,
} from '../contracts/dav-locks.js';

export * from '../contracts/dav-locks.js';

/** Locks in process memory: today's behaviour and speed. Methods resolve at once. */
export class MemoryLockRepository implements LockRepository {
  private readonly budgets: LockBudgets;
  private readonly byToken = new Map<string, ActiveLock>();
  /** resource id -> tokens of locks rooted there */
  private readonly byRoot = new Map<string, Set<string>>();
  /** parent id -> tokens of locks rooted at its children */
  private readonly byParent = new Map<string, Set<string>>();
  /** id -> tokens of locks whose recorded chain contains it (the lock root included) */
  private readonly byChainMember = new Map<string, Set<string>>();
  /** principal -> how many locks it holds, and their lockBytes() */
  private readonly perPrincipal = new Map<string, { locks: number; bytes: number }>();
  private readonly total = { locks: 0, bytes: 0 };
  private insertsSinceSweep = 0;

  constructor(budgets: Partial<LockBudgets> = {}) {
    this.budgets = lockBudgets(budgets);
  }

  /** Locks held, expired ones not yet swept included. */
  get size(): number {
    return this.byToken.size;
  }

  async active(resource: string, nowMs: number): Promise<ActiveLock[]> {
    return this.live(this.byRoot.get(resource), nowMs);
  }

  async covering(chain: readonly string[], nowMs: number): Promise<ActiveLock[]> {
    return this.coveringNow(chain, nowMs);
  }

  async below(id: string, nowMs: number): Promise<ActiveLock[]> {
    return this.belowNow(id, nowMs);
  }

  async childrenOf(parent: string, nowMs: number): Promise<ActiveLock[]> {
    return this.live(this.byParent.get(parent), nowMs);
  }

  async get(token: string, nowMs: number): Promise<ActiveLock | undefined> {
    const lock = this.byToken.get(token);
    return lock !== undefined && lock.expiresAtMs > nowMs ? lock : undefined;
  }

  async insert(lock: ActiveLock, nowMs: number): Promise<void> {
    const conflicts = conflictsOf(lock, this.coveringNow(lock.chain, nowMs), lock.depth === 'infinity' ? this.belowNow(lock.resourceId, nowMs) : []);
    if (conflicts.length > 0) throw new LockError('conflict', 'the resource is locked', conflicts);
    const weight = lockBytes(lock);
    const mine = (): { locks: number; bytes: number } => this.perPrincipal.get(lock.principal) ?? { locks: 0, bytes: 0 };
    let passed = budgetPassed(this.budgets, this.total, mine(), weight);
    if (++this.insertsSinceSweep >= SWEEP_EVERY_LOCKS || passed !== undefined) {
      this.sweepNow(nowMs);
      passed = budgetPassed(this.budgets, this.total, mine(), weight);
    }
    if (passed !== undefined) throw budgetError(passed);
    this.add(lock);
  }

  async refresh(token: string, renewal: LockRenewal, nowMs: number): Promise<ActiveLock | undefined> {
    const lock = this.byToken.get(token);
    if (lock === undefined || lock.expiresAtMs <= nowMs) return undefined;
    const refreshed: ActiveLock = { ...lock, chain: [...renewal.chain], timeoutSec: renewal.timeoutSec, expiresAtMs: renewal.expiresAtMs };
    this.delete(lock);
    this.add(refreshed);
    return refreshed;
  }

  async remove(token: string, nowMs: number): Promise<ActiveLock | undefined> {
    const lock = this.byToken.get(token);
    if (lock === undefined) return undefined;
    this.delete(lock);
    return lock.expiresAtMs > nowMs ? lock : undefined;
  }

  async removeWithin(id: string, nowMs: number): Promise<ActiveLock[]> {
    const within = [...(this.byChainMember.get(id) ?? [])].map((t) => this.byToken.get(t) as ActiveLock);
    for (const lock of within) this.delete(lock);
    return within.filter((l) => l.expiresAtMs > nowMs);
  }

  async sweep(nowMs: number): Promise<number> {
    return this.sweepNow(nowMs);
  }

  async count(nowMs: number): Promise<number> {
    let n = 0;
    for (const lock of this.byToken.values()) if (lock.expiresAtMs > nowMs) n++;
    return n;
  }

  private sweepNow(nowMs: number): number {
    this.insertsSinceSweep = 0;
    let removed = 0;
    for (const lock of [...this.byToken.values()]) {
      if (lock.expiresAtMs <= nowMs) {
        this.delete(lock);
        removed++;
      }
    }
    return removed;
  }

  private coveringNow(chain: readonly string[], nowMs: number): ActiveLock[] {
    const out: ActiveLock[] = [];
    const last = chain.length - 1;
    for (let i = 0; i <= last; i++) {
      for (const lock of this.live(this.byRoot.get(chain[i] as string), nowMs)) {
        if (i === last || lock.depth === 'infinity') out.push(lock);
      }
    }
    return out;
  }

  private belowNow(id: string, nowMs: number): ActiveLock[] {
    return this.live(this.byChainMember.get(id), nowMs).filter((l) => l.resourceId !== id);
  }

  private live(tokens: Set<string> | undefined, nowMs: number): ActiveLock[] {
    if (tokens === undefined) return [];
    const out: ActiveLock[] = [];
    for (const token of tokens) {
      const lock = this.byToken.get(token);
      if (lock !== undefined && lock.expiresAtMs > nowMs) out.push(lock);
    }
    return out;
  }

  private add(lock: ActiveLock): void {
    const weight = lockBytes(lock);
    this.byToken.set(lock.token, lock);
    addToIndex(this.byRoot, lock.resourceId, lock.token);
    addToIndex(this.byParent, parentOf(lock.chain), lock.token);
    for (const id of new Set(lock.chain)) addToIndex(this.byChainMember, id, lock.token);
    const held = this.perPrincipal.get(lock.principal);
    if (held) {
      held.locks += 1;
      held.bytes += weight;
    } else {
      this.perPrincipal.set(lock.principal, { locks: 1, bytes: weight });
    }
    this.total.locks += 1;
    this.total.bytes += weight;
  }

  private delete(lock: ActiveLock): void {
    if (this.byToken.get(lock.token) !== lock) return;
    const weight = lockBytes(lock);
    this.byToken.delete(lock.token);
    removeFromIndex(this.byRoot, lock.resourceId, lock.token);
    removeFromIndex(this.byParent, parentOf(lock.chain), lock.token);
    for (const id of new Set(lock.chain)) removeFromIndex(this.byChainMember, id, lock.token);
    const held = this.perPrincipal.get(lock.principal);
    if (held && held.locks > 1) {
      held.locks -= 1;
      held.bytes -= weight;
    } else {
      this.perPrincipal.delete(lock.principal);
    }
    this.total.locks -= 1;
    this.total.bytes -= weight;
  }
}

function addToIndex(index: Map<string, Set<string>>, key: string, token: string): void {
  let tokens = index.get(key);
  if (tokens === undefined) {
    tokens = new Set();
    index.set(key, tokens);
  }
  tokens.add(token);
}

function removeFromIndex(index: Map<string, Set<string>>, key: string, token: string): void {
  const tokens = index.get(key);
  if (tokens === undefined) return;
  tokens.delete(token);
  if (tokens.size === 0) index.delete(key);
}
