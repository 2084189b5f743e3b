/**
 * The WebDAV lock contract shared by the bridge and the storage layer (docs/scale-out.md "Bridge
 * state"): what a lock is, the LockRepository interface the bridge programs against, and the
 * pure decisions every implementation makes the same way (conflicts, budgets, a lock's weight).
 * bridge/locks.ts (LockStore) keeps the RFC 4918 rules that need no state (timeouts, token and
 * scope checks, §6.4's creator check); a repository keeps the locks, refuses a conflicting one
 * atomically, enforces the budgets and lets locks expire. No state and no I/O here.
 *
 * Two implementations, one contract suite (test/contract/lock-repository.ts):
 * - MemoryLockRepository (bridge/lock-repository.ts): one process, as fast as a Map; the
 *   embedded default over SQLite, and a bridge in front of a foreign store (`--only bridge`).
 * - SqlLockRepository (store/storage/dav-locks.ts): the `dav_locks` table of the storage layer,
 *   so every instance over one PostgreSQL database sees every lock.
 *
 * A lock is a lease: it expires at `expiresAtMs` by itself. Every read ignores expired locks;
 * they are swept now and then (every few hundred inserts, and whenever a budget looks full,
 * since the budgets count a lock until it is swept).
 */
export type LockScope = 'exclusive' | 'shared';
export type LockDepth = '0' | 'infinity';

export interface LockRequest {
  /** Id chain root..resource; the last id is locked. */
  readonly chain: readonly string[];
  /** Encoded href of the lock root as requested, for DAV:lockroot (RFC 4918 §14.12). */
  readonly rootHref: string;
  readonly scope: LockScope;
  readonly depth: LockDepth;
  /** The client's DAV:owner element, serialized verbatim; undefined when it sent none. */
  readonly ownerXml: string | undefined;
  /** Who took the lock (the bridge passes the store user id). */
  readonly principal: string;
  /** Requested timeout in seconds (from `parseTimeout`); capped at maxTimeoutSec. */
  readonly timeoutSec: number;
}

/** A granted lock: the request as granted (timeout capped) plus its token and expiry. */
export interface ActiveLock extends LockRequest {
  /** `opaquelocktoken:<uuid>` (RFC 4918 §20.1 scheme); the only proof of ownership. */
  readonly token: string;
  /** The locked resource (the lock root): the last id of `chain`. */
  readonly resourceId: string;
  readonly expiresAtMs: number;
}

export type LockErrorKind =
  | 'conflict'        // 423 + DAV:no-conflicting-lock (RFC 4918 §9.10.6)
  | 'no-such-lock'    // unknown or expired token: refresh 412, UNLOCK 409 (DAV:lock-token-matches-request-uri)
  | 'not-in-scope'    // the resource is not within the lock: refresh 412, UNLOCK 409 (§9.11.1)
  | 'not-owner'       // another principal's lock: 403 (§6.4)
  | 'too-many-locks'  // a budget is full: 503
  | 'owner-too-large' // DAV:owner bigger than allowed: 400
  | 'invalid-request';// empty chain, bad root: a bridge bug, 500

export class LockError extends Error {
  constructor(
    readonly kind: LockErrorKind,
    message: string,
    /** For 'conflict': the locks in the way (their rootHref goes into no-conflicting-lock). */
    readonly conflicts: readonly ActiveLock[] = [],
  ) {
    super(message);
    this.name = 'LockError';
  }
}

/** What the active locks may hold; a lock counts against them until it is swept. */
export interface LockBudgets {
  /** Locks kept at most, over all principals. Default 100 000. */
  maxLocks: number;
  /** Locks one principal may hold. Default 20 000 (davfs2 locks every file it writes). */
  maxLocksPerPrincipal: number;
  /**
   * What the locks may weigh together (lockBytes). Default 32 MiB: counts alone would let
   * 100,000 locks with 16 KiB owners hold 3 GiB.
   */
  maxBytes: number;
  /** What one principal's locks may weigh. Default a fifth of maxBytes, so nobody alone fills the budget. */
  maxBytesPerPrincipal: number;
}

export function lockBudgets(options: Partial<LockBudgets> = {}): LockBudgets {
  const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  return {
    maxLocks: options.maxLocks ?? 100_000,
    maxLocksPerPrincipal: options.maxLocksPerPrincipal ?? 20_000,
    maxBytes,
    maxBytesPerPrincipal: options.maxBytesPerPrincipal ?? Math.floor(maxBytes / 5),
  };
}

/** What refresh changes: the timeout, its expiry, and the chain when refreshed at the lock root. */
export interface LockRenewal {
  readonly timeoutSec: number;
  readonly expiresAtMs: number;
  readonly chain: readonly string[];
}

/**
 * The lock state. Every read takes `nowMs` and returns only locks with `expiresAtMs > nowMs`.
 * Methods throw only LockError (as documented) or a storage error (the request fails with 5xx,
 * or 503 when the database is unavailable).
 */
export interface LockRepository {
  /** Locks rooted at `resource`. */
  active(resource: string, nowMs: number): Promise<ActiveLock[]>;
  /**
   * Locks whose scope includes the resource at the end of `chain`: rooted there, or
   * depth-infinity and rooted at an ancestor in `chain` (RFC 4918 §6.1).
   */
  covering(chain: readonly string[], nowMs: number): Promise<ActiveLock[]>;
  /** Locks rooted strictly below `id`, found through the chain each lock recorded. */
  below(id: string, nowMs: number): Promise<ActiveLock[]>;
  /** Locks rooted at a direct child of `parent` (by recorded chain): a Depth 1 PROPFIND's lockdiscovery. */
  childrenOf(parent: string, nowMs: number): Promise<ActiveLock[]>;
  get(token: string, nowMs: number): Promise<ActiveLock | undefined>;
  /**
   * Adds `lock` unless a conflicting lock is active (LockError 'conflict', with the locks in the
   * way) or a budget would be passed (LockError 'too-many-locks'): checked and inserted in one
   * step no other insert can come between, on any instance.
   */
  insert(lock: ActiveLock, nowMs: number): Promise<void>;
  /** Renews an active lock; undefined when it has expired or never was. */
  refresh(token: string, renewal: LockRenewal, nowMs: number): Promise<ActiveLock | undefined>;
  /** Removes a lock; undefined when there was none (expired locks count as none). */
  remove(token: string, nowMs: number): Promise<ActiveLock | undefined>;
  /** Removes the locks rooted at `id` and below it; returns the active ones removed. */
  removeWithin(id: string, nowMs: number): Promise<ActiveLock[]>;
  /** Deletes expired locks; returns how many. */
  sweep(nowMs: number): Promise<number>;
  /** How many locks are active (diagnostics and tests). */
  count(nowMs: number): Promise<number>;
}

/** Insert this many locks, then sweep the expired ones. */
export const SWEEP_EVERY_LOCKS = 256;

/**
 * The locks in the way of `lock` (RFC 4918 §9.10): an exclusive lock conflicts with any lock
 * covering the resource, a shared one with an exclusive one; a depth-infinity lock also with the
 * locks below. `covering` and `below` are the active locks the repository found.
 */
export function conflictsOf(lock: Pick<LockRequest, 'scope' | 'depth'>, covering: readonly ActiveLock[], below: readonly ActiveLock[]): ActiveLock[] {
  const inTheWay = lock.depth === 'infinity' ? [...covering, ...below] : [...covering];
  return lock.scope === 'exclusive' ? inTheWay : inTheWay.filter((l) => l.scope === 'exclusive');
}

/** The budget a new lock of `weight` would pass, or undefined. */
export function budgetPassed(
  budgets: LockBudgets,
  total: { locks: number; bytes: number },
  mine: { locks: number; bytes: number },
  weight: number,
): 'total' | 'principal' | undefined {
  if (total.locks + 1 > budgets.maxLocks || total.bytes + weight > budgets.maxBytes) return 'total';
  if (mine.locks + 1 > budgets.maxLocksPerPrincipal || mine.bytes + weight > budgets.maxBytesPerPrincipal) return 'principal';
  return undefined;
}

export function budgetError(passed: 'total' | 'principal'): LockError {
  return new LockError('too-many-locks', passed === 'total' ? 'too many active locks' : 'too many active locks for this user');
}

/**
 * What a lock weighs against the byte budgets, estimated as memory: its strings (two bytes a
 * character at most), the token, and the object and index slots around them. The storage-backed
 * repository charges the same, so a budget means the same thing in both.
 */
export function lockBytes(lock: Pick<ActiveLock, 'chain' | 'rootHref' | 'ownerXml'>): number {
  let chars = lock.rootHref.length + (lock.ownerXml?.length ?? 0);
  for (const id of lock.chain) chars += id.length;
  return 512 + 2 * chars + 160 * lock.chain.length;
}

/** The parent key recorded with a lock: the id before the resource in its chain ('' at the top). */
export function parentOf(chain: readonly string[]): string {
  return chain.length >= 2 ? (chain[chain.length - 2] as string) : '';
}

